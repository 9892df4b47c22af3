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
#include "attach/memcheck_dev.h"
#include "attach/memcheck_hook.h"
#include "attach/memcheck_report.h"
#include "core/core.h"
#include "cuda/cu.h"

#define MC_MSG "egpu memcheck: "

/* What the report says of a site. */
struct site_name {
	char *kernel;
	char *file; /* NULL: line is the PTX's */
	uint32_t line;
};

static struct mc_dev *dev;
static struct mc_report *report;
static struct site_name *names; /* by site number */
static size_t nnames;
static uint32_t drained;        /* log records taken */
static bool add_failed;
static bool start_failed;

static bool site_of(void *user, uint32_t site, struct mc_site *out)
{
	(void)user;
	if (site >= nnames || !names[site].kernel)
		return false;
	*out = (struct mc_site){ names[site].kernel, names[site].file,
				 names[site].line };
	return true;
}

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
				     .site = site_of, .where = where };
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

/* The kernel a site reports: its kernel's demangled name, or for a .func
 * several kernels reach, the .func's. */
static const char *kernel_of(const struct egpu_report *rep,
			     const struct egpu_mem_site *s)
{
	for (uint32_t k = 0; k < rep->kernel_cnt; k++)
		if (rep->kernels[k].kernel_id == s->kernel_id)
			return rep->kernels[k].demangled;
	return s->function;
}

static bool name_site(const struct egpu_report *rep,
		      const struct egpu_mem_site *s)
{
	struct site_name *n;

	if (s->site >= nnames) {
		size_t cap = s->site + 1 > 2 * nnames ? s->site + 1 : 2 * nnames;

		n = realloc(names, cap * sizeof(*n));
		if (!n)
			return false;
		memset(n + nnames, 0, (cap - nnames) * sizeof(*n));
		names = n;
		nnames = cap;
	}
	n = &names[s->site];
	if (n->kernel)
		return true; /* the same module again */
	n->kernel = strdup(kernel_of(rep, s));
	n->file = s->file && s->line ? strdup(s->file) : NULL;
	n->line = s->file && s->line ? s->line : s->ptx_line;
	return n->kernel && (n->file || !(s->file && s->line));
}

void memcheck_agent_sites(const struct egpu_report *rep)
{
	for (uint32_t i = 0; report && i < rep->mem_site_cnt; i++)
		if (!name_site(rep, &rep->mem_sites[i])) {
			fprintf(stderr, MC_MSG "no memory to name site %u; it is reported by number\n",
				rep->mem_sites[i].site);
			return;
		}
}

void memcheck_agent_poll(void)
{
	const struct mc_log_rec *log = report ? mc_dev_log_host(dev) : NULL;

	while (log && drained < MC_LOG_CAP &&
	       __atomic_load_n(&log[drained].ready, __ATOMIC_ACQUIRE)) {
		if (mc_report_add(report, &log[drained].v) && !add_failed) {
			add_failed = true;
			fprintf(stderr, MC_MSG "%s\n", egpu_errmsg());
		}
		drained++;
	}
}

/* Each reported site's count of bad accesses, from the GPU; without it
 * (the context is gone) the report counts what the log held. */
static void read_counts(FILE *f)
{
	uint32_t next = 0, count;

	for (size_t i = 0; i < mc_report_sites(report); i++) {
		uint32_t site = mc_report_site_at(report, i);

		if (mc_dev_site_count(dev, site, &count))
			return;
		mc_report_set_count(report, site, count);
	}
	if (!mc_dev_taken(dev, &next) && next > MC_LOG_CAP)
		fprintf(f, MC_MSG "%u more sites went wrong; the log kept the first %u\n",
			next - MC_LOG_CAP, MC_LOG_CAP);
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
