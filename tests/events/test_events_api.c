// SPDX-License-Identifier: MIT
/*
 * The events API without a GPU: ring consumers and their errors, programs
 * using every ring helper run on the CPU, print records formatted from
 * recorded arguments, and ptxas accepting programs that use every ring and
 * print helper once linked with the device runtime.
 */
#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "core/span_record.h"
#include "egpu.h"
#include "egpu/ctx.h"
#include "test_util.h"

#define EVENTS_OBJ EGPU_TEST_BUILD "/events.bpf.o"
#define EVENTS_PTX EGPU_TEST_BUILD "/kernels.ptx"

static egpu_ctx *ctx;
static egpu_obj *obj;

static void setup(void)
{
	ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, EVENTS_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

static egpu_map *map(const char *name)
{
	egpu_map *m = egpu_obj_map(obj, name);

	ck_assert_msg(m, "%s", egpu_errmsg());
	return m;
}

/* Run @prog on the CPU with ctx = {n, tag}; returns r0. */
static uint64_t run_cpu(const char *prog, uint64_t n, uint64_t tag)
{
	uint64_t args[2] = { n, tag };
	EGPU_OPTS(egpu_run_opts, ro, .ctx = args, .ctx_len = sizeof(args));

	ck_assert_msg(!egpu_prog_run(egpu_obj_prog(obj, prog), &ro), "%s: %s",
		      prog, egpu_errmsg());
	return ro.retval;
}

struct event {
	uint64_t tid, bid, a, b, c, d, e;
};

struct events {
	uint64_t n;
	struct event ev[64];
};

static int on_event(void *user, const void *data, size_t size)
{
	struct events *e = user;

	ck_assert_uint_eq(size, sizeof(struct event));
	ck_assert_uint_lt(e->n, 64);
	memcpy(&e->ev[e->n++], data, size);
	return 0;
}

static int never(void *user, const void *data, size_t size)
{
	(void)user;
	(void)data;
	(void)size;
	return 0;
}

START_TEST(ring_api_errors)
{
	egpu_ringbuf *rb, *again;
	EGPU_OPTS(egpu_ringbuf_stats, st);
	uint32_t key = 0;
	uint64_t v;

	ck_assert_ptr_null(egpu_ringbuf_new(NULL, never, NULL));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "NULL"));
	ck_assert_ptr_null(egpu_ringbuf_new(map("rb"), NULL, NULL));
	ck_assert_ptr_null(egpu_ringbuf_new(map("plain"), never, NULL));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "'plain'"));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "not a ring buffer"));
	rb = egpu_ringbuf_new(map("rb"), never, NULL);
	ck_assert_ptr_nonnull(rb);
	ck_assert_ptr_null(egpu_ringbuf_new(map("rb"), never, NULL));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "already consumed"));
	ck_assert_int_eq(egpu_ringbuf_add(rb, map("rb"), never, NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_ringbuf_add(NULL, map("tiny"), never, NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_ringbuf_add(rb, map("tiny"), never, NULL), 0);
	ck_assert_int_eq(egpu_ringbuf_consume(NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_ringbuf_poll(NULL, 0), EGPU_EINVAL);
	ck_assert_int_eq(egpu_ringbuf_fd(NULL), EGPU_EINVAL);
	ck_assert_uint_eq(egpu_ringbuf_drops(NULL), 0);
	ck_assert_int_eq(egpu_ringbuf_stats(rb, NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_ringbuf_stats(rb, &st), 0);
	ck_assert_uint_eq(st.rings, 2);
	ck_assert_int_eq(egpu_map_lookup(map("rb"), &key, &v), EGPU_ENOTSUP);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "ring buffer"));
	ck_assert_int_eq(egpu_map_update(map("perf"), &key, &v, 0), EGPU_ENOTSUP);
	ck_assert_int_eq(egpu_map_next_key(map("gpurb"), NULL, &key), EGPU_ENOTSUP);
	ck_assert_int_eq(egpu_print_poll(NULL, 0), EGPU_EINVAL);
	ck_assert_int_eq(egpu_print_set_callback(NULL, NULL, NULL), EGPU_EINVAL);
	ck_assert_uint_eq(egpu_print_drops(NULL), 0);
	ck_assert_int_eq(egpu_print_poll(ctx, 10), 0); /* nothing prints */
	egpu_ringbuf_free(rb);
	egpu_ringbuf_free(NULL);
	again = egpu_ringbuf_new(map("rb"), never, NULL); /* released */
	ck_assert_ptr_nonnull(again);
	egpu_ringbuf_free(again);
}
END_TEST

START_TEST(cpu_output_reaches_the_consumer)
{
	struct events e = { 0 };
	EGPU_OPTS(egpu_ringbuf_stats, st);
	egpu_ringbuf *rb = egpu_ringbuf_new(map("rb"), on_event, &e);

	ck_assert_ptr_nonnull(rb);
	ck_assert_uint_eq(run_cpu("out", 10, 7), 10);
	ck_assert_int_eq(egpu_ringbuf_poll(rb, 100), 10);
	for (uint64_t i = 0; i < 10; i++) {
		ck_assert_uint_eq(e.ev[i].tid, i);
		ck_assert_uint_eq(e.ev[i].bid, 7);
	}
	ck_assert_int_eq(egpu_ringbuf_stats(rb, &st), 0);
	ck_assert_uint_eq(st.records, 10);
	ck_assert_uint_eq(st.bytes, 10 * sizeof(struct event));
	ck_assert_uint_eq(st.drops, 0);
	ck_assert_uint_eq(st.copied, 0); /* read where it lies */
	egpu_ringbuf_free(rb);
}
END_TEST

struct warp_records {
	uint64_t n;
	struct egpu_warp_access rec;
};

static int on_warp_record(void *user, const void *data, size_t size)
{
	struct warp_records *w = user;

	ck_assert_uint_eq(size, sizeof(w->rec));
	memcpy(&w->rec, data, size);
	w->n++;
	return 0;
}

struct batches {
	uint32_t calls;
	struct events ev;
	int ret;
};

static int on_batch(void *user, const struct egpu_record *recs, size_t n)
{
	struct batches *b = user;

	b->calls++;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq((uintptr_t)recs[i].data % 8, 0);
		ck_assert_int_eq(on_event(&b->ev, recs[i].data, recs[i].size), 0);
	}
	return b->ret;
}

