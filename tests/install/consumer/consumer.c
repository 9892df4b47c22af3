// SPDX-License-Identifier: MIT
/* A program outside the tree: load an object, print its programs. */
#include <stdio.h>

#include <egpu.h>

int main(int argc, char **argv)
{
	egpu_ctx *ctx = egpu_ctx_new(NULL);
	egpu_obj *obj;
	int n = 0;

	if (argc != 2 || !ctx)
		return 2;
	obj = egpu_load(ctx, argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "consumer: %s\n", egpu_errmsg());
		return 1;
	}
	for (egpu_prog *p = egpu_obj_next_prog(obj, NULL); p;
	     p = egpu_obj_next_prog(obj, p), n++)
		printf("%s\n", egpu_prog_name(p));
	egpu_ctx_free(ctx);
	printf("libegpu %s: %d programs\n", egpu_version(), n);
	return n ? 0 : 1;
}
