/* SPDX-License-Identifier: MIT */
/* egpu jit: print the PTX of a program, optionally with timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct jit_args {
	const char *sm;
	const char *path;
	const char *prog;
	bool raw;
	bool all;
	bool stats;
	bool kernel;
	int repeat;
	size_t ctx_len;
};

static int parse_args(int argc, char **argv, struct jit_args *a)
{
	for (int i = 1; i < argc; i++) {
		bool more = i + 1 < argc;

		if (!strcmp(argv[i], "--sm") && more)
			a->sm = argv[++i];
		else if (!strcmp(argv[i], "--prog") && more)
			a->prog = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && more)
			a->repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ctx-len") && more)
			a->ctx_len = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--raw"))
			a->raw = true;
		else if (!strcmp(argv[i], "--all"))
			a->all = true;
		else if (!strcmp(argv[i], "--stats"))
			a->stats = true;
		else if (!strcmp(argv[i], "--kernel"))
			a->kernel = true;
		else if (!strncmp(argv[i], "--", 2) || a->path)
			return cli_usage("jit: unexpected argument '%s'", argv[i]);
		else
			a->path = argv[i];
	}
	if (!a->raw == !a->path)
		return cli_usage("jit: give FILE.o or --raw (hex program on stdin)");
	if (a->all && (a->prog || a->raw))
		return cli_usage("jit: --all translates every program of FILE.o; no --prog or --raw with it");
	if (a->repeat < 1 || a->repeat > 10000)
		return cli_usage("jit: --repeat takes 1 to 10000");
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Translate @repeat times; print the last PTX and the median time. */
static int jit_print(egpu_prog *prog, const struct jit_args *a)
{
	double *ms = calloc((size_t)a->repeat, sizeof(*ms));
	char *ptx = NULL;
	size_t len = 0;
	int rc = 0;

	if (!ms)
		return cli_usage("out of memory");
	for (int i = 0; i < a->repeat && !rc; i++) {
		EGPU_OPTS(egpu_jit_opts, jo, .sm = a->sm, .kernel = a->kernel,
			  .ctx_len = a->ctx_len);

		free(ptx);
		ptx = NULL;
		if (egpu_prog_jit_ptx(prog, &jo, &ptx, &len))
			rc = cli_fail("translating to PTX");
		ms[i] = jo.jit_ms;
	}
	if (!rc) {
		fwrite(ptx, 1, len, stdout);
		qsort(ms, (size_t)a->repeat, sizeof(*ms), cmp_double);
		if (a->stats)
			fprintf(stderr, "prog %s: %zu instructions, jit %.3f ms (median of %d)\n",
				egpu_prog_name(prog), egpu_prog_insn_cnt(prog),
				ms[a->repeat / 2], a->repeat);
	}
	free(ptx);
	free(ms);
	return rc;
}

int cmd_jit(int argc, char **argv)
{
	/* Translation for inspection: maps at placeholder addresses. */
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	struct jit_args a = { .repeat = 1 };
	struct cli_prog cp;
	int rc, failed = 0;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	rc = cli_load(&cp, a.path, false, a.prog, EGPU_HELPERS_GPU, &co);
	if (rc)
		return rc;
	rc = a.prog || a.all ? 0 : cli_one_prog(&cp, "jit", a.path, " or give --all");
	if (!rc && !a.all)
		rc = jit_print(cp.prog, &a);
	/* --all goes on past a program that fails, and fails at the end. */
	for (egpu_prog *p = cp.prog; !rc && a.all && p;
	     p = egpu_obj_next_prog(cp.obj, p)) {
		printf("// egpu: prog %s\n", egpu_prog_name(p));
		fflush(stdout);
		failed |= jit_print(p, &a);
	}
	cli_unload(&cp);
	return rc ? rc : failed;
}
