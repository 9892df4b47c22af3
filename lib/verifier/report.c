/* SPDX-License-Identifier: MIT */
/* The verbose log and the one-line report a command-line tool prints. */
#include <inttypes.h>
#include <stdio.h>

#include "vstate.h"

void vlog(struct verifier *v, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!v->opts.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sb_adds(v->opts.log, line);
}

static bool logging_steps(const struct verifier *v)
{
	if (v->replaying)
		return v->cur->path_len > v->replay_skip;
	return v->opts.verbose >= 2;
}

/* "IDX: insn ; state after it" */
void log_step(struct verifier *v, int insn)
{
	struct strbuf *sb = v->opts.log;

	if (!sb || !logging_steps(v))
		return;
	sb_printf(sb, "%d: ", insn);
	disasm_insn(sb, v, insn);
	sb_adds(sb, " ;");
	state_print(sb, v, v->cur);
	sb_adds(sb, "\n");
}

void verifier_report(struct strbuf *sb, const struct bpf_prog_spec *prog,
		     int rc, const struct verifier_stats *st)
{
	const char *name = prog && prog->name ? prog->name : "?";

	if (rc) {
		sb_printf(sb, "prog '%s': refused: %s\n", name, egpu_errmsg());
		return;
	}
	sb_printf(sb, "prog '%s': accepted (%" PRIu64 " insns processed, %"
		  PRIu64 " states, peak %" PRIu64 ", %" PRIu64 " pruned, "
		  "stack %" PRIu32 " bytes, %.3f ms)\n", name,
		  st->insns_processed, st->states, st->peak_states, st->pruned,
		  st->stack_depth, st->ms);
}
