/* SPDX-License-Identifier: MIT */
/*
 * egpu trace [-o DIR] [--] CMD ARGS...: run CMD with libegpu_inject.so as
 * its CUDA injection library (CUDA_INJECTION64_PATH, no root needed). The
 * library writes the trace into DIR and prints the summary when CMD exits;
 * this command returns CMD's exit status.
 */
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define INJECT_NAME "libegpu_inject.so"
#define USAGE "usage: egpu trace [-o DIR] [--] CMD [ARGS...]"

/*
 * The injection library: $EGPU_INJECT_LIB, else next to this program
 * (build tree), else in the library folder beside its bin folder.
 */
static int find_inject(char *out, size_t len)
{
	const char *env = getenv("EGPU_INJECT_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *dir;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		if (!access(out, R_OK))
			return 0;
		fprintf(stderr, "egpu trace: EGPU_INJECT_LIB=%s: %s\n", env,
			strerror(errno));
		return -1;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		fprintf(stderr, "egpu trace: /proc/self/exe: %s\n",
			strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	dir = dirname(exe);
	snprintf(out, len, "%s/" INJECT_NAME, dir);
	if (!access(out, R_OK))
		return 0;
	snprintf(out, len, "%s/" EGPU_LIBDIR_FROM_BIN "/" INJECT_NAME, dir);
	if (!access(out, R_OK))
		return 0;
	fprintf(stderr, "egpu trace: %s not found next to %s or in %s/"
		EGPU_LIBDIR_FROM_BIN " (libegpu built without CUPTI?); set "
		"EGPU_INJECT_LIB\n", INJECT_NAME, dir, dir);
	return -1;
}

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

static void exec_traced(char **cmd, const char *inject, const char *dir)
{
	const char *other = getenv("CUDA_INJECTION64_PATH");
	char pid[32];

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (other)
		fprintf(stderr, "egpu trace: replacing CUDA_INJECTION64_PATH=%s\n",
			other);
	if (setenv("CUDA_INJECTION64_PATH", inject, 1) ||
	    setenv("EGPU_TRACE_DIR", dir, 1) ||
	    setenv("EGPU_TRACE_PID", pid, 1)) {
		fprintf(stderr, "egpu trace: setenv: %s\n", strerror(errno));
		_exit(127);
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "egpu trace: %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

/* Run @cmd and return its exit status (128 + signal when killed). */
static int run_traced(char **cmd, const char *inject, const char *dir)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	int status;
	pid_t pid;

	/* ^C goes to the command; its trace is written as it exits */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		exec_traced(cmd, inject, dir);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (pid < 0) {
		fprintf(stderr, "egpu trace: fork: %s\n", strerror(errno));
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
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

int cmd_trace(int argc, char **argv)
{
	char inject[PATH_MAX], dir[PATH_MAX];
	const char *out = "egpu-trace";
	time_t start;
	int i, rc;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-o"))
			return cli_usage("trace: unknown option '%s'\n" USAGE,
					 argv[i]);
		if (++i == argc || !*argv[i])
			return cli_usage("trace: -o needs a folder\n" USAGE);
		out = argv[i];
	}
	if (i == argc)
		return cli_usage("trace: no command to run\n" USAGE);
	if (find_inject(inject, sizeof(inject)) || out_dir(out, dir))
		return 1;
	fprintf(stderr, "egpu trace: running %s with CUDA tracing, files "
		"in %s\n", argv[i], dir);
	start = time(NULL);
	rc = run_traced(argv + i, inject, dir);
	if (rc != 127 && !trace_written(dir, start))
		fprintf(stderr, "egpu trace: no trace written: %s made no "
			"CUDA call, or exited without running exit handlers\n",
			argv[i]);
	return rc;
}
