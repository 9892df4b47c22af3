/* SPDX-License-Identifier: MIT */
/*
 * egpu attach [OPTIONS] PROBE.o [--] CMD ARGS...: run CMD with
 * libegpu_attach.so preloaded and EGPU_ATTACH=PROBE.o, so that every
 * kernel it loads with PTX gets the probe's programs (docs/attach.md).
 * The library prints the maps (and what it instrumented, what it left
 * alone and the time it added) when CMD exits; this command returns CMD's
 * exit status.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define ATTACH_NAME "libegpu_attach.so"
#define USAGE "usage: egpu attach [--json] [--interval SEC] [-o FILE] [--metrics [HOST]:PORT [--metrics-spec SPEC]] [--trace FILE] PROBE.o [--] CMD [ARGS...]"

struct attach_args {
	char lib[PATH_MAX];
	char probe[PATH_MAX];
	const char *out;
	const char *interval;
	const char *metrics; /* --metrics [HOST]:PORT: maps on /metrics */
	const char *metrics_spec; /* --metrics-spec MAP=KIND[/KEY],... */
	const char *trace; /* --trace FILE: the probe's ring streamed there */
	bool json;
};

/* LD_PRELOAD=LIB[:what was there] and the EGPU_ATTACH* contract. */
static int set_attach_env(void *arg)
{
	const struct attach_args *a = arg;
	const char *old = getenv("LD_PRELOAD");
	char preload[2 * PATH_MAX];

	snprintf(preload, sizeof(preload), "%s%s%s", a->lib,
		 old && *old ? ":" : "", old ? old : "");
	return setenv("LD_PRELOAD", preload, 1) ||
	       setenv("EGPU_ATTACH", a->probe, 1) ||
	       (a->out && setenv("EGPU_ATTACH_OUT", a->out, 1)) ||
	       (a->json && setenv("EGPU_ATTACH_JSON", "1", 1)) ||
	       (a->interval && setenv("EGPU_ATTACH_INTERVAL", a->interval, 1)) ||
	       (a->metrics && setenv("EGPU_ATTACH_METRICS", a->metrics, 1)) ||
	       (a->metrics_spec &&
		setenv("EGPU_ATTACH_METRICS_SPEC", a->metrics_spec, 1)) ||
	       (a->trace && setenv("EGPU_ATTACH_TRACE", a->trace, 1));
}

/* The value of option argv[*i], or NULL (usage printed by the caller). */
static const char *value(int argc, char **argv, int *i)
{
	return ++*i < argc && *argv[*i] ? argv[*i] : NULL;
}

/* 0, -1 after --help, else the exit status of a usage error. */
static int parse(int argc, char **argv, struct attach_args *a, int *cmd)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			puts(USAGE);
			return -1;
		} else if (!strcmp(o, "--json")) {
			a->json = true;
		} else if (!strcmp(o, "-o")) {
			if (!(a->out = value(argc, argv, &i)))
				return cli_usage("attach: -o needs a file\n" USAGE);
		} else if (!strcmp(o, "--interval")) {
			a->interval = value(argc, argv, &i);
			if (!a->interval || atof(a->interval) <= 0)
				return cli_usage("attach: --interval needs seconds > 0\n" USAGE);
		} else if (!strcmp(o, "--trace")) {
			if (!(a->trace = value(argc, argv, &i)))
				return cli_usage("attach: --trace needs a file\n" USAGE);
		} else if (!strcmp(o, "--metrics")) {
			if (!(a->metrics = value(argc, argv, &i)))
				return cli_usage("attach: --metrics needs [HOST]:PORT\n" USAGE);
		} else if (!strcmp(o, "--metrics-spec")) {
			if (!(a->metrics_spec = value(argc, argv, &i)))
				return cli_usage("attach: --metrics-spec needs MAP=KIND[/KEY],...\n" USAGE);
		} else {
			return cli_usage("attach: unknown option '%s'\n" USAGE, o);
		}
	}
	if (i == argc)
		return cli_usage("attach: no probe\n" USAGE);
	if (!realpath(argv[i], a->probe)) {
		fprintf(stderr, "egpu attach: %s: cannot read\n", argv[i]);
		return 1;
	}
	if (++i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i == argc)
		return cli_usage("attach: no command to run\n" USAGE);
	if (a->metrics_spec && !a->metrics)
		return cli_usage("attach: --metrics-spec needs --metrics\n" USAGE);
	*cmd = i;
	return 0;
}

/* 0 when @spec (NULL: none) names kinds and keys @obj's maps can take. */
static int check_metrics_spec(egpu_ctx *ctx, egpu_obj *obj, const char *spec)
{
	EGPU_OPTS(egpu_metrics_opts, mo, .objs = &obj, .obj_cnt = 1,
		  .spec = spec);
	egpu_metrics *m = egpu_metrics_new(ctx, &mo);

	egpu_metrics_free(m);
	return m ? 0 : -1;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_args a = { 0 };
	egpu_ctx *ctx;
	egpu_obj *obj;
	int cmd = 0, rc;

	rc = parse(argc, argv, &a, &cmd);
	if (rc)
		return rc < 0 ? 0 : rc; /* -1: --help */
	/* refuse a probe that will not load, or a metrics spec that does not
	 * fit its maps, before running anything */
	ctx = egpu_ctx_new(NULL);
	obj = ctx ? egpu_load(ctx, a.probe, NULL) : NULL;
	if (!obj || (a.metrics && check_metrics_spec(ctx, obj, a.metrics_spec))) {
		egpu_ctx_free(ctx);
		return cli_fail(a.probe);
	}
	egpu_ctx_free(ctx);
	if (child_find_lib("attach", ATTACH_NAME, "EGPU_ATTACH_LIB", a.lib,
			   sizeof(a.lib)))
		return 1;
	return child_run(argv + cmd, "attach", set_attach_env, &a);
}
