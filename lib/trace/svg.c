/* SPDX-License-Identifier: MIT */
/*
 * A self-contained interactive SVG flame graph of GPU time by CPU call
 * path: the folded paths (folded.c) laid out as flamegraph.pl does, the
 * root "all" at the bottom, each frame as wide as the GPU time under it,
 * children left to right in path order. The output depends only on the
 * trace (no clock, no randomness): colours come from a hash of the name.
 */
#include <stdlib.h>
#include <string.h>

#include "svg_js.h"
#include "writers.h"

#define WIDTH 1200
#define PAD 10          /* left and right margin */
#define FRAME_H 16
#define TOP 34          /* title and buttons */
#define BOTTOM 26       /* details line */
#define CHAR_W 7        /* average glyph width at 12px, for labels */

struct svg {
	const struct trace_data *td;
	FILE *f;
	bool tag;
	struct strbuf sb;
	struct strbuf name;  /* scratch: a frame's text */
	uint64_t total;      /* ns of the root */
	uint32_t height;
	uint32_t levels;     /* rows, the root included */
};

/* An open frame of the layout: where it starts, what it is. */
struct open_frame {
	uint64_t start;
	struct frame f;
};

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* flamegraph.pl's palettes: warm for host code, green kernels, blue copies. */
static void put_fill(struct strbuf *sb, const struct frame *f, const char *text)
{
	uint32_t h = name_hash(text);
	unsigned a = h % 50, b = (h >> 8) % 50;

	if (f->kind == FRAME_DEVICE || !strcmp(text, UNKNOWN_LAUNCH))
		sb_printf(sb, "rgb(%u,%u,%u)", 160 + a / 2, 160 + a / 2, 170 + a / 2);
	else if (f->kind == FRAME_OP && f->num == TRACE_KERNEL)
		sb_printf(sb, "rgb(%u,%u,%u)", 50 + a, 180 + b, 60 + a);
	else if (f->kind == FRAME_OP)
		sb_printf(sb, "rgb(%u,%u,%u)", 70 + a, 130 + b, 215 + a / 2);
	else
		sb_printf(sb, "rgb(%u,%u,%u)", 205 + a, 50 + 3 * b, 30 + a / 2);
}

static void put_time(struct strbuf *sb, uint64_t ns)
{
	if (ns >= 1000000)
		sb_printf(sb, "%.3f ms", ns / 1e6);
	else
		sb_printf(sb, "%.3f us", ns / 1e3);
}

/* The label that fits @w px: @name (which it may cut short), cut with
 * ".." at a character boundary, or nothing. */
