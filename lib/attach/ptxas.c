/* SPDX-License-Identifier: MIT */
/*
 * XLA's kernels under egpu attach: `egpu attach` put libegpu's stand-in
 * ptxas first on the application's PATH (EGPU_PTXAS_REAL names the real
 * one); this serves it, so the PTX a JAX process assembles itself is
 * instrumented like a module the driver is given (docs/frameworks.md).
 */
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"
#include "core/target.h"

static egpu_ptxas_server *server;

static int instrument(void *user, const char *arch, const char *ptx,
		      size_t len, char **out, size_t *out_len)
{
	struct attach_load ld;

	(void)user;
	*out = NULL;
	agent_begin(ptx, len, ATTACH_VIA_PTXAS, &ld);
	if (!ld.ptx)
		return 0;
	if (target_sm(arch) == target_sm(agent_target()))
		*out = strdup(ld.ptx);
	if (*out)
		*out_len = strlen(*out);
	agent_end(&ld, *out != NULL, 0);
	return 0;
}

static void stop(void)
{
	unsetenv("EGPU_PTXAS_SOCKET");
	egpu_ptxas_server_stop(server);
	server = NULL;
}

/* Before main: XLA may compile before it loads anything. */
__attribute__((constructor)) static void serve(void)
{
	EGPU_OPTS(egpu_ptxas_server_opts, so, .instrument = instrument);
	const char *probe = getenv("EGPU_ATTACH");

	/* A child of a served process (the stand-in itself, which inherits
	 * LD_PRELOAD, or a worker) leaves the socket it inherited alone: its
	 * compiles are declined there and stay plain. */
	if (!probe || !*probe || !getenv("EGPU_PTXAS_REAL") || getenv("EGPU_PTXAS_SOCKET"))
		return;
	server = egpu_ptxas_server_start(NULL, &so);
	if (!server || setenv("EGPU_PTXAS_SOCKET", egpu_ptxas_server_socket(server), 1)) {
		fprintf(stderr, ATTACH_MSG "kernels assembled by the application's own ptxas stay plain: %s\n",
			egpu_errmsg());
		return;
	}
	/* registered before the agent's report, so it runs after it */
	atexit(stop);
}
