/* SPDX-License-Identifier: MIT */
/*
 * Running a command with one of libegpu's libraries injected (egpu trace,
 * egpu attach, egpu memcheck): finding the library, preloading it, and the
 * fork/exec/wait that passes ^C to the command and returns its exit status.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

int child_find_lib(const char *tool, const char *name, const char *env_var,
		   char *out, size_t len)
{
	const char *env = getenv(env_var);
	char exe[PATH_MAX];
	ssize_t n;
	char *dir;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		if (!access(out, R_OK))
			return 0;
		fprintf(stderr, "egpu %s: %s=%s: %s\n", tool, env_var, env,
			strerror(errno));
		return -1;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		fprintf(stderr, "egpu %s: /proc/self/exe: %s\n", tool,
			strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	dir = dirname(exe);
	snprintf(out, len, "%s/%s", dir, name);
	if (!access(out, R_OK))
		return 0;
	snprintf(out, len, "%s/" EGPU_LIBDIR_FROM_BIN "/%s", dir, name);
	if (!access(out, R_OK))
		return 0;
	fprintf(stderr, "egpu %s: %s not found next to %s or in %s/"
		EGPU_LIBDIR_FROM_BIN "; set %s\n", tool, name, dir, dir, env_var);
	return -1;
}

int child_find_agent(const char *tool, char *out, size_t len)
{
	return child_find_lib(tool, "libegpu_attach.so", "EGPU_ATTACH_LIB", out,
			      len);
}

int child_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char preload[2 * PATH_MAX];

	snprintf(preload, sizeof(preload), "%s%s%s", lib,
		 old && *old ? ":" : "", old ? old : "");
	return setenv("LD_PRELOAD", preload, 1);
}

int child_run(char **cmd, const char *tool, int (*setup)(void *), void *arg)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	int status;
	pid_t pid;

	/* ^C goes to the command; its exit handlers write what it saw */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		if (setup(arg)) {
			fprintf(stderr, "egpu %s: setenv: %s\n", tool, strerror(errno));
			_exit(127);
		}
		execvp(cmd[0], cmd);
		fprintf(stderr, "egpu %s: %s: %s\n", tool, cmd[0], strerror(errno));
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (pid < 0) {
		fprintf(stderr, "egpu %s: fork: %s\n", tool, strerror(errno));
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
