/* SPDX-License-Identifier: MIT */
/* egpu: inspect, translate and run eBPF programs for GPUs. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "run", cmd_run, "run [--backend cpu|gpu] [--elf] [--prog NAME] [MEMHEX]   program (hex) on stdin, prints r0" },
	{ "jit", cmd_jit, "jit [--sm SM] [--stats] [--repeat N] [--kernel] [--ctx-len N] (FILE.o [--prog NAME] | --raw)" },
	{ "verify", cmd_verify, "verify [-v|-vv] [--stats] [--ctx-len N] [--prog NAME] FILE.o   verifier verdicts" },
	{ "inspect", cmd_inspect, "inspect FILE.o                 list programs and maps" },
	{ "trace", cmd_trace, "trace [-o DIR] [--pprof FILE] [--] CMD [ARGS...]   run CMD, write its CUDA trace (CPU stacks -> GPU kernels) into DIR" },
	{ "attach", cmd_attach, "attach [--json] [--interval SEC] [-o FILE] [--metrics [HOST]:PORT [--metrics-spec SPEC]] PROBE.o [--] CMD [ARGS...]   run CMD with PROBE in every kernel it loads; maps at exit" },
	{ "instrument", cmd_instrument, "instrument [--sm SM] FILE.o IN.(ptx|fatbin) [-o OUT.ptx]   splice probes (maps at placeholders)" },
};

int cli_fail(const char *what)
{
	fprintf(stderr, "egpu: %s: %s\n", what, egpu_errmsg());
	return 1;
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("egpu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	return 2;
}

static int usage(FILE *f)
{
	fprintf(f, "usage: egpu COMMAND [ARGS]  (libegpu %s)\n", egpu_version());
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  egpu %s\n", commands[i].help);
	return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version")) {
		printf("egpu %s\n", egpu_version());
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "egpu: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
