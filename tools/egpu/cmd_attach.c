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

#define USAGE "usage: egpu attach [--json] [--interval SEC] [-o FILE] [--metrics [HOST]:PORT [--metrics-spec SPEC]]\n" \
	"         [--events-out FILE|-] [--events-raw FILE] [--event-type MAP=TYPE]...\n" \
	"         [--set MAP[KEY]=VALUE]... [--set-file FILE.json] [--uprobe PROG=FUNCTION]...\n" \
	"         [--trace FILE] PROBE.o [--] CMD [ARGS...]"

struct attach_args {
	char lib[PATH_MAX];
	char probe[PATH_MAX];
	const char *out;
	const char *interval;
	const char *metrics; /* --metrics [HOST]:PORT: maps on /metrics */
	const char *metrics_spec; /* --metrics-spec MAP=KIND[/KEY],... */
	const char *events_out;   /* --events-out FILE: events there */
	const char *events_raw;   /* --events-raw FILE: records raw */
	const char *set_file;     /* --set-file FILE.json */
	char *event_types;        /* --event-type MAP=TYPE, joined by ',' */
	char *sets;               /* --set MAP[KEY]=VALUE, joined by '\n' */
	char uprobes[1024];       /* --uprobe PROG=FUNCTION,... */
	const char *trace;        /* --trace FILE: the probe's ring streamed there */
	bool json;
};

/* LD_PRELOAD=LIB[:what was there] and the EGPU_ATTACH* contract. */
static int set_attach_env(void *arg)
{
	const struct attach_args *a = arg;

	return child_preload(a->lib) ||
	       setenv("EGPU_ATTACH", a->probe, 1) ||
	       (a->out && setenv("EGPU_ATTACH_OUT", a->out, 1)) ||
	       (a->json && setenv("EGPU_ATTACH_JSON", "1", 1)) ||
	       (a->interval && setenv("EGPU_ATTACH_INTERVAL", a->interval, 1)) ||
	       (a->metrics && setenv("EGPU_ATTACH_METRICS", a->metrics, 1)) ||
	       (a->metrics_spec &&
		setenv("EGPU_ATTACH_METRICS_SPEC", a->metrics_spec, 1)) ||
	       (a->events_out && setenv("EGPU_ATTACH_EVENTS_OUT", a->events_out, 1)) ||
	       (a->events_raw && setenv("EGPU_ATTACH_EVENTS_RAW", a->events_raw, 1)) ||
	       (a->event_types && setenv("EGPU_ATTACH_EVENT_TYPES", a->event_types, 1)) ||
	       (a->sets && setenv("EGPU_ATTACH_SET", a->sets, 1)) ||
	       (a->set_file && setenv("EGPU_ATTACH_SET_FILE", a->set_file, 1)) ||
	       (*a->uprobes && setenv("EGPU_ATTACH_UPROBES", a->uprobes, 1)) ||
	       (a->trace && setenv("EGPU_ATTACH_TRACE", a->trace, 1)) ||
	       ptxas_standin_env();
}

/* Append @item to the list *@list, separated by @sep; false: no memory. */
static bool append(char **list, const char *item, char sep)
{
	size_t n = *list ? strlen(*list) : 0;
	char *l = realloc(*list, n + strlen(item) + 2);

	if (!l)
		return false;
	if (n)
		l[n++] = sep;
	strcpy(l + n, item);
	*list = l;
	return true;
}

/* Append @spec (PROG=FUNCTION) to a->uprobes; -1 if malformed. */
static int add_uprobe(struct attach_args *a, const char *spec)
{
	size_t n = strlen(a->uprobes);
	const char *eq = spec ? strchr(spec, '=') : NULL;

	if (!eq || eq == spec || !eq[1] || strchr(spec, ','))
		return -1;
	return snprintf(a->uprobes + n, sizeof(a->uprobes) - n, "%s%s",
			n ? "," : "", spec) >= (int)(sizeof(a->uprobes) - n) ? -1 : 0;
}

