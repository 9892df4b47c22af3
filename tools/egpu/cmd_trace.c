/* SPDX-License-Identifier: MIT */
/*
 * egpu trace [-o DIR] [--format perfetto|json] [--delay S] [--duration S]
 * [--pprof FILE] [--] CMD ARGS...: run CMD with libegpu_inject.so as its CUDA injection library
 * (CUDA_INJECTION64_PATH, no root needed). The library writes the trace
 * into DIR (the timeline as trace.perfetto-trace, or trace.json with
 * --format json; with --pprof a gzip'd pprof profile into FILE too) and
 * prints the summary when CMD exits; this command returns CMD's exit
 * status. --delay and --duration trace a window: from S seconds after
 * CUDA starts, for S seconds (written then); with --signal each SIGUSR1
 * to CMD opens a window or closes and writes the open one; --last keeps
 * only the trace's last S seconds (a flight recorder).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define INJECT_NAME "libegpu_inject.so"
#define USAGE "usage: egpu trace [-o DIR] [--format perfetto|json] " \
	"[--delay S] [--duration S | --signal] [--last S] [--pprof FILE] " \
	"[--] CMD [ARGS...]"

/* Create @dir if needed and put its absolute path in @abs. */
static int out_dir(const char *dir, char *abs)
{
	struct stat st;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "egpu trace: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "egpu trace: %s: not a folder\n", dir);
		return -1;
	}
	if (!realpath(dir, abs)) {
		fprintf(stderr, "egpu trace: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

struct traced {
	const char *inject, *dir, *pprof, *format, *delay, *duration, *last;
	bool by_signal;
};

static int set_trace_env(void *arg)
{
	const struct traced *t = arg;
	const char *other = getenv("CUDA_INJECTION64_PATH");
	char pid[32];

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (other)
		fprintf(stderr, "egpu trace: replacing CUDA_INJECTION64_PATH=%s\n",
			other);
	return setenv("CUDA_INJECTION64_PATH", t->inject, 1) ||
	       setenv("EGPU_TRACE_DIR", t->dir, 1) ||
	       setenv("EGPU_TRACE_PID", pid, 1) ||
	       setenv("EGPU_TRACE_FORMAT", t->format, 1) ||
	       (t->delay && setenv("EGPU_TRACE_DELAY", t->delay, 1)) ||
	       (t->duration && setenv("EGPU_TRACE_DURATION", t->duration, 1)) ||
	       (t->by_signal && setenv("EGPU_TRACE_SIGNAL", "1", 1)) ||
	       (t->last && setenv("EGPU_TRACE_LAST", t->last, 1)) ||
	       (t->pprof && setenv("EGPU_TRACE_PPROF", t->pprof, 1));
}

/* Whether a summary (summary.txt, or summary.PID.txt of another process
 * of the command) was written in @dir at or after @since. */
static bool trace_written(const char *dir, time_t since)
{
	char pattern[PATH_MAX + 16];
	bool found = false;
	struct stat st;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/summary*.txt", dir);
	if (glob(pattern, 0, NULL, &g))
		return false;
	for (size_t i = 0; i < g.gl_pathc && !found; i++)
		found = !stat(g.gl_pathv[i], &st) && st.st_mtime >= since;
	globfree(&g);
	return found;
}

/* Whether @s is a number of seconds from 0 to a day (what the library
 * takes). */
static bool seconds(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return *s && !*end && v >= 0 && v <= 86400;
}

int cmd_trace(int argc, char **argv)
{
	char inject[PATH_MAX], dir[PATH_MAX], pprof_abs[PATH_MAX];
	const char *out = "egpu-trace", *pprof = NULL, *format = "perfetto";
	const char *delay = NULL, *duration = NULL, *last = NULL;
	bool by_signal = false;
	time_t start;
	int i, rc;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "--pprof")) {
			if (++i == argc || !*argv[i])
				return cli_usage("trace: --pprof needs a file\n"
						 USAGE);
			pprof = argv[i];
			continue;
		}
		if (!strcmp(argv[i], "--delay") ||
		    !strcmp(argv[i], "--duration") ||
		    !strcmp(argv[i], "--last")) {
			const char **to = !strcmp(argv[i], "--delay") ? &delay :
				!strcmp(argv[i], "--last") ? &last : &duration;

			if (i + 1 == argc || !seconds(argv[i + 1]))
				return cli_usage("trace: %s takes seconds, 0 to "
						 "86400\n" USAGE, argv[i]);
			*to = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--signal")) {
			by_signal = true;
			continue;
		}
		if (!strcmp(argv[i], "--format")) {
			if (++i == argc || (strcmp(argv[i], "perfetto") &&
					    strcmp(argv[i], "json")))
				return cli_usage("trace: --format takes perfetto "
						 "or json\n" USAGE);
			format = argv[i];
			continue;
		}
		if (strcmp(argv[i], "-o"))
			return cli_usage("trace: unknown option '%s'\n" USAGE,
					 argv[i]);
		if (++i == argc || !*argv[i])
			return cli_usage("trace: -o needs a folder\n" USAGE);
		out = argv[i];
	}
	if (by_signal && (delay || duration))
		return cli_usage("trace: --signal opens and closes windows "
				 "itself: no --delay or --duration with it\n"
				 USAGE);
	if (i == argc)
		return cli_usage("trace: no command to run\n" USAGE);
	if (child_find_lib("trace", INJECT_NAME, "EGPU_INJECT_LIB", inject,
			   sizeof(inject)) || out_dir(out, dir))
		return 1;
	/* the command may change folders: give it an absolute path */
	if (pprof && pprof[0] != '/' && getcwd(pprof_abs, sizeof(pprof_abs)) &&
	    strlen(pprof_abs) + strlen(pprof) + 2 <= sizeof(pprof_abs)) {
		strcat(strcat(pprof_abs, "/"), pprof);
		pprof = pprof_abs;
	}
	fprintf(stderr, "egpu trace: running %s with CUDA tracing, files "
		"in %s\n", argv[i], dir);
	start = time(NULL);
	rc = child_run(argv + i, "trace", set_trace_env,
		       &(struct traced){ inject, dir, pprof, format, delay,
					 duration, last, by_signal });
	if (rc != 127 && !trace_written(dir, start))
		fprintf(stderr, "egpu trace: no trace written: %s made no "
			"CUDA call, or exited without running exit handlers\n",
			argv[i]);
	return rc;
}
