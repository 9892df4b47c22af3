/* SPDX-License-Identifier: MIT */
/* egpu: inspect, translate and run eBPF programs for GPUs. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	const char *details;
	/* Options come before a command of the user's, whose own
	 * arguments (--help included) are not ours. */
	bool runs_command;
} commands[] = {
	{ "run", cmd_run, "run [--backend cpu|gpu] [--prog NAME] [--params HEX] (FILE.o [MEMHEX] | [--elf] [MEMHEX] < PROG.hex)   run a program once, print r0",
	  "  FILE.o        the object (GPU helpers: the program runs as one GPU thread,\n"
	  "                thread/block/SM/warp/lane 0, clocks, maps, rings, printk)\n"
	  "  --prog NAME   the program to run; needed when FILE.o holds several\n"
	  "  MEMHEX        a direct-run program's memory: r1 points at it, r2 its length\n"
	  "  --params HEX  an entry or exit probe's kernel parameter bytes (ctx->params,\n"
	  "                bpf_egpu_read_param); CPU only\n"
	  "  --backend B   cpu (default) or gpu (direct-run programs)\n"
	  "  without FILE.o: the bpf_conformance plugin protocol: the program as hex\n"
	  "  on stdin (raw instructions, or --elf an ELF object), its helpers\n", false },
	{ "jit", cmd_jit, "jit [--sm SM] [--stats] [--repeat N] [--kernel] [--ctx-len N] (FILE.o [--prog NAME|--all] | --raw)",
	  "  --sm SM       PTX target (default sm_90; sm_30 to sm_121, a or f suffix)\n"
	  "  --prog NAME   the program to translate; needed when FILE.o holds several\n"
	  "  --all         translate every program, each after a '// egpu: prog NAME' line\n"
	  "  --raw         the program comes as hex instructions on stdin\n"
	  "  --kernel      also emit NAME_kernel, an .entry that runs it once\n"
	  "  --ctx-len N   the context's size, for the verifier's bounds\n"
	  "  --stats       print instruction count and translation time to stderr\n"
	  "  --repeat N    translate N times, report the median time\n", false },
	{ "verify", cmd_verify, "verify [-v|-vv] [--stats] [--ctx-len N] [--prog NAME] FILE.o   verifier verdicts",
	  "  -v, -vv       the verifier's log (-vv: every state)\n"
	  "  --stats       instructions processed, states, time\n"
	  "  --ctx-len N   the context's size\n"
	  "  --prog NAME   only this program (default: all)\n", false },
	{ "inspect", cmd_inspect, "inspect FILE.o                 list programs and maps", "", false },
	{ "trace", cmd_trace, "trace [-o DIR] [--format perfetto|json] [--delay S] [--duration S | --signal] [--last S] [--pprof FILE] [--] CMD [ARGS...]   run CMD, write its CUDA trace (CPU stacks -> GPU kernels) into DIR",
	  "  -o DIR        where the trace goes (default egpu-trace)\n"
	  "  --format F    the timeline: perfetto (trace.perfetto-trace, default)\n"
	  "                or json (trace.json, for small traces)\n"
	  "  --delay S     start tracing S seconds after the program's first CUDA call\n"
	  "  --duration S  stop after S seconds of tracing and write the trace then\n"
	  "  --signal      each SIGUSR1 to CMD opens a window or closes and writes\n"
	  "                the open one (files trace.wN.*)\n"
	  "  --last S      flight recorder: keep only the last S seconds (memory\n"
	  "                stays that of the window); written at exit or a crash\n"
	  "  --pprof FILE  also write a gzip'd pprof profile of GPU time by CPU stack\n", true },
	{ "attach", cmd_attach, "attach [--json] [--interval SEC] [-o FILE] [--metrics [HOST]:PORT [--metrics-spec SPEC]] PROBE.o [--] CMD [ARGS...]   run CMD with PROBE in every kernel it loads; maps at exit",
	  "  --json          print maps as JSON\n"
	  "  --interval SEC  also print maps every SEC seconds while CMD runs\n"
	  "  -o FILE         write the maps to FILE instead of stderr\n"
	  "  --metrics [HOST]:PORT  serve the maps as Prometheus metrics\n"
	  "  --metrics-spec SPEC    how maps read as metrics (docs/fleet.md)\n"
	  "  (docs/attach.md)\n", true },
	{ "memcheck", cmd_memcheck, "memcheck [--json] [--contain] [--max-reports N] [-o FILE] [--] CMD [ARGS...]   run CMD with every memory access of its kernels checked; exit 1 on errors",
	  "  --json             write the report as JSON\n"
	  "  --contain          a bad load gives 0 and a bad store is dropped, so CMD\n"
	  "                     runs on to find more\n"
	  "  --max-reports N    print at most N sites (default 20), count the rest\n"
	  "  -o FILE            write the report to FILE instead of stderr\n"
	  "  exit status: CMD's when it failed, else 1 when errors were found, 0 when\n"
	  "  none, 125 when nothing could be checked (no agent, no report)\n"
	  "  (docs/memcheck.md)\n", true },
	{ "instrument", cmd_instrument, "instrument [--sm SM] [-q|-v] [--no-inline] [--mem-inline-limit BYTES|none] [--prog NAME]... [--allow-none] FILE.o IN.(ptx|fatbin) [-o OUT.ptx]   splice probes (maps at placeholders)",
	  "  --sm SM       PTX target of the probes (default sm_90)\n"
	  "  -o OUT.ptx    where the PTX goes (default stdout); written before the report\n"
	  "  -q            report only the summary line\n"
	  "  -v            also report every memory site\n"
	  "  --no-inline   call the probes from their sites instead of copying them in\n"
	  "  --mem-inline-limit BYTES|none\n"
	  "                PTX bytes of memory-probe copies per module; past it the\n"
	  "                probe is called (K, M, G suffixes; default: the module's size,\n"
	  "                at least 16M)\n"
	  "  --prog NAME   attach only this program (repeatable; default: every one\n"
	  "                whose section names an attach point)\n"
	  "  --allow-none  exit 0 when no kernel was patched (every program refused,\n"
	  "                or no kernel matched); without it that exits 1\n", false },
};

#define COMMAND_CNT (sizeof(commands) / sizeof(commands[0]))

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

const char *cli_value(int argc, char **argv, int *i)
{
	return ++*i < argc && *argv[*i] ? argv[*i] : NULL;
}

static int usage(FILE *f)
{
	fprintf(f, "usage: egpu COMMAND [ARGS]  (libegpu %s)\n", egpu_version());
	for (size_t i = 0; i < COMMAND_CNT; i++)
		fprintf(f, "  egpu %s\n", commands[i].usage);
	fputs("egpu COMMAND --help: the command's options\n", f);
	return f == stdout ? 0 : 2;
}

/* Whether -h or --help is among the command's own arguments. */
static bool wants_help(size_t cmd, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
		if (!strcmp(argv[i], "--") ||
		    (commands[cmd].runs_command && argv[i][0] != '-'))
			return false;
	}
	return false;
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
	for (size_t i = 0; i < COMMAND_CNT; i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		if (wants_help(i, argc - 1, argv + 1)) {
			printf("usage: egpu %s\n%s", commands[i].usage,
			       commands[i].details);
			return 0;
		}
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "egpu: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