/* 0 when each PROG of @spec (PROG=FUNCTION,...) is a host probe of @obj. */
static int check_uprobes(egpu_obj *obj, const char *spec)
{
	for (const char *s = spec; *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
		char name[256];
		const egpu_prog *p;
		enum egpu_attach_point at;

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(s, "="), s);
		p = egpu_obj_prog(obj, name);
		at = egpu_prog_attach_point(p);
		if (!p || (at != EGPU_ATTACH_UPROBE && at != EGPU_ATTACH_URETPROBE)) {
			fprintf(stderr, "egpu attach: --uprobe %s: %s\n", name,
				p ? "not in a uprobe or uretprobe section" :
				    "no such program in the probe");
			return -1;
		}
	}
	return 0;
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
			if (!(a->out = cli_value(argc, argv, &i)))
				return cli_usage("attach: -o needs a file\n" USAGE);
		} else if (!strcmp(o, "--interval")) {
			a->interval = cli_value(argc, argv, &i);
			if (!a->interval || atof(a->interval) <= 0)
				return cli_usage("attach: --interval needs seconds > 0\n" USAGE);
		} else if (!strcmp(o, "--trace")) {
			if (!(a->trace = cli_value(argc, argv, &i)))
				return cli_usage("attach: --trace needs a file\n" USAGE);
		} else if (!strcmp(o, "--metrics")) {
			if (!(a->metrics = cli_value(argc, argv, &i)))
				return cli_usage("attach: --metrics needs [HOST]:PORT\n" USAGE);
		} else if (!strcmp(o, "--uprobe")) {
			if (add_uprobe(a, cli_value(argc, argv, &i)))
				return cli_usage("attach: --uprobe needs PROG=FUNCTION\n" USAGE);
		} else if (!strcmp(o, "--metrics-spec")) {
			if (!(a->metrics_spec = cli_value(argc, argv, &i)))
				return cli_usage("attach: --metrics-spec needs MAP=KIND[/KEY],...\n" USAGE);
		} else if (!strcmp(o, "--events-out")) {
			if (!(a->events_out = cli_value(argc, argv, &i)))
				return cli_usage("attach: --events-out needs a file (- for stdout)\n" USAGE);
		} else if (!strcmp(o, "--events-raw")) {
			if (!(a->events_raw = cli_value(argc, argv, &i)))
				return cli_usage("attach: --events-raw needs a file\n" USAGE);
		} else if (!strcmp(o, "--set-file")) {
			if (!(a->set_file = cli_value(argc, argv, &i)))
				return cli_usage("attach: --set-file needs a JSON file\n" USAGE);
		} else if (!strcmp(o, "--event-type") || !strcmp(o, "--set")) {
			bool set = o[2] == 's';
			const char *v = cli_value(argc, argv, &i);

			if (!v || (!set && (!strchr(v, '=') || strchr(v, ','))) ||
			    (set && (!strchr(v, '[') || strchr(v, '\n'))))
				return cli_usage(set ? "attach: --set needs MAP[KEY]=VALUE\n" USAGE :
						 "attach: --event-type needs MAP=TYPE\n" USAGE);
			if (!append(set ? &a->sets : &a->event_types, v, set ? '\n' : ','))
				return cli_usage("attach: out of memory\n");
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

/*
 * 0 when --set, --set-file and --event-type fit @obj: the same calls
 * the agent makes, on this process's copy of the maps, so that a bad
 * entry is refused before the command runs.
 */
static int check_events_and_seeds(egpu_obj *obj, const struct attach_args *a)
{
	char *sets = a->sets ? strdup(a->sets) : NULL, *line, *save = NULL;
	char *types = a->event_types ? strdup(a->event_types) : NULL;
	uint8_t *json = NULL;
	size_t len;
	int err = 0;

	if (a->set_file && !(json = read_path(a->set_file, &len)))
		err = 1;
	else if (json && egpu_obj_set_json(obj, (char *)json))
		err = cli_fail(a->set_file);
	for (line = sets ? strtok_r(sets, "\n", &save) : NULL; line && !err;
	     line = strtok_r(NULL, "\n", &save))
		err = egpu_obj_set(obj, line) ? cli_fail("--set") : 0;
	for (char *t = types ? strtok_r(types, ",", &save) : NULL; t && !err;
	     t = strtok_r(NULL, ",", &save)) {
		char *type = strchr(t, '=');

		*type++ = '\0';
		if (!egpu_obj_map(obj, t) || !egpu_obj_find_type(obj, type))
			err = cli_fail("--event-type");
	}
	free(types);
	free(sets);
	free(json);
	return err;
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

/*
 * Refuse a probe that will not load, a metrics spec that does not fit its
 * maps, --uprobe programs it lacks, or seeds and event types it cannot
 * take, before running anything.
 */
static int check_probe(const struct attach_args *a)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	egpu_obj *obj = ctx ? egpu_load(ctx, a->probe, NULL) : NULL;
	int rc;

	if (!obj || (a->metrics && check_metrics_spec(ctx, obj, a->metrics_spec)))
		rc = cli_fail(a->probe);
	else if (check_uprobes(obj, a->uprobes))
		rc = 1;
	else
		rc = check_events_and_seeds(obj, a);
	egpu_ctx_free(ctx);
	return rc;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_args a = { 0 };
	int cmd = 0, rc;

	rc = parse(argc, argv, &a, &cmd);
	if (rc < 0)
		rc = 0; /* --help */
	else if (!rc && !(rc = check_probe(&a)))
		rc = child_find_agent("attach", a.lib, sizeof(a.lib)) ? 1 :
		     child_run(argv + cmd, "attach", set_attach_env, &a);
	free(a.sets);
	free(a.event_types);
	return rc;
}
