/* SPDX-License-Identifier: MIT */
/* The verbose log and the one-line report a command-line tool prints. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

/*
 * Bytes the every-step log (verbose 2) may take: a program at the
 * instruction budget would log a million states, hundreds of MB held in
 * memory. The failing path's replay comes after it, whatever its size.
 */
#define STEP_LOG_MAX (16u << 20)

static bool logging_steps(struct verifier *v)
{
	if (v->replaying)
		return v->cur->path_len > v->replay_skip;
	if (v->opts.verbose < 2 || v->steps_cut)
		return false;
	if (v->opts.log->len < STEP_LOG_MAX)
		return true;
	v->steps_cut = true;
	sb_printf(v->opts.log, "... the log of every step stops here, at %u MiB\n",
		  STEP_LOG_MAX >> 20);
	return false;
}

/* The line instruction @insn comes from, or NULL. */
static const struct bpf_line_info *line_of(const struct prog_spec *p,
					   int insn)
{
	size_t lo = 0, hi = p->line_cnt;

	if (insn < 0 || (size_t)insn >= p->line_insns)
		return NULL;
	while (lo < hi) { /* the last entry starting at or before @insn */
		size_t mid = lo + (hi - lo) / 2;

		if (p->lines[mid].insn <= (uint32_t)insn)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Line 0: code the compiler made up, no source line. */
	return lo && p->lines[lo - 1].line ? &p->lines[lo - 1] : NULL;
}

/* The file's base name and the line's text without leading blanks. */
static void line_parts(const struct prog_spec *p,
		       const struct bpf_line_info *l, const char **file,
		       const char **text)
{
	const char *slash;

	*file = p->line_strs + l->file;
	slash = strrchr(*file, '/');
	if (slash)
		*file = slash + 1;
	*text = p->line_strs + l->text;
	while (**text == ' ' || **text == '\t')
		(*text)++;
}

void source_line(struct strbuf *sb, const struct prog_spec *prog, int insn)
{
	const struct bpf_line_info *l = line_of(prog, insn);
	const char *file, *text;

	if (!l)
		return;
	line_parts(prog, l, &file, &text);
	sb_printf(sb, " at %s:%u: `%.160s`", file, l->line, text);
}

/* "; TEXT @ FILE:LINE" before the first instruction of a line, as Linux. */
static void log_line_start(struct strbuf *sb, const struct verifier *v, int insn)
{
	const struct bpf_line_info *l = line_of(v->prog, insn);
	const char *file, *text;

	/* Once per line: clang starts a record at each new column too. */
	if (!l || l->insn != (uint32_t)insn ||
	    (l > v->prog->lines && l[-1].line == l->line && l[-1].file == l->file))
		return;
	line_parts(v->prog, l, &file, &text);
	sb_printf(sb, "; %.160s @ %s:%u\n", text, file, l->line);
}

/* "IDX: insn ; state after it" */
void log_step(struct verifier *v, int insn)
{
	struct strbuf *sb = v->opts.log;

	if (!sb || !logging_steps(v))
		return;
	log_line_start(sb, v, insn);
	sb_printf(sb, "%d: ", insn);
	disasm_insn(sb, v, insn);
	sb_adds(sb, " ;");
	state_print(sb, v, v->cur);
	sb_adds(sb, "\n");
}

/* @msg past its own "prog 'NAME': ", which the report line starts with. */
static const char *without_name(const char *msg, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(msg, "prog '", 6) && !strncmp(msg + 6, name, n) &&
	    !strncmp(msg + 6 + n, "': ", 3))
		return msg + 6 + n + 3;
	return msg;
}

/* Drop @sb's last line if it is @line. */
static void drop_last_line(struct strbuf *sb, const char *line)
{
	size_t n = strlen(line), at;

	if (!n || !sb->buf || sb->len < n + 1 || sb->buf[sb->len - 1] != '\n')
		return;
	at = sb->len - 1 - n;
	if ((at && sb->buf[at - 1] != '\n') || strncmp(sb->buf + at, line, n))
		return;
	sb->len = at;
	sb->buf[at] = '\0';
}

void verifier_report(struct strbuf *sb, const struct prog_spec *prog,
		     int rc, const struct verifier_stats *st)
{
	const char *name = prog && prog->name ? prog->name : "?";

	if (rc) {
		const char *msg = egpu_errmsg();

		/* A failing path's log ends with the message: the verdict
		 * line takes its place rather than repeating it. */
		drop_last_line(sb, msg);
		sb_printf(sb, "prog '%s': refused: %s\n", name,
			  without_name(msg, name));
		return;
	}
	sb_printf(sb, "prog '%s': accepted (%" PRIu64 " insns processed, %"
		  PRIu64 " states, peak %" PRIu64 ", %" PRIu64 " pruned, "
		  "stack %" PRIu32 " bytes, %.3f ms)\n", name,
		  st->insns_processed, st->states, st->peak_states, st->pruned,
		  st->stack_depth, st->ms);
}