/*
 * Batch delivery and a file at once: one call with every record of the
 * pass, in order; the file holds the same records in the ring's format.
 */
START_TEST(batch_and_file_delivery)
{
	char path[] = "/tmp/egpu_rb_XXXXXX";
	int fd = mkstemp(path);
	struct batches b = { 0 };
	EGPU_OPTS(egpu_ringbuf_opts, o, .batch_fn = on_batch, .path = path);
	EGPU_OPTS(egpu_ringbuf_stats, st);
	egpu_ringbuf *rb = egpu_ringbuf_new(map("plain"), never, NULL);
	uint8_t file[20 * 64];

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_null(rb); /* not a ring */
	rb = egpu_ringbuf_new(map("tiny"), never, NULL);
	ck_assert_ptr_nonnull(rb);
	ck_assert_int_eq(egpu_ringbuf_add_opts(rb, map("rb"), NULL, &b, &o), 0);
	ck_assert_uint_eq(run_cpu("out", 10, 7), 10);
	ck_assert_int_eq(egpu_ringbuf_poll(rb, 100), 10);
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_uint_eq(b.ev.n, 10);
	for (uint64_t i = 0; i < 10; i++)
		ck_assert_uint_eq(b.ev.ev[i].tid, i);
	/* A batch callback's error stops the pass and is returned. */
	b.ret = -77;
	ck_assert_uint_eq(run_cpu("out", 3, 8), 3);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), -77);
	ck_assert_uint_eq(b.ev.n, 13);
	ck_assert_int_eq(egpu_ringbuf_stats(rb, &st), 0);
	ck_assert_uint_eq(st.records, 13);
	egpu_ringbuf_free(rb); /* closes the file */
	ck_assert_int_eq(read(fd, file, sizeof(file)),
			 sizeof(struct egpu_record_file_header) +
			 13 * (8 + sizeof(struct event)));
	ck_assert(!memcmp(file, EGPU_RECORD_FILE_MAGIC, 8));
	for (uint64_t i = 0; i < 13; i++) {
		const uint8_t *rec = file + sizeof(struct egpu_record_file_header) +
				     i * (8 + sizeof(struct event));
		struct event ev;
		uint64_t hdr;

		memcpy(&hdr, rec, 8);
		memcpy(&ev, rec + 8, sizeof(ev));
		ck_assert_uint_eq(hdr, sizeof(struct event));
		ck_assert_uint_eq(ev.tid, i < 10 ? i : i - 10);
		ck_assert_uint_eq(ev.bid, i < 10 ? 7 : 8);
	}
	/* Read back: every record, in order; a file cut short is refused. */
	b.ev.n = 0;
	ck_assert_int_eq(egpu_record_file_read(path, on_event, &b.ev), 13);
	ck_assert_uint_eq(b.ev.n, 13);
	ck_assert_int_eq(ftruncate(fd, 16 + 13 * (8 + sizeof(struct event)) - 4), 0);
	ck_assert_int_eq(egpu_record_file_read(path, on_event, &b.ev), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "cut short"));
	ck_assert_int_eq(ftruncate(fd, 8), 0);
	ck_assert_int_eq(egpu_record_file_read(path, on_event, &b.ev), EGPU_EFORMAT);
	ck_assert_int_eq(egpu_record_file_read("/nonexistent/x", on_event, &b.ev),
			 EGPU_EIO);
	close(fd);
	unlink(path);
}
END_TEST

static int on_pair(void *user, const void *data, size_t size)
{
	uint64_t *got = user;
	const uint64_t *v = data;

	ck_assert_uint_eq(size, 16);
	ck_assert_uint_eq(v[1], ~(v[0] - 100));
	got[++got[0]] = v[0];
	return 0;
}

/* What chunk callbacks saw: the chunks' records, walked by egpu_chunk_next. */
struct chunks {
	uint32_t calls;
	uint32_t discards; /* skipped by egpu_chunk_next, seen in the bytes */
	uint64_t got[8];   /* the resv records' first words */
	uint32_t n;
	int ret;
};

static int on_chunk(void *user, const void *data, size_t size)
{
	struct chunks *c = user;
	struct egpu_chunk_iter it = { data, (const uint8_t *)data + size };
	struct egpu_chunk_rec rec;
	int more;

	c->calls++;
	ck_assert_uint_eq((uintptr_t)data % 8, 0);
	for (size_t off = 0; off < size;) {
		struct egpu_rec_hdr h;

		memcpy(&h, (const uint8_t *)data + off, sizeof(h));
		ck_assert(h.flags & EGPU_REC_COMMIT);
		c->discards += !!(h.flags & EGPU_REC_DISCARD);
		off += (sizeof(h) + h.len + 7) & ~(size_t)7;
	}
	while ((more = egpu_chunk_next(&it, &rec)) == 1) {
		ck_assert_uint_eq(rec.size, 16);
		ck_assert_int_eq(on_pair((uint64_t[4]){ 0 }, rec.data, rec.size), 0);
		ck_assert_uint_lt(c->n, 8);
		c->got[c->n++] = *(const uint64_t *)rec.data;
	}
	ck_assert_int_eq(more, 0);
	return c->ret;
}

/*
 * Chunk delivery: the pass's records in one call, as the ring holds them
 * (a discarded record among them, which egpu_chunk_next skips); with a
 * file, the same bytes raw in it, which egpu_record_file_read reads back.
 */
