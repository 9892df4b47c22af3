/* SPDX-License-Identifier: MIT */
/*
 * egpu instrument: splice an object's probes into a PTX module, for
 * inspection and for checking with ptxas. Maps get placeholder addresses:
 * the PTX to run comes from egpu_module_load() or egpu_instrument_ptx()
 * inside the application, where the maps live.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* How much of the report to print: -q, default, -v. */
enum report_level { REPORT_SUMMARY, REPORT_KERNELS, REPORT_SITES };

struct instrument_args {
	const char *obj;
	const char *ptx;
	const char *out;
	const char *sm;
	enum report_level report;
	bool no_inline;
	bool allow_none; /* exit 0 even when no kernel was patched */
	const char **progs; /* --prog NAMEs (argv entries); none: all */
	int prog_cnt;
	size_t mem_inline_limit;
};

/* BYTES with an optional K, M or G suffix, or "none" (no bound). */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!strcmp(s, "none")) {
		*out = SIZE_MAX;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (*end)
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : -1;
	if (shift < 0 || (*end && end[1]) || v == 0 || v > (SIZE_MAX >> shift))
		return -1;
	*out = (size_t)v << shift;
	return 0;
}

static int parse_args(int argc, char **argv, struct instrument_args *a)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			a->out = argv[++i];
		else if (!strcmp(argv[i], "--sm") && i + 1 < argc)
			a->sm = argv[++i];
		else if (!strcmp(argv[i], "--prog") && i + 1 < argc)
			a->progs[a->prog_cnt++] = argv[++i];
		else if (!strcmp(argv[i], "-q"))
			a->report = REPORT_SUMMARY;
		else if (!strcmp(argv[i], "-v"))
			a->report = REPORT_SITES;
		else if (!strcmp(argv[i], "--no-inline"))
			a->no_inline = true;
		else if (!strcmp(argv[i], "--allow-none"))
			a->allow_none = true;
		else if (!strcmp(argv[i], "--mem-inline-limit") && i + 1 < argc) {
			if (parse_size(argv[++i], &a->mem_inline_limit))
				return cli_usage("instrument: --mem-inline-limit takes BYTES (K, M, G suffixes) or 'none', not '%s'",
						 argv[i]);
		} else if (!strncmp(argv[i], "-", 1) || (a->obj && a->ptx))
			return cli_usage("instrument: unexpected argument '%s'", argv[i]);
		else if (!a->obj)
			a->obj = argv[i];
		else
			a->ptx = argv[i];
	}
	if (!a->obj || !a->ptx)
		return cli_usage("instrument: give FILE.o IN.(ptx|fatbin) [-o OUT.ptx]");
	return 0;
}

static void print_report(const struct egpu_report *r, enum report_level level)
{
	fprintf(stderr, "%u of %u kernels patched, %u entry and %u exit points, %u memory sites, %u programs, %.2f ms\n",
		r->kernels_patched, r->kernel_cnt, r->entry_points, r->exit_points,
		r->mem_site_cnt, r->programs, r->instrument_ms);
	if (r->mem_called)
		fprintf(stderr, "%u memory probes called past the copy limit (--mem-inline-limit)\n",
			r->mem_called);
	for (uint32_t i = 0; level >= REPORT_KERNELS && i < r->kernel_cnt; i++)
		fprintf(stderr, "  kernel %u %s: entry %u exit %u mem %u programs %u\n",
			r->kernels[i].kernel_id, r->kernels[i].demangled,
			r->kernels[i].entry_points, r->kernels[i].exit_points,
			r->kernels[i].mem_points, r->kernels[i].programs);
	for (uint32_t i = 0; level >= REPORT_SITES && i < r->mem_site_cnt; i++)
		fprintf(stderr, "  site %u %s line %u: %s\n", r->mem_sites[i].site,
			r->mem_sites[i].function, r->mem_sites[i].ptx_line,
			r->mem_sites[i].text);
}

static int write_out(const char *path, const char *text, size_t len)
{
	FILE *f = path ? fopen(path, "wb") : stdout;

	if (!f) {
		perror(path);
		return 1;
	}
	if (fwrite(text, 1, len, f) != len || (path && fclose(f))) {
		perror(path ? path : "stdout");
		return 1;
	}
	return 0;
}

/* The chosen programs, each where its section says. */
static int attach_chosen(egpu_obj *obj, const struct instrument_args *a)
{
	for (int i = 0; i < a->prog_cnt; i++) {
		egpu_prog *p = egpu_obj_prog(obj, a->progs[i]);

		if (!p)
			return cli_fail("--prog");
		if (egpu_prog_attach_point(p) == EGPU_ATTACH_NONE) {
			fprintf(stderr, "egpu: --prog %s: section '%s' names no attach point\n",
				a->progs[i], egpu_prog_section(p));
			return 1;
		}
		if (!egpu_attach_kernel(p, egpu_prog_kernel(p),
					egpu_prog_attach_point(p), NULL))
			return cli_fail(a->progs[i]);
	}
	return 0;
}

/*
 * No kernel patched (every program refused, or no pattern matched) is a
 * failure a script must see, unless asked for: the output is unchanged
 * PTX, written all the same.
 */
static int nothing_done(const struct egpu_report *r,
			const struct instrument_args *a)
{
	if (r->kernels_patched || a->allow_none)
		return 0;
	fprintf(stderr, "egpu: instrument: nothing instrumented: none of the module's %u kernels got a probe (the warnings above say why; --allow-none accepts it)\n",
		r->kernel_cnt);
	return 1;
}

static int instrument(egpu_ctx *ctx, const struct instrument_args *a)
{
	EGPU_OPTS(egpu_report, rep);
	egpu_obj *obj = egpu_load(ctx, a->obj, NULL);
	char *ptx, *out = NULL;
	size_t len, out_len;
	int rc;

	if (!obj)
		return cli_fail("loading the object");
	if (a->prog_cnt) {
		if (attach_chosen(obj, a))
			return 1;
	} else if (egpu_attach_all(obj) < 0) {
		return cli_fail("attaching");
	}
	ptx = (char *)read_path(a->ptx, &len);
	if (!ptx)
		return 1;
	rc = egpu_instrument_ptx(ctx, ptx, len, &out, &out_len, &rep);
	free(ptx);
	if (rc)
		return cli_fail(a->ptx);
	/* The output first: a report piped into `head` cannot lose it. */
	rc = write_out(a->out, out, out_len);
	free(out);
	if (!rc)
		print_report(&rep, a->report);
	return rc ? rc : nothing_done(&rep, a);
}

int cmd_instrument(int argc, char **argv)
{
	struct instrument_args a = { .report = REPORT_KERNELS };
	egpu_ctx *ctx;
	int rc;

	a.progs = calloc((size_t)argc, sizeof(*a.progs));
	if (!a.progs)
		return cli_usage("out of memory");
	rc = parse_args(argc, argv, &a);
	if (rc) {
		free(a.progs);
		return rc;
	}
	/* Warnings too, at every report level: a refused program skipped,
	 * a pattern that matches no kernel (also in egpu_report.warnings). */
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true, .sm = a.sm,
		  .no_inline = a.no_inline,
		  .mem_inline_limit = a.mem_inline_limit,
		  .log_level = EGPU_LOG_WARN);
	ctx = egpu_ctx_new(&co);
	rc = ctx ? instrument(ctx, &a) : cli_fail("creating a context");
	egpu_ctx_free(ctx);
	free(a.progs);
	return rc;
}
