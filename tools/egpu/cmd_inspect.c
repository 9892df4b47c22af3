/* SPDX-License-Identifier: MIT */
/* egpu inspect: what an object holds. */
#include <stdio.h>

#include "cli.h"

/* One row; a refused program's reason on the line below it. */
static void print_prog(const egpu_prog *p)
{
	const char *why;
	int verdict = egpu_prog_verdict(p, &why);
	const char *word = verdict ? "refused" :
		egpu_prog_attach_point(p) == EGPU_ATTACH_NONE ? "-" : "accepted";

	printf("  %-24s %-32s %-6s %-24s %6zu %s\n", egpu_prog_name(p),
	       egpu_prog_section(p),
	       egpu_attach_point_str(egpu_prog_attach_point(p)),
	       egpu_prog_kernel(p), egpu_prog_insn_cnt(p), word);
	if (verdict)
		printf("    %s\n", why);
}

int cmd_inspect(int argc, char **argv)
{
	egpu_ctx *ctx;
	egpu_obj *obj;

	if (argc != 2)
		return cli_usage("inspect: give one FILE.o");
	/* Refusals are in the table; no warning on stderr as well. */
	EGPU_OPTS(egpu_ctx_opts, co, .log_level = EGPU_LOG_ERROR);

	ctx = egpu_ctx_new(&co);
	if (!ctx)
		return cli_fail("creating a context");
	obj = egpu_load(ctx, argv[1], NULL);
	if (!obj) {
		egpu_ctx_free(ctx);
		return cli_fail("loading the object");
	}
	printf("programs:\n  %-24s %-32s %-6s %-24s %6s %s\n", "NAME", "SECTION",
	       "ATTACH", "KERNEL", "INSNS", "VERDICT");
	for (egpu_prog *p = egpu_obj_next_prog(obj, NULL); p;
	     p = egpu_obj_next_prog(obj, p))
		print_prog(p);
	printf("maps:\n  %-24s %-16s %6s %6s %8s\n", "NAME", "TYPE", "KEY",
	       "VALUE", "ENTRIES");
	for (egpu_map *m = egpu_obj_next_map(obj, NULL); m;
	     m = egpu_obj_next_map(obj, m))
		printf("  %-24s %-16s %6u %6u %8u\n", egpu_map_name(m),
		       egpu_map_type_str(egpu_map_type(m)), egpu_map_key_size(m),
		       egpu_map_value_size(m), egpu_map_max_entries(m));
	egpu_ctx_free(ctx);
	return 0;
}
