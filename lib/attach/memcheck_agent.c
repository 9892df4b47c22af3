/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck in the agent (docs/memcheck.md): the check enabled in the
 * agent's libegpu context over the allocation table's buffers
 * (memcheck_dev.c), the sites named from each instrumentation's report,
 * the log of each site's first bad access drained into the report while
 * the application runs and at exit, and then the report (text, or JSON
 * with EGPU_ATTACH_JSON=1), its last line the error count.
 * EGPU_MEMCHECK_CONTAIN=1: bad accesses are skipped (loads give 0).
 * EGPU_MEMCHECK_MAX=N: at most N sites printed (default 20).
 */
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"
#include "attach/memcheck_agent.h"
#include "memcheck/memcheck_collect.h"
#include "memcheck/memcheck_dev.h"
#include "attach/memcheck_hook.h"
#include "memcheck/memcheck_names.h"
#include "memcheck/memcheck_report.h"
#include "core/core.h"
#include "cuda/cu.h"

#define MC_MSG "egpu memcheck: "

static struct mc_dev *dev;
static struct mc_report *report;
static struct mc_names names;   /* by site number */
static uint32_t drained;        /* log records taken */
static bool add_failed;
static bool start_failed;

static void where(void *user, const struct mc_violation *v, char *buf,
		  size_t n)
{
	struct mc_table *t = memcheck_table();

	(void)user;
	buf[0] = '\0';
	if (t)
		mc_table_describe(t, v->addr, v->size, buf, n);
}

static bool env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/* EGPU_MEMCHECK_MAX, or 0 (the report's default) when unset or bad. */
static uint32_t env_max(void)
{
	const char *v = getenv("EGPU_MEMCHECK_MAX");
	char *end;
	unsigned long n;

	if (!v || !*v)
		return 0;
	n = strtoul(v, &end, 10);
	if (*end || !n || n > UINT32_MAX) {
		fprintf(stderr, MC_MSG "EGPU_MEMCHECK_MAX=%s is not a count of sites; printing at most 20\n",
			v);
		return 0;
	}
	return (uint32_t)n;
}

int memcheck_agent_start(egpu_ctx *ctx)
{
	struct mc_report_opts ro = { .sz = sizeof(ro), .max_shown = env_max(),
				     .site = mc_names_site, .where = where,
				     .user = &names };
	EGPU_OPTS(egpu_memcheck_opts, o,
		  .contain = env_flag("EGPU_MEMCHECK_CONTAIN"));

	start_failed = true;
	if (!memcheck_start())
		return err_set(EGPU_ENODEV, "memcheck: no allocation table (above)");
	dev = memcheck_dev();
	o.index_cell = mc_dev_cell(dev);
	o.states = mc_dev_states(dev);
	o.counts = mc_dev_counts(dev);
	o.log = mc_dev_log(dev);
	o.hints = mc_dev_hints(dev);
	report = mc_report_new(&ro);
	if (!report)
		return -1;
	if (egpu_memcheck_enable(ctx, &o)) {
		mc_report_free(report);
		report = NULL;
		return -1;
	}
	start_failed = false;
	return 0;
}

void memcheck_agent_sites(const struct egpu_report *rep)
{
	if (report && mc_names_add(&names, rep))
		fprintf(stderr, MC_MSG "%s; it is reported by number\n",
			egpu_errmsg());
}

void memcheck_agent_poll(void)
{
	if (report && mc_collect_log(dev, report, &drained) && !add_failed) {
		add_failed = true;
		fprintf(stderr, MC_MSG "%s\n", egpu_errmsg());
	}
}

/* Each reported site's count of bad accesses, from the GPU; without it
 * (the context is gone) the report counts what the log held. */
static void read_counts(FILE *f)
{
	uint32_t lost = 0;

	if (!mc_collect_counts(dev, report, &lost) && lost)
		fprintf(f, MC_MSG "%u more sites went wrong; the log kept the first %u\n",
			lost, MC_LOG_CAP);
}

bool memcheck_agent_has_report(void)
{
	return report || start_failed;
}

void memcheck_agent_finish(FILE *f, bool json)
{
	bool was;
	char *text;

	if (!report) { /* no count: nothing was checked (said why then) */
		if (start_failed)
			fprintf(f, MC_MSG "nothing was checked: the check could not start\n");
		return;
	}
	was = agent_enter();
	cu()->cuCtxSynchronize(); /* kernels still running report first */
	agent_leave(was);
	memcheck_agent_poll();
	read_counts(f);
	text = mc_report_text(report, json);
	if (!text) {
		fprintf(f, MC_MSG "no memory for the report\n");
		return;
	}
	fputs(text, f);
	free(text);
}
