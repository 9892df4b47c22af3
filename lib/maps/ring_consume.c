/* SPDX-License-Identifier: MIT */
/*
 * The consumer of an event ring: walks published records from its
 * position, hands each to a callback where it lies (no copy; a record of a
 * warp's batch is first gathered from its interleaved words, unless the
 * consumer takes whole batches: ring_part.take_batch), then zeroes
 * the consumed bytes and publishes the new position. The walk (ring_walk.c)
 * also serves rings in GPU memory, over the copy ring_dev.c made of them.
 *
 * Zeroing is what makes a header trustworthy: every header position reads
 * zero until a producer publishes a record there, so stale bytes of an
 * older lap (whatever a payload held) are never taken for a header. The
 * zeroes are stored before the position is released (x86 keeps stores in
 * order; the release store orders them elsewhere), and producers write a
 * region only after reading a consumer position past it.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "maps/ring_impl.h"
#include "maps/ring_pool.h"

/* Give the bytes in [from, to) back to producers. */
static void ring_release_span(struct event_ring *r, uint64_t from, uint64_t to)
{
	uint64_t off = from & (r->cap - 1), n = to - from;

	if (off + n <= r->cap) {
		memset(r->data + off, 0, n);
	} else {
		memset(r->data + off, 0, r->cap - off);
		memset(r->data, 0, n - (r->cap - off));
	}
	__atomic_store_n(&r->ctl->cons, to, __ATOMIC_RELEASE);
}

bool ring_ready(const struct event_ring *r)
{
	if (ring_dev_reading(r))
		return ring_dev_ready(r);
	return ring_hdr_load(r->data + (r->cons & (r->cap - 1))).flags & RING_COMMIT;
}

/*
 * The records in host memory, a window at a time: up to the end of the
 * records (the next lap starts at the beginning), at most a quarter ring,
 * so that producers get space back during a long pass.
 */
static int host_consume(struct event_ring *r, struct delivery *d)
{
	const uint64_t quarter = r->cap / 4;

	for (;;) {
		uint64_t from = r->cons, off = from & (r->cap - 1);
		uint64_t span = r->cap - off < quarter ? r->cap - off : quarter;
		struct ring_window w = { .base = r->data + off, .from = from,
					 .starts_end = from + span,
					 .bytes_end = UINT64_MAX };
		int end = ring_walk(r, &w, d, &r->cons, &r->cons_sub);

		if (r->cons != from)
			ring_release_span(r, from, r->cons);
		if (end != WALK_END)
			return end < 0 ? end : 0;
	}
}

/* One part of a pass and what it came to. */
struct part_run {
	struct pass *pass;
	struct delivery d;
	int err;  /* an EGPU_E* code with a message (this part's thread's) */
};

/* A pass split into parts (ring_consume_parts). */
struct pass {
	struct event_ring *r;
	struct ring_part *parts;
	struct part_run *runs;
	uint32_t n;        /* parts */
	bool dev;          /* the shards in GPU memory are read */
	int stop;          /* a callback said stop */
	int first;         /* the part whose result is the pass's, or -1 */
	char msg[512];     /* its error message, if an error */
};

/* What a part came to: < 0 for a stop or an error, else 0. */
static int part_result(const struct part_run *p)
{
	return p->err ? p->err : p->d.ret < 0 ? p->d.ret : 0;
}

/*
 * When part @k first stops or fails, on its thread: the first part to do
 * so gives the pass its result, and its message if one was set (a
 * callback may return an error of the library's, EGPU_EIO of a file).
 */
