// SPDX-License-Identifier: MIT
/*
 * The application's own ptxas (XLA assembles its kernels with one) put
 * behind libegpu's stand-in: its directory first on PATH, the real one in
 * EGPU_PTXAS_REAL, for the attach agent to serve (docs/frameworks.md).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "egpu.h"

/* "ptxas" in a directory of PATH other than @skip, into @out. */
static bool ptxas_on_path(const char *skip, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *dirs, *dir, *save = NULL;
	bool found = false;

	if (!path || !(dirs = strdup(path)))
		return false;
	for (dir = strtok_r(dirs, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		if (!*dir || !strcmp(dir, skip))
			continue;
		found = (size_t)snprintf(out, len, "%s/ptxas", dir) < len &&
			!access(out, X_OK);
	}
	free(dirs);
	return found;
}

int ptxas_standin_env(void)
{
	const char *standin = egpu_ptxas_standin_dir(), *path = getenv("PATH");
	const char *cuda = getenv("CUDA_HOME");
	char real[PATH_MAX], *new_path;
	int err;

	if (!standin)
		return 0; /* not installed: the application's ptxas stays its own */
	if (!ptxas_on_path(standin, real, sizeof(real)) &&
	    ((size_t)snprintf(real, sizeof(real), "%s/bin/ptxas", cuda ? cuda : "/usr/local/cuda") >=
		     sizeof(real) || access(real, X_OK)))
		return 0; /* no ptxas at all: the application brings none either */
	if (asprintf(&new_path, "%s:%s", standin, path ? path : "") < 0)
		return -1;
	err = setenv("EGPU_PTXAS_REAL", real, 0) || setenv("PATH", new_path, 1);
	free(new_path);
	return err;
}
