/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck [--json] [--contain] [--max-reports N] [-o FILE] [--] CMD
 * ARGS...: run CMD with the attach agent preloaded and EGPU_MEMCHECK=1, so
 * that every memory access of every kernel it loads with PTX is checked
 * against the allocations live at that moment (docs/memcheck.md). The
 * agent writes its report at exit into a file of ours; this command prints
 * it (or copies it to FILE) and turns it into the exit status: CMD's when
 * CMD failed, else 1 when errors were found, 0 when none, 125 when there
 * was no report to read.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define USAGE "usage: egpu memcheck [--json] [--contain] [--max-reports N] [-o FILE] [--] CMD [ARGS...]"
#define MC_MSG "egpu memcheck: "
/* The exit status when nothing could be checked (no agent, no report). */
#define NOT_CHECKED 125

struct memcheck_args {
	char lib[PATH_MAX];
	char report[PATH_MAX]; /* the file the agent writes, ours */
	const char *out;       /* -o FILE; NULL: stderr */
	FILE *out_f;           /* -o FILE, opened before CMD runs */
	const char *max;       /* --max-reports N */
	bool json, contain;
};

/* Only memcheck: a probe or options from the caller's environment would
 * change what the agent writes. */
static int set_memcheck_env(void *arg)
{
	const struct memcheck_args *a = arg;

	return child_preload(a->lib) || unsetenv("EGPU_ATTACH") ||
	       setenv("EGPU_MEMCHECK", "1", 1) ||
	       setenv("EGPU_ATTACH_OUT", a->report, 1) ||
	       (a->json ? setenv("EGPU_ATTACH_JSON", "1", 1) :
			  unsetenv("EGPU_ATTACH_JSON")) ||
	       (a->contain ? setenv("EGPU_MEMCHECK_CONTAIN", "1", 1) :
			     unsetenv("EGPU_MEMCHECK_CONTAIN")) ||
	       (a->max ? setenv("EGPU_MEMCHECK_MAX", a->max, 1) :
			 unsetenv("EGPU_MEMCHECK_MAX"));
}

/* True when @s is a whole decimal number from 1 to UINT32_MAX. */
static bool count_ok(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	return *s >= '0' && *s <= '9' && !*end && !errno && v >= 1 &&
	       v <= UINT32_MAX;
}

/* 0, -1 after --help, else the exit status of a usage error. */
static int parse(int argc, char **argv, struct memcheck_args *a, int *cmd)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--"); i++) {
		const char *o = argv[i];

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			puts(USAGE);
			return -1;
		} else if (!strcmp(o, "--json")) {
			a->json = true;
		} else if (!strcmp(o, "--contain")) {
			a->contain = true;
		} else if (!strcmp(o, "-o")) {
			if (!(a->out = cli_value(argc, argv, &i)))
				return cli_usage("memcheck: -o needs a file\n" USAGE);
		} else if (!strcmp(o, "--max-reports")) {
			a->max = cli_value(argc, argv, &i);
			if (!a->max || !count_ok(a->max))
				return cli_usage("memcheck: --max-reports needs a count >= 1\n" USAGE);
		} else {
			return cli_usage("memcheck: unknown option '%s'\n" USAGE, o);
		}
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i == argc)
		return cli_usage("memcheck: no command to run\n" USAGE);
	*cmd = i;
	return 0;
}

/* A number written with thousands' commas ("1,024"), LLONG_MAX at most;
 * -1: none at @s. */
static long long commas_number(const char *s)
{
	long long n = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; (*s >= '0' && *s <= '9') || *s == ','; s++)
		if (*s != ',')
			n = n > (LLONG_MAX - 9) / 10 ? LLONG_MAX : n * 10 + (*s - '0');
	return n;
}

/* The errors a text report's line counts: its summary, "egpu memcheck: no
 * errors" or "egpu memcheck: 1,024 errors at 1 site"; -1: another line. */