START_TEST(chunk_delivery_and_raw_file)
{
	char path[] = "/tmp/egpu_chunk_XXXXXX";
	int fd = mkstemp(path);
	struct chunks c = { 0 };
	uint64_t back[8] = { 0 };
	EGPU_OPTS(egpu_ringbuf_opts, o, .chunk_fn = on_chunk, .path = path);
	EGPU_OPTS(egpu_ringbuf_stats, st);
	egpu_ringbuf *rb = egpu_ringbuf_new_opts(map("rb"), NULL, &c, &o);

	ck_assert_int_ge(fd, 0);
	ck_assert_msg(rb, "%s", egpu_errmsg());
	ck_assert_uint_eq(run_cpu("resv", 0, 0), 2);
	ck_assert_uint_eq(run_cpu("resv", 0, 0), 2);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 4);
	ck_assert_uint_eq(c.calls, 1);
	ck_assert_uint_eq(c.discards, 2);
	ck_assert_uint_eq(c.n, 4);
	ck_assert_uint_eq(c.got[0], 100);
	ck_assert_uint_eq(c.got[1], 102);
	ck_assert_uint_eq(c.got[3], 102);
	ck_assert_int_eq(egpu_ringbuf_stats(rb, &st), 0);
	ck_assert_uint_eq(st.records, 4);
	ck_assert_uint_eq(st.bytes, 4 * 16);
	/* A chunk callback's stop: its records were consumed. */
	c.ret = -5;
	ck_assert_uint_eq(run_cpu("resv", 0, 0), 2);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), -5);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 0);
	egpu_ringbuf_free(rb);
	/* The file: header, then 9 records of 24 bytes, discards included. */
	ck_assert_int_eq(lseek(fd, 0, SEEK_END),
			 sizeof(struct egpu_record_file_header) + 9 * 24);
	ck_assert_int_eq(egpu_record_file_read(path, on_pair, back), 6);
	ck_assert_uint_eq(back[0], 6);
	ck_assert_uint_eq(back[6], 102);
	/* Not both callbacks. */
	o.batch_fn = on_batch;
	ck_assert_ptr_null(egpu_ringbuf_new_opts(map("rb"), NULL, &c, &o));
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "both a batch and a chunk"));
	close(fd);
	unlink(path);
}
END_TEST

/* Chunks cut short are refused, where the record is. */
START_TEST(malformed_chunks_refused)
{
	uint64_t words[3] = { 16 | (uint64_t)EGPU_REC_COMMIT << 32, 1, 2 };
	struct egpu_chunk_iter it = { (const uint8_t *)words,
				      (const uint8_t *)words + 20 };
	struct egpu_chunk_rec rec;

	ck_assert_int_eq(egpu_chunk_next(&it, &rec), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "16 bytes"));
	it.end = (const uint8_t *)words + 24;
	ck_assert_int_eq(egpu_chunk_next(&it, &rec), 1);
	ck_assert_uint_eq(rec.size, 16);
	ck_assert_int_eq(egpu_chunk_next(&it, &rec), 0);
	it = (struct egpu_chunk_iter){ (const uint8_t *)words,
				       (const uint8_t *)words + 4 };
	ck_assert_int_eq(egpu_chunk_next(&it, &rec), EGPU_EFORMAT);
	ck_assert_int_eq(egpu_chunk_next(NULL, &rec), EGPU_EINVAL);
}
END_TEST

/* Every lane access of data/spans.rec, checked against data/spans.txt. */
static int check_fixture_span(void *user, const void *data, size_t size)
{
	FILE *want = user;
	struct egpu_span_iter it;
	struct egpu_span_info info;
	struct egpu_warp_rec rec;
	int got = egpu_span_begin(&it, data, size, &info);

	while (got >= 0 && (got = egpu_span_next(&it, &rec)) == 1) {
		for (uint32_t m = rec.mask; m; m &= m - 1) {
			unsigned long long v[8];
			uint32_t lane = (uint32_t)__builtin_ctz(m);

			ck_assert_int_eq(fscanf(want, "%llu %llu %llu %llu %llu %llu %llu %llu",
						&v[0], &v[1], &v[2], &v[3], &v[4],
						&v[5], &v[6], &v[7]), 8);
			ck_assert_uint_eq(rec.addr[lane], v[0]);
			ck_assert_uint_eq(rec.site, v[1]);
			ck_assert_uint_eq(rec.size, v[2]);
			ck_assert_uint_eq(rec.kind, v[3]);
			ck_assert_uint_eq(lane, v[4]);
			ck_assert_uint_eq(info.block, v[5]);
			ck_assert_uint_eq(info.warp, v[6]);
			ck_assert_uint_eq(info.smid, v[7]);
		}
	}
	ck_assert_int_eq(got, 0);
	return 0;
}

/*
 * The span file the Python and Go decoders are checked against too
 * (data/make_spans.py): every form of record, short ones in both halves
 * of a slot and before a 16-byte one, a discard between spans.
 */
START_TEST(span_fixture_decodes_as_recorded)
{
	FILE *want = fopen(EGPU_TEST_DATA "/data/spans.txt", "r");
	char line[128];
	unsigned long long extra;

	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), want)); /* the legend */
	ck_assert_int_eq(egpu_record_file_read(EGPU_TEST_DATA "/data/spans.rec",
					       check_fixture_span, want), 3);
	ck_assert_int_eq(fscanf(want, "%llu", &extra), EOF); /* every line seen */
	fclose(want);
}
END_TEST

/* The record of one lane's 8-byte store at 0x7f0000001230, site 77. */
static void assert_one_lane_store(const struct egpu_warp_access *rec)
{
	ck_assert_uint_eq(rec->base, 0x7f0000001230ull);
	ck_assert_uint_eq(rec->tag, 0xabc);
	ck_assert_uint_eq(rec->mask, 1);
	ck_assert_uint_eq(rec->site, 77);
	ck_assert_int_eq(rec->stride, 0);
	ck_assert_uint_eq(rec->size, 8);
	ck_assert_uint_eq(rec->kind, EGPU_MEM_STORE);
	ck_assert_uint_eq(rec->flags, EGPU_WARP_AFFINE);
}

/*
 * bpf_egpu_trace_warp on the CPU, one lane: an affine record of that lane,
 * the access's size, kind and site unpacked from info.
 */
START_TEST(cpu_warp_record)
{
	struct warp_records w = { 0 };
	egpu_ringbuf *rb = egpu_ringbuf_new(map("rb"), on_warp_record, &w);
	uint64_t info = 8 | (uint64_t)EGPU_MEM_STORE << 16 | 77ull << 32;

	ck_assert_ptr_nonnull(rb);
	ck_assert_uint_eq(run_cpu("trace_one", 0x7f0000001230ull, info), 0);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 1);
	assert_one_lane_store(&w.rec);
	egpu_ringbuf_free(rb);
}
END_TEST

#define BATCH_OBJ EGPU_TEST_BUILD "/batch.bpf.o"

