/* SPDX-License-Identifier: MIT */
/*
 * The timeline streamed while the trace runs (collect_opts.stream_path),
 * so that the tracer's memory stays bounded whatever the run's length.
 *
 * Each activity buffer CUPTI hands back drains a part: the cut is the
 * newest operation's end less a lag; the calls that began before it and
 * have returned (each thread's in order, read from its chunk while the
 * thread appends: a record is complete once its end is stored) and the
 * operations that began before it or were caused by those calls are
 * joined, written to the Perfetto
 * file (perfetto.c, which keeps each sequence's interning and clock
 * across parts, and stops or rotates at a size), added to the totals
 * (collect_fold.c), and freed with the chunks left behind. The lag lets
 * the GPU's records of a call arrive before the call is written: an
 * operation that ran more than the lag after its call (a deeper queue),
 * or whose record came late, is written without its arrow and counted
 * as not joined.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "collect_fold.h"
#include "collect_impl.h"
#include "perfetto.h"

#define STREAM_LAG_NS 2000000000ull

struct stream {
	struct pf_stream *pf;
	struct builder *b;
	struct fold fold;
	uint64_t cut;                /* the last part's */
	struct trace_api *apis;      /* the part being drained */
	size_t api_n, api_cap;
	struct trace_op *ops;
	size_t op_n, op_cap;
	struct ptrmap alias;         /* driver call's id + 1 -> runtime's */
	struct ptrmap corrs;         /* the part's calls' ids + 1 */
	int err;                     /* the first, kept for stop */
};

int collect_stream_open(struct collect *c)
{
	struct pf_stream_opts o = { c->opts.max_size, c->opts.max_files };
	struct stream *s = calloc(1, sizeof(*s));

	if (!s)
		return err_set(EGPU_ENOMEM, "egpu_trace_start: out of memory");
	c->stream = s;
	s->b = builder_new(c);
	if (!s->b)
		return err_set(EGPU_ENOMEM, "egpu_trace_start: out of memory");
	c->td.process = strpool_add(&c->names, program_invocation_short_name,
				    strlen(program_invocation_short_name));
	c->td.pid = (uint32_t)getpid();
	s->pf = pf_stream_open(c->opts.stream_path, &o);
	if (!s->pf)
		err_prefix("egpu_trace_start");
	return s->pf ? 0 : egpu_errcode();
}

/* Take chunk @k's calls that began before @cut and returned (all that
 * returned when @final) into the part; 0 or EGPU_ENOMEM. */
static int take_calls(struct collect *c, struct call_chunk *k, uint64_t cut,
		      bool final)
{
	struct stream *s = c->stream;
	uint32_t n = __atomic_load_n(&k->call_n, __ATOMIC_ACQUIRE);
	const struct raw_call *call;
	int err = 0;

	for (; k->done < n && !err; k->done++) {
		call = &k->calls[k->done];
		/* after stop nothing runs: a call left open ends where it began */
		if (!__atomic_load_n(&call->end, __ATOMIC_ACQUIRE) && !final)
			break;
		if (call->kind == CALL_ALIAS) {
			err = ptrmap_put(&s->alias, (uintptr_t)call->corr + 1,
					 (void *)(uintptr_t)call->outer);
			continue;
		}
		if (!final && call->start >= cut)
			break;
		if (!ARRAY_GROW(s->apis, s->api_cap, s->api_n, 1024))
			return EGPU_ENOMEM;
		err = builder_call(s->b, k, call, &s->apis[s->api_n++]);
	}
	return err;
}

/*
 * Take the calls of every chunk, then free the chunks their threads left
 * and the stream is done with. Only the drain unlinks chunks and threads
 * only add new ones at the head, so the chunks are read without the lock
 * (a thread waits for it at its next chunk: not while stacks are named).
 */
static int take_chunks(struct collect *c, uint64_t cut, bool final)
{
	struct call_chunk **p, *k;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	k = c->chunks;
	pthread_mutex_unlock(&c->lock);
	for (; k && !err; k = k->next)
		err = take_calls(c, k, cut, final);
	pthread_mutex_lock(&c->lock);
	for (p = &c->chunks; (k = *p);) {
		if (!k->sealed || k->done < k->call_n) {
			p = &k->next;
			continue;
		}
		*p = k->next;
		chunk_free(k);
	}
	pthread_mutex_unlock(&c->lock);
	/* a freed chunk's address may come back with other frames */
	builder_forget_frames(c->stream->b);
	return err;
}

