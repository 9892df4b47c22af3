/* SPDX-License-Identifier: MIT */
/*
 * egpu run: run a program once on the CPU (or the GPU) and print r0.
 *
 * - From FILE.o: a program with GPU helpers, as one GPU thread (docs in
 *   lib/jit/host_helpers.c): a direct-run program (SEC("egpu/run")) with
 *   MEMHEX as its memory, or an entry or exit probe with --params HEX as
 *   its kernel's parameter bytes.
 * - Without FILE.o, the bpf_conformance runner's plugin protocol: the
 *   program as hex on stdin (--elf: an ELF object), the memory as hex in
 *   the argument, the suite's helpers (helper 5 returns its first
 *   argument).
 *
 * r1 points at a copy of the memory (NULL without one), r2 is its length.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

struct run_args {
	enum egpu_backend backend;
	bool elf;
	const char *prog;
	const char *path;     /* FILE.o, or NULL: the program on stdin */
	const char *mem_hex;
	const char *params_hex;
};

static bool is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* FILE.o first when a file of that name exists, then MEMHEX. */
static int positional(struct run_args *a, const char *arg)
{
	if (!a->path && !a->mem_hex && is_file(arg))
		a->path = arg;
	else if (!a->mem_hex)
		a->mem_hex = arg;
	else
		return cli_usage("run: unexpected argument '%s'", arg);
	return 0;
}

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
		} else if (!strcmp(argv[i], "--params") && i + 1 < argc) {
			a->params_hex = argv[++i];
		} else if (!strncmp(argv[i], "--", 2)) {
			return cli_usage("run: unknown option '%s'", argv[i]);
		} else if (positional(a, argv[i])) {
			return 2;
		}
	}
	if (a->path && a->elf)
		return cli_usage("run: --elf is for a program on stdin; FILE.o is read as an ELF object");
	return 0;
}

/* Decode @hex (may be NULL) into *@out, *@len; 0, or 1 saying @what. */
static int decode(const char *what, const char *hex, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (!hex || !hex_decode(hex, out, len))
		return 0;
	fprintf(stderr, "egpu: run: %s\n", what);
	return 1;
}

/* The memory and parameter bytes, decoded. */
struct run_bytes {
	uint8_t *mem, *params;
	size_t mem_len, params_len;
};

static int run(const struct cli_prog *cp, const struct run_args *a,
	       const struct run_bytes *b)
{
	EGPU_OPTS(egpu_run_opts, ro, .backend = a->backend,
		  .ctx = b->mem_len ? b->mem : NULL, .ctx_len = b->mem_len,
		  .params = b->params, .params_len = b->params_len);

	if (egpu_prog_run(cp->prog, &ro))
		return cli_fail("running the program");
	printf("0x%016" PRIx64 "\n", ro.retval);
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = { .backend = EGPU_BACKEND_CPU };
	struct run_bytes b = { 0 };
	struct cli_prog cp;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	/* Before the program is read (from stdin, perhaps). */
	rc = decode(a.path ? "MEMHEX is not hex" :
		    "the argument is neither an existing file nor hex memory",
		    a.mem_hex, &b.mem, &b.mem_len);
	if (!rc)
		rc = decode("--params is not hex", a.params_hex, &b.params,
			    &b.params_len);
	if (!rc)
		rc = cli_load(&cp, a.path, a.elf, a.prog,
			      a.path ? EGPU_HELPERS_GPU : EGPU_HELPERS_CONFORMANCE,
			      NULL);
	if (!rc) {
		if (a.path && !a.prog)
			rc = cli_one_prog(&cp, "run", a.path, "");
		if (!rc)
			rc = run(&cp, &a, &b);
		cli_unload(&cp);
	}
	free(b.mem);
	free(b.params);
	return rc;
}