/* Run @prog of @o on the CPU with ctx = {a, b}; returns r0. */
static uint64_t run_cpu_in(egpu_obj *o, const char *prog, uint64_t a,
			   uint64_t b)
{
	uint64_t args[2] = { a, b };
	EGPU_OPTS(egpu_run_opts, ro, .ctx = args, .ctx_len = sizeof(args));

	ck_assert_msg(!egpu_prog_run(egpu_obj_prog(o, prog), &ro), "%s: %s",
		      prog, egpu_errmsg());
	return ro.retval;
}

/*
 * bpf_egpu_trace_warp_batch on the CPU: the one lane's record goes out at
 * once, as bpf_egpu_trace_warp's, and the state comes back unchanged (no
 * span on the CPU); bpf_egpu_trace_flush has nothing to close.
 */
START_TEST(cpu_batched_warp_record)
{
	egpu_obj *o = egpu_load(ctx, BATCH_OBJ, NULL);
	struct warp_records w = { 0 };
	egpu_ringbuf *rb;

	ck_assert_msg(o, "load: %s", egpu_errmsg());
	rb = egpu_ringbuf_new(egpu_obj_map(o, "brb"), on_warp_record, &w);
	ck_assert_ptr_nonnull(rb);
	ck_assert_uint_eq(run_cpu_in(o, "batch_one", 0x1238, 0x7f0000001230ull),
			  0x1238);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 1);
	assert_one_lane_store(&w.rec);
	ck_assert_uint_eq(run_cpu_in(o, "flush_one", 0x1238, 0), 0);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 0);
	egpu_ringbuf_free(rb);
}
END_TEST

#define SPAN_OBJ EGPU_TEST_BUILD "/span.bpf.o"

static int on_span(void *user, const void *data, size_t size)
{
	struct egpu_warp_rec *rec = user;
	struct egpu_span_iter it;
	struct egpu_span_info info;

	ck_assert_int_eq(egpu_span_begin(&it, data, size, &info), 0);
	ck_assert_int_eq(egpu_span_next(&it, rec), 1);
	ck_assert_int_eq(egpu_span_next(&it, &(struct egpu_warp_rec){ 0 }), 0);
	return 0;
}

/*
 * bpf_egpu_trace_span on the CPU: a span of the one lane's record,
 * published at once, decoded back; the state comes back as given, and
 * span_flush has nothing to publish.
 */
START_TEST(cpu_span_record)
{
	egpu_obj *o = egpu_load(ctx, SPAN_OBJ, NULL);
	struct egpu_warp_rec rec = { 0 };
	egpu_ringbuf *rb;

	ck_assert_msg(o, "load: %s", egpu_errmsg());
	rb = egpu_ringbuf_new(egpu_obj_map(o, "srb"), on_span, &rec);
	ck_assert_ptr_nonnull(rb);
	ck_assert_uint_eq(run_cpu_in(o, "span_one", 0x1238, 0x7f0000001230ull),
			  0x1238);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 1);
	ck_assert_uint_eq(rec.mask, 1);
	ck_assert_uint_eq(rec.addr[0], 0x7f0000001230ull);
	ck_assert_uint_eq(rec.size, 8);
	ck_assert_uint_eq(rec.kind, EGPU_MEM_STORE);
	ck_assert_uint_eq(rec.site, 77);
	ck_assert_uint_eq(rec.affine, 1);
	ck_assert_uint_eq(rec.bytes, 16);
	/* An address past 48 bits: a long record, decoded all the same. */
	ck_assert_uint_eq(run_cpu_in(o, "span_one", 0, 0xff00000000001230ull), 0);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 1);
	ck_assert_uint_eq(rec.addr[0], 0xff00000000001230ull);
	ck_assert_uint_eq(rec.site, 77);
	ck_assert_uint_eq(rec.affine, 0);
	ck_assert_uint_eq(run_cpu_in(o, "span_flush_one", 0x1238, 0), 0);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 0);
	egpu_ringbuf_free(rb);
}
END_TEST

/* Spans that are no spans, and records that run past theirs: errors. */
START_TEST(malformed_spans_refused)
{
	uint64_t span[1 + 2] = { 0, 0, 0 }, lanes = 0;
	struct egpu_span_iter it;
	struct egpu_warp_rec rec;

	ck_assert_int_eq(egpu_span_begin(&it, span, 20, NULL), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "20 bytes"));
	ck_assert_int_eq(egpu_span_begin(&it, span, 24, NULL), 0);
	ck_assert_int_eq(egpu_span_next(&it, &rec), 0); /* zero: the end */
	/* Scattered, 32 lanes of 8-byte deltas: 17 slots in a span of 1. */
	span[1] = 2 | 3 << 2 | 0xffffffffull << 32;
	ck_assert_int_eq(egpu_span_begin(&it, span, 24, NULL), 0);
	ck_assert_int_eq(egpu_span_next(&it, &rec), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "17 slots"));
	ck_assert_int_eq(egpu_span_count(span, 24, NULL), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "egpu_span_count"));
	/* No lanes. */
	span[1] = 1;
	ck_assert_int_eq(egpu_span_begin(&it, span, 24, NULL), 0);
	ck_assert_int_eq(egpu_span_next(&it, &rec), EGPU_EFORMAT);
	ck_assert_int_eq(egpu_span_count(span, 24, NULL), EGPU_EFORMAT);
	ck_assert_int_eq(egpu_span_count(span, 20, NULL), EGPU_EFORMAT);
	/* Affine, lanes 1 and 3: one record, two lanes, and lanes off the
	 * mask decode to 0. */
	span[1] = 1 | 0xaull << 32;
	span[2] = 0x1000 | 4ull << 48;
	ck_assert_int_eq(egpu_span_count(span, 24, &lanes), 1);
	ck_assert_uint_eq(lanes, 2);
	memset(&rec, 0xff, sizeof(rec));
	ck_assert_int_eq(egpu_span_begin(&it, span, 24, NULL), 0);
	ck_assert_int_eq(egpu_span_next(&it, &rec), 1);
	ck_assert_uint_eq(rec.addr[1], 0x1000);
	ck_assert_uint_eq(rec.addr[3], 0x1008);
	ck_assert_uint_eq(rec.addr[0] | rec.addr[2] | rec.addr[31], 0);
}
END_TEST