static void put_label(struct strbuf *sb, char *name, double w)
{
	long room = (long)((w - 6) / CHAR_W);
	size_t cut;

	if (room < 3)
		return;
	if (strlen(name) <= (size_t)room) {
		xml_escape(sb, name);
		return;
	}
	cut = (size_t)room - 2;
	while (cut && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut--;
	name[cut] = '\0';
	xml_escape(sb, name);
	sb_adds(sb, "..");
}

/* Where time @ns falls, rounded as printed, so that a frame ends
 * exactly where its last child does (the script compares them). */
static double px(const struct svg *s, uint64_t ns)
{
	double x = PAD + (WIDTH - 2 * PAD) * (double)ns / (double)s->total;

	return (double)(int64_t)(x * 100 + 0.5) / 100;
}

static void put_frame(struct svg *s, const struct frame *f, uint32_t level,
		      uint64_t start, uint64_t end)
{
	double x = px(s, start), w = px(s, end) - x;
	double y = s->height - BOTTOM - (double)(level + 1) * FRAME_H;

	s->name.len = 0;
	if (f)
		frame_put(&s->name, f);
	else
		sb_adds(&s->name, "all");
	if (!sb_ok(&s->name)) {
		s->sb.oom = 1;
		return;
	}
	sb_adds(&s->sb, "<g class=\"f\"><title>");
	xml_escape(&s->sb, s->name.buf);
	sb_adds(&s->sb, " (");
	put_time(&s->sb, end - start);
	sb_printf(&s->sb, ", %.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" "
		  "width=\"%.2f\" height=\"%d\" fill=\"",
		  100.0 * (double)(end - start) / (double)s->total, x, y, w,
		  FRAME_H - 1);
	put_fill(&s->sb, f ? f : &(struct frame){ .kind = FRAME_DEVICE },
		 s->name.buf);
	sb_printf(&s->sb, "\" rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\">", x + 3,
		  y + FRAME_H - 4);
	put_label(&s->sb, s->name.buf, w);
	sb_adds(&s->sb, "</text></g>\n");
	out_flush(&s->sb, s->f);
}

static void put_head(struct svg *s)
{
	const char *proc = s->td->process ? s->td->process : "trace";

	sb_printf(&s->sb, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		  "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		  "width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" data-pad=\"%d\" "
		  "onload=\"init()\">\n", WIDTH, s->height, WIDTH, s->height, PAD);
	sb_adds(&s->sb, "<style>text { font: 12px Verdana, sans-serif; fill: #000; }\n"
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
		"#title { font-size: 17px; }\n"
		".btn { cursor: pointer; fill: #335; }\n</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n");
	sb_adds(&s->sb, svg_js);
	sb_printf(&s->sb, "]]></script>\n<rect width=\"100%%\" height=\"100%%\" "
		  "fill=\"#f6f6f0\"/>\n<text id=\"title\" x=\"%d\" y=\"24\" "
		  "text-anchor=\"middle\">", WIDTH / 2);
	xml_escape(&s->sb, proc);
	sb_adds(&s->sb, ": GPU time by CPU call path, ");
	put_time(&s->sb, s->total);
	sb_printf(&s->sb, "</text>\n<text id=\"unzoom\" class=\"btn\" x=\"%d\" "
		  "y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n<text "
		  "id=\"search\" class=\"btn\" x=\"%d\" y=\"24\">Search</text>\n"
		  "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n<text "
		  "id=\"matched\" x=\"%d\" y=\"%u\"> </text>\n<g id=\"frames\">\n",
		  PAD, WIDTH - PAD - 60, PAD, s->height - 8, WIDTH - PAD - 110,
		  s->height - 8);
}

/* Close the open frames from @level up, at @x. */
static void close_to(struct svg *s, struct open_frame *open, uint32_t *depth,
		     uint32_t level, uint64_t x)
{
	while (*depth > level) {
		(*depth)--;
		put_frame(s, &open[*depth].f, *depth + 1, open[*depth].start, x);
	}
}

/* Lay out @g (ordered paths): a frame closes where the next path leaves it. */
static int put_frames(struct svg *s, const struct path_group *g, size_t n)
{
	struct open_frame *open;
	struct op_path p, prev;
	uint32_t depth = 0;
	uint64_t x = 0;

	open = calloc(s->levels, sizeof(*open));
	if (!open)
		return err_set(EGPU_ENOMEM, "trace: %u flame graph levels", s->levels);
	for (size_t i = 0; i < n; i++) {
		op_path(s->td, &s->td->ops[g[i].op], s->tag, &p);
		close_to(s, open, &depth, i ? paths_common(&prev, &p) : 0, x);
		for (; depth < path_depth(&p); depth++)
			open[depth] = (struct open_frame){ x, path_frame(&p, depth) };
		x += g[i].ns;
		prev = p;
	}
	close_to(s, open, &depth, 0, x);
	free(open);
	return 0;
}

int trace_write_svg(const struct trace_data *td, FILE *f)
{
	struct svg s = { .td = td, .f = f, .tag = trace_multi_device(td),
			 .levels = 1 };
	struct path_group *g = NULL;
	struct op_path p;
	size_t n = 0;
	int err;

	err = path_groups(td, BY_PATH, s.tag, &g, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		op_path(td, &td->ops[g[i].op], s.tag, &p);
		s.total += g[i].ns;
		if (path_depth(&p) + 1 > s.levels)
			s.levels = path_depth(&p) + 1;
	}
	s.height = TOP + BOTTOM + s.levels * FRAME_H + 8;
	sb_init(&s.sb);
	sb_init(&s.name);
	put_head(&s);
	out_flush(&s.sb, f);
	if (s.total) {
		err = put_frames(&s, g, n);
		put_frame(&s, NULL, 0, 0, s.total);
	}
	sb_adds(&s.sb, "</g>\n</svg>\n");
	free(g);
	sb_free(&s.name);
	if (err) {
		sb_free(&s.sb);
		return err;
	}
	return out_done(&s.sb, f, "SVG flame graph");
}
