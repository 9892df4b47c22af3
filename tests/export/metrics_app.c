/* SPDX-License-Identifier: MIT */
/*
 * metrics_app OBJ LISTEN: the fleet fixture's maps served on LISTEN until
 * standard input closes (at most 120 s). Prints "port N" once serving.
 * What the Prometheus server test scrapes.
 */
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "fleet_fixture.h"

int main(int argc, char **argv)
{
	struct fleet f;
	egpu_metrics *m;
	char buf[64];

	if (argc != 3) {
		fprintf(stderr, "usage: metrics_app OBJ LISTEN\n");
		return 2;
	}
	if (fleet_open(&f, argv[1]))
		return 1;
	m = egpu_metrics_serve(f.ctx, &(struct egpu_metrics_opts){
		.sz = sizeof(struct egpu_metrics_opts), .objs = &f.obj,
		.obj_cnt = 1, .spec = FLEET_SPEC, .top_n = FLEET_TOP,
		.labels = FLEET_LABELS, .listen = argv[2] });
	if (!m || egpu_metrics_add_kernels(m, &f.report)) {
		fprintf(stderr, "metrics_app: %s\n", egpu_errmsg());
		fleet_close(&f);
		return 1;
	}
	printf("port %d\n", egpu_metrics_port(m));
	fflush(stdout);
	for (int waited = 0; waited < 120; waited++) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

		if (poll(&p, 1, 1000) > 0 && read(STDIN_FILENO, buf, sizeof(buf)) <= 0)
			break;
	}
	egpu_metrics_free(m);
	fleet_close(&f);
	return 0;
}