/*
 * Short records (8 bytes, a whole warp at unit stride) in either half of
 * a slot; a zero second half is padding before a record of whole slots,
 * a zero at a slot's start the end; a record of whole slots in a second
 * half is refused.
 */
START_TEST(short_records_decode)
{
	uint64_t span[1 + 8] = {
		0,
		span_short_word(EGPU_MEM_LOAD, 4, 5, 0x7f0000001000ull),
		span_short_word(EGPU_MEM_STORE, 8, 1023, 0x7f0000002000ull),
		span_short_word(EGPU_MEM_ASYNC, 16, 0, 0x1000),
		0, /* padding */
		span_word0(SPAN_AFFINE, 0, EGPU_MEM_LOAD, 4, 9, 0x3),
		span_affine_w1(0x5000, 4),
		span_short_word(EGPU_MEM_ATOMIC, 4, 7, 0xfffffffff000ull),
		0, /* the end */
	};
	static const struct { uint32_t bytes, size, kind, site, lanes; uint64_t base; } want[] = {
		{ 8, 4, EGPU_MEM_LOAD, 5, 32, 0x7f0000001000ull },
		{ 8, 8, EGPU_MEM_STORE, 1023, 32, 0x7f0000002000ull },
		{ 8, 16, EGPU_MEM_ASYNC, 0, 32, 0x1000 },
		{ 16, 4, EGPU_MEM_LOAD, 9, 2, 0x5000 },
		{ 8, 4, EGPU_MEM_ATOMIC, 7, 32, 0xfffffffff000ull },
	};
	struct egpu_span_iter it;
	struct egpu_warp_rec rec;
	uint64_t lanes = 0;

	ck_assert(span_short_fits(EGPU_MEM_ASYNC, 16, 1023));
	ck_assert(!span_short_fits(EGPU_MEM_LOAD, 2, 0));
	ck_assert(!span_short_fits(EGPU_MEM_LOAD, 4, 1024));
	ck_assert(!span_short_fits(0, 4, 0));
	ck_assert_int_eq(egpu_span_count(span, sizeof(span), &lanes), 5);
	ck_assert_uint_eq(lanes, 4 * 32 + 2);
	ck_assert_int_eq(egpu_span_begin(&it, span, sizeof(span), NULL), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_int_eq(egpu_span_next(&it, &rec), 1);
		ck_assert_uint_eq(rec.bytes, want[i].bytes);
		ck_assert_uint_eq(rec.size, want[i].size);
		ck_assert_uint_eq(rec.kind, want[i].kind);
		ck_assert_uint_eq(rec.site, want[i].site);
		ck_assert_int_eq(__builtin_popcount(rec.mask), (int)want[i].lanes);
		ck_assert_uint_eq(rec.affine, 1);
		ck_assert_int_eq(rec.stride, (int64_t)want[i].size);
		for (uint32_t lane = 0; lane < 32; lane++)
			ck_assert_uint_eq(rec.addr[lane], rec.mask >> lane & 1 ?
					  want[i].base + lane * want[i].size : 0);
	}
	ck_assert_int_eq(egpu_span_next(&it, &rec), 0);
	/* A 16-byte record where a short one left half a slot. */
	span[2] = span[5];
	span[3] = span[6];
	ck_assert_int_eq(egpu_span_begin(&it, span, sizeof(span), NULL), 0);
	ck_assert_int_eq(egpu_span_next(&it, &rec), 1);
	ck_assert_int_eq(egpu_span_next(&it, &rec), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "second half"));
	ck_assert_int_eq(egpu_span_count(span, sizeof(span), NULL), EGPU_EFORMAT);
}
END_TEST

START_TEST(batch_opts_errors)
{
	EGPU_OPTS(egpu_ringbuf_opts, o, .path = "/nonexistent/dir/trace.bin");
	egpu_ringbuf *rb = egpu_ringbuf_new(map("tiny"), never, NULL);

	ck_assert_int_eq(egpu_ringbuf_add_opts(rb, map("rb"), NULL, NULL, &o),
			 EGPU_EIO);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "/nonexistent/dir/trace.bin"));
	ck_assert_int_eq(egpu_ringbuf_add_opts(rb, map("rb"), NULL, NULL, NULL),
			 EGPU_EINVAL);
	o.path = NULL;
	o.batch_fn = on_batch;
	o.threads = 65;
	ck_assert_int_eq(egpu_ringbuf_add_opts(rb, map("rb"), NULL, NULL, &o),
			 EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "65 consumer threads for map 'rb'"));
	/* The map stays free for another consumer after a failed add. */
	ck_assert_int_eq(egpu_ringbuf_add(rb, map("rb"), never, NULL), 0);
	egpu_ringbuf_free(rb);
}
END_TEST

/*
 * Consumer threads on rings of one shard (host memory, or a ring in GPU
 * memory before the GPU): the caller's thread alone, every record in
 * order, batch and plain callbacks; free joins the threads.
 */
START_TEST(consumer_threads_on_one_shard)
{
	struct batches b = { 0 };
	struct events e = { 0 };
	EGPU_OPTS(egpu_ringbuf_opts, o, .batch_fn = on_batch, .threads = 4);
	EGPU_OPTS(egpu_ringbuf_opts, plain, .threads = 3);
	EGPU_OPTS(egpu_ringbuf_stats, st);
	egpu_ringbuf *rb = egpu_ringbuf_new_opts(map("rb"), NULL, &b, &o);

	ck_assert_msg(rb, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_ringbuf_add_opts(rb, map("drb"), on_event, &e,
					       &plain), 0);
	ck_assert_uint_eq(run_cpu("out", 10, 7), 10);
	ck_assert_uint_eq(run_cpu("out_dev", 5, 5), 5);
	ck_assert_int_eq(egpu_ringbuf_poll(rb, 100), 15);
	ck_assert_uint_eq(b.calls, 1);
	for (uint64_t i = 0; i < 10; i++)
		ck_assert_uint_eq(b.ev.ev[i].tid, i);
	ck_assert_uint_eq(e.n, 5);
	ck_assert_uint_eq(e.ev[4].tid, 4);
	ck_assert_int_eq(egpu_ringbuf_stats(rb, &st), 0);
	ck_assert_uint_eq(st.records, 15);
	ck_assert_uint_eq(st.bytes, 15 * sizeof(struct event));
	egpu_ringbuf_free(rb);
}
END_TEST

