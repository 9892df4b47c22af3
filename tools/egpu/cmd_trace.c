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
 * only the trace's last S seconds (a flight recorder). Otherwise the
 * Perfetto timeline is streamed while CMD runs; --max-size SIZE stops it
 * at SIZE bytes (K, M, G: KiB, MiB, GiB), or with --rotate N keeps the
 * last N files of about SIZE (trace.perfetto-trace the newest, then
 * trace.1.perfetto-trace, ...).
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
	"[--delay S] [--duration S | --signal] [--last S] " \
	"[--max-size SIZE [--rotate N]] [--pprof FILE] [--] CMD [ARGS...]"
#define MIN_SIZE (64ull << 10)
#define MAX_FILES 1000

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
	const char *max_size, *rotate;   /* as the library takes them */
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
	       (t->max_size && setenv("EGPU_TRACE_MAX_SIZE", t->max_size, 1)) ||
	       (t->rotate && setenv("EGPU_TRACE_ROTATE", t->rotate, 1)) ||
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

/* "100M" in bytes as decimal text into @out; false unless a number
 * with an optional K, M or G (binary) of at least MIN_SIZE. */
static bool size_arg(const char *s, char *out, size_t len)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	const char *units = "KMG", *u = *end ? strchr(units, *end) : NULL;

	if (end == s || *s == '-' || (*end && (!u || end[1])))
		return false;
	for (long i = u ? u - units + 1 : 0; i > 0; i--) {
		if (v > ULLONG_MAX / 1024)
			return false;
		v *= 1024;
	}
	snprintf(out, len, "%llu", v);
	return v >= MIN_SIZE;
}

/* "N" files to keep: 2 to MAX_FILES. */
static bool files_arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s && !*end && v >= 2 && v <= MAX_FILES;
}

/* What cannot go together; a message, or NULL. */
static const char *conflict(const struct traced *t)
{
	if (t->by_signal && (t->delay || t->duration))
		return "--signal opens and closes windows itself: no --delay "
		       "or --duration with it";
	if (t->rotate && !t->max_size)
		return "--rotate N rotates at --max-size: give it";
	if (t->max_size && t->last)
		return "--last holds the trace to write it at its end: no "
		       "--max-size with it";
	if (t->max_size && strcmp(t->format, "perfetto"))
		return "--max-size bounds the streamed Perfetto timeline, not "
		       "--format json";
	return NULL;
}

int cmd_trace(int argc, char **argv)
{
	char inject[PATH_MAX], dir[PATH_MAX], pprof_abs[PATH_MAX];
	const char *out = "egpu-trace", *pprof = NULL, *format = "perfetto";
	const char *delay = NULL, *duration = NULL, *last = NULL;
	const char *max_size = NULL, *rotate = NULL, *why;
	char size[32];
	bool by_signal = false;
	struct traced t;
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
		if (!strcmp(argv[i], "--max-size")) {
			if (++i == argc || !size_arg(argv[i], size,
						     sizeof(size)))
				return cli_usage("trace: --max-size takes bytes "
						 "(K, M, G: KiB, MiB, GiB), at "
						 "least 64K\n" USAGE);
			max_size = size;
			continue;
		}
		if (!strcmp(argv[i], "--rotate")) {
			if (++i == argc || !files_arg(argv[i]))
				return cli_usage("trace: --rotate takes the "
						 "files to keep, 2 to %d\n"
						 USAGE, MAX_FILES);
			rotate = argv[i];
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
	t = (struct traced){ NULL, NULL, pprof, format, delay, duration, last,
			     max_size, rotate, by_signal };
	if ((why = conflict(&t)))
		return cli_usage("trace: %s\n" USAGE, why);
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
	t.inject = inject;
	t.dir = dir;
	t.pprof = pprof;
	rc = child_run(argv + i, "trace", set_trace_env, &t);
	if (rc != 127 && !trace_written(dir, start))
		fprintf(stderr, "egpu trace: no trace written: %s made no "
			"CUDA call, or exited without running exit handlers\n",
			argv[i]);
	return rc;
}
