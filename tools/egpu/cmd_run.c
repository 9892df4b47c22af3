/* SPDX-License-Identifier: MIT */
/*
 * egpu run: the bpf_conformance runner's plugin protocol. The program comes
 * as hex on stdin, the memory as hex in the first argument; r1 points at a
 * copy of the memory (NULL without one), r2 is its length. Prints r0 in hex.
 * Helper 5 follows the suite's convention (returns its first argument).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct run_args {
	enum egpu_backend backend;
	bool elf;
	const char *prog;
	const char *mem_hex;
};

static int parse_args(int argc, char **argv, struct run_args *a)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
			const char *b = argv[++i];

			if (strcmp(b, "cpu") && strcmp(b, "gpu"))
				return cli_usage("run: --backend is cpu or gpu, not '%s'", b);
			a->backend = !strcmp(b, "gpu") ? EGPU_BACKEND_GPU : EGPU_BACKEND_CPU;
		} else if (!strcmp(argv[i], "--elf")) {
			a->elf = true;
		} else if (!strcmp(argv[i], "--prog") && i + 1 < argc) {
			a->prog = argv[++i];
		} else if (!strncmp(argv[i], "--", 2)) {
			return cli_usage("run: unknown option '%s'", argv[i]);
		} else if (!a->mem_hex) {
			a->mem_hex = argv[i];
		} else {
			return cli_usage("run: unexpected argument '%s'", argv[i]);
		}
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = { .backend = EGPU_BACKEND_CPU };
	EGPU_OPTS(egpu_run_opts, ro);
	uint8_t *mem = NULL;
	size_t mem_len = 0;
	struct cli_prog cp;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	if (a.mem_hex && hex_decode(a.mem_hex, &mem, &mem_len))
		return 1;
	rc = cli_load(&cp, NULL, a.elf, a.prog, EGPU_HELPERS_CONFORMANCE, NULL);
	if (!rc) {
		ro.backend = a.backend;
		ro.ctx = mem_len ? mem : NULL;
		ro.ctx_len = mem_len;
		if (egpu_prog_run(cp.prog, &ro))
			rc = cli_fail("running the program");
		else
			printf("0x%016" PRIx64 "\n", ro.retval);
		cli_unload(&cp);
	}
	free(mem);
	return rc;
}