/*
 * A ring asking for GPU memory (EGPU_F_RING_DEVICE) is a host ring until
 * its object first uses the GPU: the CPU back end writes and reads it.
 */
START_TEST(cpu_output_into_a_device_ring)
{
	struct events e = { 0 };
	egpu_ringbuf *rb = egpu_ringbuf_new(map("drb"), on_event, &e);

	ck_assert_ptr_nonnull(rb);
	ck_assert(ring_in_device_memory(map("drb")->ring));
	ck_assert(!ring_in_device_memory(map("rb")->ring));
	ck_assert_uint_eq(run_cpu("out_dev", 10, 5), 10);
	ck_assert_int_eq(egpu_ringbuf_poll(rb, 100), 10);
	ck_assert_uint_eq(e.ev[9].tid, 9);
	ck_assert_uint_eq(e.ev[9].bid, 5);
	ck_assert_uint_eq(egpu_ringbuf_drops(rb), 0);
	egpu_ringbuf_free(rb);
}
END_TEST

START_TEST(cpu_reserve_submit_discard)
{
	uint64_t got[4] = { 0 };
	egpu_ringbuf *rb = egpu_ringbuf_new(map("rb"), on_pair, got);

	ck_assert_uint_eq(run_cpu("resv", 0, 0), 2);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 2);
	ck_assert_uint_eq(got[1], 100);
	ck_assert_uint_eq(got[2], 102);
	egpu_ringbuf_free(rb);
}
END_TEST

/* 4 KiB hold 64 records: of 80, 16 are dropped and counted. */
START_TEST(cpu_drops_are_exact)
{
	struct events e = { 0 };
	egpu_ringbuf *rb = egpu_ringbuf_new(map("tiny"), on_event, &e);

	ck_assert_uint_eq(egpu_map_max_entries(map("tiny")), 4096);
	ck_assert_uint_eq(run_cpu("out_tiny", 80, 1), 64);
	ck_assert_uint_eq(egpu_ringbuf_drops(rb), 16);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 64);
	e.n = 0;
	ck_assert_uint_eq(run_cpu("out_tiny", 3, 2), 3);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 3);
	ck_assert_uint_eq(e.ev[2].bid, 2);
	egpu_ringbuf_free(rb);
}
END_TEST

START_TEST(cpu_helper_errors_match_linux)
{
	ck_assert_uint_eq(run_cpu("bad_calls", 0, 0), 0);
}
END_TEST

static int on_word(void *user, const void *data, size_t size)
{
	ck_assert_uint_eq(size, 8);
	memcpy(user, data, 8);
	return 0;
}

/* perf output to PERF_EVENT_ARRAY and bpftime's 1527, one consumer. */
START_TEST(cpu_perf_output_on_both_map_kinds)
{
	uint64_t a = 0, b = 0;
	egpu_ringbuf *rb = egpu_ringbuf_new(map("perf"), on_word, &a);

	ck_assert_int_eq(egpu_ringbuf_add(rb, map("gpurb"), on_word, &b), 0);
	ck_assert_uint_eq(run_cpu("perf_out", 0, 0), 0);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 2);
	ck_assert_uint_eq(a, 42);
	ck_assert_uint_eq(b, 43);
	egpu_ringbuf_free(rb);
}
END_TEST

