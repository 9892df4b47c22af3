/* SPDX-License-Identifier: MIT */
/* Loading the program a subcommand works on. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static egpu_obj *load_stdin_hex(egpu_ctx *ctx, bool elf,
				const struct egpu_load_opts *opts)
{
	char *text = read_stdin();
	egpu_obj *obj = NULL;
	uint8_t *bytes;
	size_t len;

	if (!text)
		return NULL;
	if (!hex_decode(text, &bytes, &len)) {
		obj = elf ? egpu_load_mem(ctx, bytes, len, opts) :
			    egpu_load_insns(ctx, bytes, len, opts);
		free(bytes);
		if (!obj)
			cli_fail("loading the program");
	}
	free(text);
	return obj;
}

int cli_load(struct cli_prog *cp, const char *path, bool elf,
	     const char *name, enum egpu_helper_abi abi,
	     const struct egpu_ctx_opts *co)
{
	EGPU_OPTS(egpu_load_opts, opts, .helpers = abi);

	*cp = (struct cli_prog){ .ctx = egpu_ctx_new(co) };
	if (!cp->ctx)
		return cli_fail("creating a context");
	if (path) {
		cp->obj = egpu_load(cp->ctx, path, &opts);
		if (!cp->obj)
			cli_fail("loading the object");
	} else {
		cp->obj = load_stdin_hex(cp->ctx, elf, &opts);
	}
	if (cp->obj)
		cp->prog = name ? egpu_obj_prog(cp->obj, name) :
				  egpu_obj_next_prog(cp->obj, NULL);
	if (cp->obj && !cp->prog) {
		if (name)
			cli_fail("choosing the program");
		else
			cli_usage("the object holds no program");
	}
	if (cp->prog)
		return 0;
	cli_unload(cp);
	return 1;
}

int cli_one_prog(const struct cli_prog *cp, const char *cmd,
		 const char *path, const char *or_else)
{
	if (!egpu_obj_next_prog(cp->obj, cp->prog))
		return 0;
	fprintf(stderr, "egpu: %s: %s holds several programs; choose one with --prog NAME%s:\n",
		cmd, path, or_else);
	for (egpu_prog *p = cp->prog; p; p = egpu_obj_next_prog(cp->obj, p))
		fprintf(stderr, "  %s\n", egpu_prog_name(p));
	return 2;
}

void cli_unload(struct cli_prog *cp)
{
	egpu_ctx_free(cp->ctx);
	*cp = (struct cli_prog){ 0 };
}