static long long line_errors(const char *line)
{
	long long n;

	if (strncmp(line, MC_MSG, strlen(MC_MSG)))
		return -1;
	line += strlen(MC_MSG);
	if (!strncmp(line, "no errors", 9))
		return 0;
	n = commas_number(line);
	return n >= 0 && !strncmp(line + strspn(line, "0123456789,"), " error", 6)
		       ? n : -1;
}

/*
 * The errors the report counts: JSON's "errors" (the last, should the
 * file hold more than the report's object; a JSON string cannot hold it
 * unescaped), or the text's last summary line. -1: no summary.
 */
static long long report_errors(const char *text, bool json)
{
	const char *key = "\"errors\":", *at = NULL;
	long long n = -1;

	if (json) {
		for (const char *p = text; (p = strstr(p, key)); p++)
			at = p;
		return at ? commas_number(at + strlen(key) + strspn(at + strlen(key), " ")) : -1;
	}
	for (const char *l = text; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		long long v = line_errors(l);

		n = v >= 0 ? v : n;
	}
	return n;
}

/* Why there is no report, on stderr. */
static void no_report(const char *cmd, int rc, bool empty)
{
	if (!empty)
		fprintf(stderr, MC_MSG "the agent's report from %s has no summary\n",
			cmd);
	else if (rc > 128)
		fprintf(stderr, MC_MSG "no report: %s was killed by signal %d before its exit handlers ran\n",
			cmd, rc - 128);
	else
		fprintf(stderr, MC_MSG "no report: the agent in %s wrote none (it loaded no CUDA module, or the agent could not start: see its messages above)\n",
			cmd);
}

/* @text to a->out (opened before the run) or stderr; false: not written. */
static bool put_report(struct memcheck_args *a, const char *text)
{
	FILE *f = a->out_f ? a->out_f : stderr;
	bool ok = fputs(text, f) >= 0;

	if (a->out_f) {
		ok = !fclose(a->out_f) && ok;
		a->out_f = NULL;
	}
	if (!ok)
		fprintf(stderr, MC_MSG "%s: %s\n", a->out, strerror(errno));
	return ok;
}

/*
 * The exit status from CMD's (@rc) and the agent's report: CMD's when it
 * failed, else 1 with errors, 0 without, NOT_CHECKED with no report or
 * when -o FILE could not take it.
 */
static int verdict(struct memcheck_args *a, const char *cmd, int rc)
{
	size_t len = 0;
	char *text = (char *)read_path(a->report, &len);
	long long errors = len ? report_errors(text, a->json) : -1;
	bool put = len ? put_report(a, text) : true;

	free(text);
	if (errors < 0)
		no_report(cmd, rc, !len);
	if (rc)
		return rc;
	return !put || errors < 0 ? NOT_CHECKED : errors > 0;
}

/* A file for the agent's report: $TMPDIR (when absolute) or /tmp. */
static int make_report_file(struct memcheck_args *a)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	if (!dir || dir[0] != '/')
		dir = "/tmp";
	snprintf(a->report, sizeof(a->report), "%s/egpu-memcheck-XXXXXX", dir);
	fd = mkstemp(a->report);
	if (fd < 0) {
		fprintf(stderr, MC_MSG "%s: %s\n", a->report, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int cmd_memcheck(int argc, char **argv)
{
	struct memcheck_args a = { 0 };
	int cmd = 0, rc;

	rc = parse(argc, argv, &a, &cmd);
	if (rc)
		return rc < 0 ? 0 : rc; /* -1: --help */
	if (a.out && !(a.out_f = fopen(a.out, "we"))) {
		fprintf(stderr, MC_MSG "%s: %s\n", a.out, strerror(errno));
		return NOT_CHECKED;
	}
	if (child_find_agent("memcheck", a.lib, sizeof(a.lib)) ||
	    make_report_file(&a)) {
		if (a.out_f)
			fclose(a.out_f);
		return NOT_CHECKED;
	}
	rc = child_run(argv + cmd, "memcheck", set_memcheck_env, &a);
	rc = verdict(&a, argv[cmd], rc);
	if (a.out_f)
		fclose(a.out_f); /* no report: FILE stays empty */
	unlink(a.report);
	return rc;
}