/* The CPU back end prints straight to stderr. */
START_TEST(cpu_prints_to_stderr)
{
	char path[] = "/tmp/egpu_print_XXXXXX", buf[512] = "";
	int fd = mkstemp(path), saved = dup(2);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	dup2(fd, 2);
	run_cpu("prints", 0, 0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fdopen(fd, "r");
	rewind(f);
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
	fclose(f);
	unlink(path);
	ck_assert_str_eq(buf, "printk -3 7 str" "vprintk 1 2 3 4 -5" "puts line\n");
}
END_TEST

/* The timerfd an event loop waits on turns readable without records. */
START_TEST(poll_waits_and_fd_ticks)
{
	egpu_ringbuf *rb = egpu_ringbuf_new(map("rb"), never, NULL);
	struct pollfd p = { .events = POLLIN };
	uint64_t t0 = now_ns();

	ck_assert_int_eq(egpu_ringbuf_poll(rb, 30), 0);
	ck_assert_uint_ge(now_ns() - t0, 29000000u);
	p.fd = egpu_ringbuf_fd(rb);
	ck_assert_int_ge(p.fd, 0);
	ck_assert_int_eq(egpu_ringbuf_fd(rb), p.fd);
	ck_assert_int_eq(poll(&p, 1, 1000), 1);
	ck_assert_int_eq(egpu_ringbuf_consume(rb), 0);
	egpu_ringbuf_free(rb);
}
END_TEST

/* ---- print records formatted from recorded arguments ---- */

/* A fake .rodata at device address 0x1000. */
static const char rodata[] = "x=%d y=%s z=%llx\n\0hello\0puts text\0no nul";
#define RO_BASE 0x1000u

static const char *fake_lookup(void *user, uint64_t addr, size_t *len,
			       const char **obj_name)
{
	(void)user;
	if (addr < RO_BASE || addr - RO_BASE >= sizeof(rodata) - 1)
		return NULL;
	*len = sizeof(rodata) - 1 - (addr - RO_BASE);
	*obj_name = "probe";
	return rodata + (addr - RO_BASE);
}

/* A print record with room for its arguments (r.args). */
union rec {
	struct print_rec r;
	uint64_t words[sizeof(struct print_rec) / 8 + PRINT_MAX_ARGS + 1];
};

static int format(const union rec *rec, size_t size, char *line, size_t len,
		  struct egpu_print_info *info)
{
	struct strbuf sb;
	int err;

	sb_init(&sb);
	err = print_format(rec, size, fake_lookup, NULL, &sb, info);
	snprintf(line, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
	return err;
}

START_TEST(print_records_formatted)
{
	union rec rec = { .r = { .fmt = RO_BASE, .fmt_size = 18, .kind = PRINT_PRINTK,
				 .nargs = 3, .block = { 1, 2, 3 }, .thread = { 4, 5, 6 } } };
	struct egpu_print_info info;
	size_t size = sizeof(rec.r) + 3 * 8;
	char line[256];

	rec.r.args[0] = (uint64_t)-5;
	rec.r.args[1] = RO_BASE + 18;
	rec.r.args[2] = 0xabc;
	ck_assert_int_eq(format(&rec, size, line, sizeof(line), &info), 0);
	ck_assert_str_eq(line, "x=-5 y=hello z=abc"); /* newline dropped */
	ck_assert_str_eq(info.obj, "probe");
	ck_assert_uint_eq(info.block[2], 3);
	ck_assert_uint_eq(info.thread[0], 4);
	/* A %s that is no string of the program's data shows its address. */
	rec.r.args[1] = 0x99;
	ck_assert_int_eq(format(&rec, size, line, sizeof(line), &info), 0);
	ck_assert_str_eq(line, "x=-5 y=(gpu string at 0x99) z=abc");
	rec.r.args[1] = RO_BASE + 34; /* "no nul": runs off the data */
	ck_assert_int_eq(format(&rec, size, line, sizeof(line), &info), 0);
	ck_assert_ptr_nonnull(strstr(line, "(gpu string at"));
	/* Fewer arguments than conversions: the rest stays as written. */
	rec.r.nargs = 1;
	ck_assert_int_eq(format(&rec, sizeof(rec.r) + 8, line, sizeof(line), &info), 0);
	ck_assert_str_eq(line, "x=-5 y=%s z=%llx");
	/* bpf_puts */
	rec.r = (struct print_rec){ .fmt = RO_BASE + 24, .kind = PRINT_PUTS };
	ck_assert_int_eq(format(&rec, sizeof(rec.r), line, sizeof(line), &info), 0);
	ck_assert_str_eq(line, "puts text");
	/* A format outside the program's data. */
	rec.r.fmt = 0x42;
	ck_assert_int_eq(format(&rec, sizeof(rec.r), line, sizeof(line), &info), 0);
	ck_assert_str_eq(line, "(string at 0x42, outside the program's global data)");
	ck_assert_ptr_null(info.obj);
}
END_TEST

/*
 * A format on the printing thread's stack travels in the record after the
 * arguments (PRINT_FMT_INLINE), as bpftime's probes build theirs; fmt
 * keeps the stack address, which no lookup is asked about.
 */
START_TEST(print_records_with_their_format_inline)
{
	static const char fmt[] = "on the stack: %d of %d\n";
	union {
		union rec rec;
		uint64_t words[sizeof(union rec) / 8 + 4];
	} u = { .rec.r = { .fmt = 0x7fff0000ull, .fmt_size = sizeof(fmt),
			   .kind = PRINT_PRINTK | PRINT_FMT_INLINE, .nargs = 2 } };
	struct egpu_print_info info;
	size_t size = sizeof(u.rec.r) + 2 * 8 + ((sizeof(fmt) + 7) & ~7u);
	char line[128];

	u.rec.r.args[0] = 3;
	u.rec.r.args[1] = 4;
	memcpy(u.rec.r.args + 2, fmt, sizeof(fmt));
	ck_assert_int_eq(format(&u.rec, size, line, sizeof(line), &info), 0);
	ck_assert_str_eq(line, "on the stack: 3 of 4");
	ck_assert_ptr_null(info.obj);
	/* Refused: bytes missing, no NUL at the end, longer than a stack,
	 * a bpf_puts string (read-only data only) */
	ck_assert_int_eq(format(&u.rec, size - 8, line, sizeof(line), &info),
			 EGPU_EFORMAT);
	u.rec.r.args[2 + (sizeof(fmt) - 1) / 8] = ~0ull; /* its last 8 bytes */
	ck_assert_int_eq(format(&u.rec, size, line, sizeof(line), &info),
			 EGPU_EFORMAT);
	memcpy(u.rec.r.args + 2, fmt, sizeof(fmt));
	u.rec.r.fmt_size = PRINT_INLINE_MAX + 8;
	ck_assert_int_eq(format(&u.rec, sizeof(u), line, sizeof(line), &info),
			 EGPU_EFORMAT);
	u.rec.r.fmt_size = sizeof(fmt);
	u.rec.r.kind = PRINT_PUTS | PRINT_FMT_INLINE;
	ck_assert_int_eq(format(&u.rec, size, line, sizeof(line), &info),
			 EGPU_EFORMAT);
}
END_TEST

START_TEST(malformed_print_records_refused)
{
	union rec rec = { .r = { .fmt = RO_BASE, .kind = PRINT_PRINTK, .nargs = 2 } };
	struct egpu_print_info info;
	char line[64];

	ck_assert_int_eq(format(&rec, 39, line, sizeof(line), &info), EGPU_EFORMAT);
	ck_assert_int_eq(format(&rec, sizeof(rec.r) + 8, line, sizeof(line), &info),
			 EGPU_EFORMAT); /* 2 arguments announced, 1 present */
	rec.r.nargs = PRINT_MAX_ARGS + 1;
	ck_assert_int_eq(format(&rec, sizeof(rec), line, sizeof(line), &info),
			 EGPU_EFORMAT);
	rec.r.nargs = 0;
	rec.r.kind = 7;
	ck_assert_int_eq(format(&rec, sizeof(rec.r), line, sizeof(line), &info),
			 EGPU_EFORMAT);
}
END_TEST

/* ---- what the GPU would load, checked by ptxas ---- */

static void assert_ptxas_accepts(const char *ptx)
{
	char path[] = "/tmp/egpu_events_XXXXXX.ptx", cmd[512];
	int fd = mkstemps(path, 4);
	size_t len = strlen(ptx);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, ptx, len), (ssize_t)len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s -arch=sm_90 -o /dev/null %s", EGPU_PTXAS, path);
	ck_assert_msg(system(cmd) == 0, "ptxas refused %s", path);
	unlink(path);
}

static egpu_obj *load_offline(egpu_ctx **octx)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	egpu_obj *o;

	*octx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(*octx);
	o = egpu_load(*octx, EVENTS_OBJ, NULL);
	ck_assert_msg(o, "%s", egpu_errmsg());
	return o;
}

