/* SPDX-License-Identifier: MIT */
/* egpu inspect: what an object holds. */
#include <stdio.h>

#include "cli.h"

int cmd_inspect(int argc, char **argv)
{
	egpu_ctx *ctx;
	egpu_obj *obj;

	if (argc != 2)
		return cli_usage("inspect: give one FILE.o");
	ctx = egpu_ctx_new(NULL);
	if (!ctx)
		return cli_fail("creating a context");
	obj = egpu_load(ctx, argv[1], NULL);
	if (!obj) {
		egpu_ctx_free(ctx);
		return cli_fail("loading the object");
	}
	printf("programs:\n  %-24s %-32s %-6s %-24s %s\n", "NAME", "SECTION",
	       "ATTACH", "KERNEL", "INSNS");
	for (egpu_prog *p = egpu_obj_next_prog(obj, NULL); p;
	     p = egpu_obj_next_prog(obj, p))
		printf("  %-24s %-32s %-6s %-24s %zu\n", egpu_prog_name(p),
		       egpu_prog_section(p),
		       egpu_attach_point_str(egpu_prog_attach_point(p)),
		       egpu_prog_kernel(p), egpu_prog_insn_cnt(p));
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
