/* SPDX-License-Identifier: MIT */
/*
 * Splices: the output is the input with some byte ranges replaced or text
 * inserted, and nothing else touched.
 */
#include <stdlib.h>

#include "ptx/instr.h"

void edits_init(struct edits *e)
{
	e->v = NULL;
	e->n = e->cap = 0;
	sb_init(&e->text);
}

void edits_free(struct edits *e)
{
	free(e->v);
	sb_free(&e->text);
	edits_init(e);
}

struct strbuf *edit_at(struct edits *e, uint32_t off, uint32_t del)
{
	if (!ARRAY_GROW(e->v, e->cap, e->n, 32))
		return NULL;
	e->v[e->n] = (struct edit){
		.off = off, .del = del, .ins = e->text.len, .seq = e->n,
	};
	e->n++;
	return &e->text;
}

static int by_offset(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Text of edit @seq ends where the next-created edit's text starts. */
static size_t text_end(const struct edits *e, const size_t *ends, size_t seq)
{
	return seq + 1 < e->n ? ends[seq] : e->text.len;
}

int edits_apply(struct edits *e, const char *text, size_t len,
		struct strbuf *out)
{
	size_t *ends, pos = 0, i;

	if (!sb_ok(&e->text))
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	ends = malloc((e->n + 1) * sizeof(*ends));
	if (!ends)
		return err_set(EGPU_ENOMEM, "PTX: out of memory for edits");
	for (i = 0; i + 1 < e->n; i++)
		ends[i] = e->v[i + 1].ins;
	if (e->n)
		qsort(e->v, e->n, sizeof(*e->v), by_offset);
	for (i = 0; i < e->n; i++) {
		const struct edit *d = &e->v[i];
		size_t end = text_end(e, ends, d->seq);

		if (d->off < pos || d->off + (size_t)d->del > len) {
			free(ends);
			return err_set(EGPU_EINVAL,
				       "PTX: overlapping edits at byte %u", d->off);
		}
		sb_addn(out, text + pos, d->off - pos);
		if (end > d->ins)
			sb_addn(out, e->text.buf + d->ins, end - d->ins);
		pos = d->off + d->del;
	}
	free(ends);
	sb_addn(out, text + pos, len - pos);
	return sb_ok(out) ? 0 : err_set(EGPU_ENOMEM, "PTX: out of memory");
}