/* Direct-run modules (program, its kernel, runtime, print ring variable). */
START_TEST(direct_run_modules_assemble)
{
	static const char *const progs[] = { "out", "out_tiny", "resv", "bad_calls",
					     "perf_out", "prints" };
	egpu_ctx *octx;
	egpu_obj *o = load_offline(&octx);

	if (access(EGPU_PTXAS, X_OK))
		return;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char *ptx = NULL;

		ck_assert_msg(!prog_kernel_ptx(egpu_obj_prog(o, progs[i]), "run",
					       "sm_90", &ptx), "%s: %s", progs[i],
			      egpu_errmsg());
		ck_assert_ptr_nonnull(strstr(ptx, ".visible .global .align 8 .u64 egpu_dev_print_ring"));
		assert_ptxas_accepts(ptx);
		free(ptx);
	}
	egpu_ctx_free(octx);
}
END_TEST

/*
 * Application kernels with ring and print probes at entry and exit: nine
 * on work (five into rings in GPU memory), two on wait_host; a memory
 * probe making warp records (bpf_egpu_trace_warp) on gather.
 */
START_TEST(instrumented_module_assembles)
{
	egpu_ctx *octx;
	egpu_obj *o = load_offline(&octx);
	size_t len, out_len;
	char *ptx, *out = NULL;
	FILE *f = fopen(EVENTS_PTX, "rb");

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	ptx = calloc(1, len + 1);
	ck_assert_uint_eq(fread(ptx, 1, len, f), len);
	fclose(f);
	ck_assert_int_eq(egpu_attach_all(o), 12);
	ck_assert_msg(!egpu_instrument_ptx(octx, ptx, len, &out, &out_len, NULL),
		      "%s", egpu_errmsg());
	ck_assert_ptr_nonnull(strstr(out, "egpu_dev_ringbuf_output"));
	ck_assert_ptr_nonnull(strstr(out, "egpu_dev_trace_printk"));
	if (!access(EGPU_PTXAS, X_OK))
		assert_ptxas_accepts(out);
	free(out);
	free(ptx);
	egpu_ctx_free(octx);
}
END_TEST

/*
 * The batched probes on gather, copied in: the span state is a register
 * of the kernel (no .local, no stack, no store of it), handed to the two
 * helpers by value, and the module assembles.
 */
/*
 * Probes @progs of @objpath (calling @fn, and @flush at exit) instrument
 * gather with their state in registers: no .local, stack or store for it.
 */
static void state_stays_in_registers(const char *objpath,
				     const char *const progs[2],
				     const char *fn, const char *flush)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	egpu_ctx *octx = egpu_ctx_new(&co);
	egpu_obj *o;
	size_t len, out_len;
	char *ptx = tu_read_file(EVENTS_PTX, &len), *out = NULL, *before, *after;

	ck_assert_ptr_nonnull(octx);
	o = egpu_load(octx, objpath, NULL);
	ck_assert_msg(o, "load: %s", egpu_errmsg());
	for (size_t i = 0; i < 2; i++) {
		egpu_prog *p = egpu_obj_prog(o, progs[i]);

		ck_assert_msg(egpu_attach_kernel(p, "gather",
						 egpu_prog_attach_point(p), NULL),
			      "%s: %s", progs[i], egpu_errmsg());
	}
	ck_assert_msg(!egpu_instrument_ptx(octx, ptx, len, &out, &out_len, NULL),
		      "%s", egpu_errmsg());
	before = tu_kernel_text(ptx, "gather");
	after = tu_kernel_text(out, "gather");
	ck_assert_ptr_nonnull(strstr(after, fn));
	ck_assert_ptr_nonnull(strstr(after, flush));
	ck_assert_int_ge(tu_count(after, "%egpu_tl_"), 3);
	ck_assert_int_eq(tu_count(after, ".local"), 0);
	ck_assert_int_eq(tu_count(after, "depot"), 0);
	ck_assert_int_eq(tu_count(after, "st.global"), tu_count(before, "st.global"));
	if (!access(EGPU_PTXAS, X_OK))
		assert_ptxas_accepts(out);
	free(before);
	free(after);
	free(out);
	free(ptx);
	egpu_ctx_free(octx);
}

START_TEST(batch_state_stays_in_registers)
{
	const char *const progs[] = { "batch_mem", "batch_exit" };

	state_stays_in_registers(BATCH_OBJ, progs, "egpu_dev_trace_warp_batch",
				 "egpu_dev_trace_flush");
}
END_TEST

START_TEST(span_state_stays_in_registers)
{
	const char *const progs[] = { "span_mem", "span_exit" };

	state_stays_in_registers(SPAN_OBJ, progs, "egpu_dev_trace_span",
				 "egpu_dev_trace_span_flush");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("events_api");
	TCase *tc = tcase_create("events_api");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ring_api_errors);
	tcase_add_test(tc, cpu_output_reaches_the_consumer);
	tcase_add_test(tc, batch_and_file_delivery);
	tcase_add_test(tc, chunk_delivery_and_raw_file);
	tcase_add_test(tc, malformed_chunks_refused);
	tcase_add_test(tc, span_fixture_decodes_as_recorded);
	tcase_add_test(tc, batch_opts_errors);
	tcase_add_test(tc, consumer_threads_on_one_shard);
	tcase_add_test(tc, cpu_warp_record);
	tcase_add_test(tc, cpu_batched_warp_record);
	tcase_add_test(tc, cpu_output_into_a_device_ring);
	tcase_add_test(tc, cpu_reserve_submit_discard);
	tcase_add_test(tc, cpu_drops_are_exact);
	tcase_add_test(tc, cpu_helper_errors_match_linux);
	tcase_add_test(tc, cpu_perf_output_on_both_map_kinds);
	tcase_add_test(tc, cpu_prints_to_stderr);
	tcase_add_test(tc, poll_waits_and_fd_ticks);
	tcase_add_test(tc, print_records_formatted);
	tcase_add_test(tc, print_records_with_their_format_inline);
	tcase_add_test(tc, malformed_print_records_refused);
	tcase_add_test(tc, direct_run_modules_assemble);
	tcase_add_test(tc, instrumented_module_assembles);
	tcase_add_test(tc, batch_state_stays_in_registers);
	tcase_add_test(tc, span_state_stays_in_registers);
	tcase_add_test(tc, cpu_span_record);
	tcase_add_test(tc, malformed_spans_refused);
	tcase_add_test(tc, short_records_decode);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
