/* SPDX-License-Identifier: MIT */
/* egpu verify: what the verifier says of each program, and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct verify_args {
	const char *path;
	const char *prog;
	size_t ctx_len;
	int verbose;
	bool stats;
};

static int parse_args(int argc, char **argv, struct verify_args *a)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--prog") && i + 1 < argc)
			a->prog = argv[++i];
		else if (!strcmp(argv[i], "--ctx-len") && i + 1 < argc)
			a->ctx_len = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-v"))
			a->verbose = 1;
		else if (!strcmp(argv[i], "-vv"))
			a->verbose = 2;
		else if (!strcmp(argv[i], "--stats"))
			a->stats = true;
		else if (!strncmp(argv[i], "-", 1) || a->path)
			return cli_usage("verify: unexpected argument '%s'", argv[i]);
		else
			a->path = argv[i];
	}
	return a->path ? 0 : cli_usage("verify: give FILE.o");
}

/* Verify one program; print its report line (and log with -v). */
static int verify_one(egpu_prog *p, const struct verify_args *a)
{
	EGPU_OPTS(egpu_verify_opts, vo, .ctx_len = a->ctx_len, .verbose = a->verbose);
	int err = egpu_prog_verify(p, &vo);
	const char *log = vo.log ? vo.log : "";
	const char *last = strrchr(log, '\n');

	/* The log ends with the report line; -v shows all of it. */
	if (a->verbose || !last)
		fputs(log, stdout);
	else
		fputs(last + 1 == log + strlen(log) ? log : last + 1, stdout);
	if (a->stats)
		printf("  %llu instructions processed, %llu states, %.3f ms\n",
		       (unsigned long long)vo.insns_processed,
		       (unsigned long long)vo.states, vo.verify_ms);
	free(vo.log);
	return err ? 1 : 0;
}

int cmd_verify(int argc, char **argv)
{
	struct verify_args a = { 0 };
	struct cli_prog cp;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	/* Loading verifies probes already, quietly: verify_one() prints the
	 * account, once, at the verbosity asked for. */
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true,
		  .log_level = EGPU_LOG_ERROR);

	rc = cli_load(&cp, a.path, false, a.prog, EGPU_HELPERS_GPU, &co);
	if (rc)
		return rc;
	if (a.prog) {
		rc = verify_one(cp.prog, &a);
	} else {
		for (egpu_prog *p = egpu_obj_next_prog(cp.obj, NULL); p;
		     p = egpu_obj_next_prog(cp.obj, p))
			rc |= verify_one(p, &a);
	}
	cli_unload(&cp);
	return rc;
}