static void part_note(struct part_run *p, uint32_t k)
{
	int none = -1;

	if (!p->err && egpu_errcode() && egpu_errcode() == p->d.ret)
		p->err = p->d.ret;
	if (part_result(p) < 0 &&
	    __atomic_compare_exchange_n(&p->pass->first, &none, (int)k, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
	    p->err)
		snprintf(p->pass->msg, sizeof(p->pass->msg), "%s", egpu_errmsg());
	__atomic_store_n(&p->pass->stop, 1, __ATOMIC_RELAXED);
}

/* A part's flush, after its records: a value < 0 stops the pass. */
static void part_flush(struct part_run *p, const struct ring_part *part,
		       uint32_t k)
{
	bool was_stopped = part_result(p) < 0;
	int flushed = part->flush ? part->flush(part->user) : 0;

	if (flushed >= 0 || was_stopped)
		return;
	p->d.ret = flushed;
	part_note(p, k);
}

/* Part @k of a pass on its thread: its shards, then its flush. */
static void part_job(void *arg, uint32_t k)
{
	struct pass *pass = arg;
	struct part_run *p = &pass->runs[k];

	if (k)
		err_clear(); /* a message set from now on is this pass's */
	if (pass->dev && !part_result(p) && p->d.n < INT32_MAX) {
		p->err = ring_dev_consume(pass->r, k, pass->n, &p->d);
		if (part_result(p) < 0)
			part_note(p, k);
	}
	part_flush(p, &pass->parts[k], k);
}

/*
 * On the calling thread, before the parts: host records (the CPU back
 * end's) to part 0, then the shards' positions. Whether the parts go on.
 */
static bool pass_begin(struct pass *pass)
{
	struct event_ring *r = pass->r;
	struct part_run *p = &pass->runs[0];

	if (!ring_dev_reading(r))
		p->err = host_consume(r, &p->d);
	if (!part_result(p) && p->d.n < INT32_MAX && ring_dev_reading(r))
		p->err = ring_dev_begin(r, pass->n);
	if (part_result(p) < 0)
		part_note(p, 0);
	return !part_result(p) && p->d.n < INT32_MAX && ring_dev_reading(r);
}

static int pass_result(const struct pass *pass, uint32_t n)
{
	int64_t total = 0;

	if (pass->first >= 0) {
		const struct part_run *p = &pass->runs[pass->first];

		if (p->err)
			err_set(p->err, "%s", pass->msg);
		return part_result(p);
	}
	for (uint32_t k = 0; k < n; k++)
		total += pass->runs[k].d.n;
	return total > INT32_MAX ? INT32_MAX : (int)total;
}

int ring_consume_parts(struct event_ring *r, struct ring_part *parts,
		       uint32_t n, struct ring_pool *pool)
{
	struct part_run runs[RING_READERS_MAX];
	struct pass pass = { .r = r, .parts = parts, .runs = runs, .n = n,
			     .first = -1 };

	if (n < 1 || n > r->readers_made ||
	    (pool && n > ring_pool_threads(pool)))
		return err_set(EGPU_EINVAL,
			       "ring '%s': a pass in %u parts, with %u readers and %u threads",
			       r->name, n, r->readers_made,
			       pool ? ring_pool_threads(pool) : 1);
	/* Parts beyond the shards would have nothing to do. */
	if (r->in_device_memory && pass.n > r->shards)
		pass.n = r->shards;
	err_clear(); /* a message set from now on is this pass's */
	for (uint32_t k = 0; k < n; k++)
		runs[k] = (struct part_run){
			.pass = &pass,
			.d = { .chunk = parts[k].chunk, .fn = parts[k].fn,
			       .take_batch = parts[k].take_batch,
			       .user = parts[k].user,
			       .bytes = &parts[k].bytes, .rd = &r->readers[k],
			       .stop = &pass.stop } };
	pass.dev = pass_begin(&pass);
	if (!pass.dev)
		part_job(&pass, 0); /* part 0's flush and result */
	else if (ring_dev_idle(r)) /* only the flushes: no thread woken */
		for (uint32_t k = 0; k < pass.n; k++)
			part_flush(&runs[k], &parts[k], k);
	else if (pool && pass.n > 1)
		ring_pool_run(pool, pass.n, part_job, &pass);
	else
		for (uint32_t k = 0; k < pass.n; k++)
			part_job(&pass, k);
	for (uint32_t k = 0; k < n; k++)
		parts[k].records += (uint64_t)runs[k].d.n;
	return pass_result(&pass, n);
}

int ring_consume(struct event_ring *r, egpu_sample_fn fn, void *user,
		 uint64_t *bytes)
{
	struct ring_part part = { .fn = fn, .user = user };
	int n = ring_consume_parts(r, &part, 1, NULL);

	if (bytes)
		*bytes += part.bytes;
	return n;
}