/* The correlation ids of the part's calls, into s->corrs. */
static int part_corrs(struct stream *s)
{
	for (size_t i = 0; i < s->api_n; i++)
		if (ptrmap_put(&s->corrs, (uintptr_t)s->apis[i].corr + 1,
			       (void *)1))
			return EGPU_ENOMEM;
	return 0;
}

/* Take the operations that began before @cut or belong to a call of the
 * part, with the runtime call's id where they carry a nested driver
 * call's (aliases stay for the operations of calls not written yet). */
static int take_ops(struct collect *c, uint64_t cut)
{
	struct stream *s = c->stream;
	size_t kept = 0;
	uintptr_t outer;
	int err = part_corrs(s);

	for (size_t i = 0; i < c->op_n && !err; i++) {
		struct trace_op op = c->ops[i];

		outer = (uintptr_t)ptrmap_get(&s->alias, (uintptr_t)op.corr + 1);
		if (outer)
			op.corr = (uint32_t)outer;
		if (op.start >= cut &&
		    !ptrmap_get(&s->corrs, (uintptr_t)op.corr + 1)) {
			c->ops[kept++] = c->ops[i];
			continue;
		}
		if (!ARRAY_GROW(s->ops, s->op_cap, s->op_n, 1024))
			return EGPU_ENOMEM;
		s->ops[s->op_n++] = op;
	}
	c->op_n = kept;
	ptrmap_free(&s->corrs);
	return err;
}

/* Write the part, add it to the totals, and empty it. */
static int put_part(struct collect *c)
{
	struct stream *s = c->stream;
	struct trace_data part = { .process = c->td.process, .pid = c->td.pid,
		.apis = s->apis, .api_cnt = s->api_n, .ops = s->ops,
		.op_cnt = s->op_n, .stacks = c->td.stacks,
		.stack_cnt = c->td.stack_cnt };
	int err;

	trace_join(&part);
	err = pf_stream_put(s->pf, &part, s->cut);
	if (!err)
		err = fold_add(&s->fold, &part);
	s->api_n = s->op_n = 0;
	ptrmap_free(&s->alias);
	return err;
}

void collect_stream_drain(struct collect *c, bool final)
{
	struct stream *s = c->stream;
	uint64_t cut = final ? UINT64_MAX :
		c->newest_end > STREAM_LAG_NS ? c->newest_end - STREAM_LAG_NS : 0;
	int err;

	if (s->err || cut <= s->cut)
		return;
	err = take_chunks(c, cut, final);
	if (!err)
		err = take_ops(c, cut);
	if (!err)
		err = put_part(c);
	s->cut = cut;
	if (err && !s->err)
		s->err = err == EGPU_ENOMEM ?
			err_set(err, "trace: out of memory streaming") : err;
}

int collect_stream_finish(struct collect *c)
{
	struct stream *s = c->stream;
	int err;

	collect_stream_drain(c, true);
	c->counts.stream_full = pf_stream_full(s->pf);
	err = pf_stream_close(s->pf);
	s->pf = NULL;
	if (s->err || err) {
		err_prefix("egpu_trace_stop");
		return s->err ? s->err : err;
	}
	free(c->ops);
	c->ops = s->fold.ops;
	c->op_n = s->fold.op_n;
	c->op_cap = s->fold.op_cap;
	c->td.apis = s->fold.apis;
	c->td.api_cnt = s->fold.api_n;
	c->td.ops_from = s->fold.from;
	c->td.ops_to = s->fold.to;
	s->fold = (struct fold){ .api_slots = s->fold.api_slots,
				 .op_slots = s->fold.op_slots };
	return builder_name_slow_frame(s->b);
}

void collect_stream_free(struct collect *c)
{
	struct stream *s = c->stream;

	if (!s)
		return;
	pf_stream_close(s->pf);
	builder_free(s->b);
	fold_free(&s->fold);
	free(s->apis);
	free(s->ops);
	ptrmap_free(&s->alias);
	free(s);
	c->stream = NULL;
}
