/* SPDX-License-Identifier: MIT */
/*
 * GPU helpers as the CPU back end runs them: the program is one GPU thread
 * (thread and block 0 of a 1x1x1 grid, SM, warp and lane 0, a warp of one
 * active lane), the clocks are CLOCK_MONOTONIC, map helpers go to the host
 * maps (lib/maps), and output helpers print to stderr. Ring buffer and perf
 * output helpers write to the map's ring in host memory
 * (lib/maps/ring_cpu.c), which the API's ring consumer reads, until the
 * map's object uses the GPU.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/helpers.h"
#include "host_helpers.h"
#include "maps/host_map.h"
#include "egpu/ctx.h"
#include "maps/ring.h"
#include "maps/span_layout.h"

static uint64_t host_map_lookup_elem(uint64_t map, uint64_t key)
{
	return (uintptr_t)host_map_lookup((struct host_map *)(uintptr_t)map,
					  (const void *)(uintptr_t)key);
}

static uint64_t host_map_update_elem(uint64_t map, uint64_t key,
				     uint64_t value, uint64_t flags)
{
	return (uint64_t)host_map_update((struct host_map *)(uintptr_t)map,
					 (const void *)(uintptr_t)key,
					 (const void *)(uintptr_t)value, flags);
}

static uint64_t host_map_delete_elem(uint64_t map, uint64_t key)
{
	return (uint64_t)host_map_delete((struct host_map *)(uintptr_t)map,
					 (const void *)(uintptr_t)key);
}

static uint64_t host_ktime_get_ns(void)
{
	return now_ns();
}

static uint64_t print_formatted(uint64_t fmt, uint64_t fmt_size,
				const uint64_t *args, unsigned nargs)
{
	struct strbuf sb;
	uint64_t n;

	sb_init(&sb);
	host_format(&sb, (const char *)(uintptr_t)fmt, fmt_size, args, nargs);
	n = sb_ok(&sb) ? sb.len : 0;
	if (n)
		fwrite(sb.buf, 1, n, stderr);
	sb_free(&sb);
	return n;
}

static uint64_t host_trace_printk(uint64_t fmt, uint64_t fmt_size, uint64_t a,
				  uint64_t b, uint64_t c)
{
	const uint64_t args[3] = { a, b, c };

	return print_formatted(fmt, fmt_size, args, 3);
}

/* Linux's limits: whole 64-bit arguments, at most 12 of them. */
static uint64_t host_trace_vprintk(uint64_t fmt, uint64_t fmt_size,
				   uint64_t data, uint64_t data_len)
{
	uint64_t args[12];

	if (data_len % 8 || data_len > sizeof(args) || (data_len && !data))
		return (uint64_t)-EINVAL;
	if (data_len)
		memcpy(args, (const void *)(uintptr_t)data, data_len);
	return print_formatted(fmt, fmt_size, args, (unsigned)(data_len / 8));
}

/* @map is the struct event_ring the API gives ring maps (obj.c). */
static struct event_ring *ring_of(uint64_t map)
{
	return (struct event_ring *)(uintptr_t)map;
}

static uint64_t host_ringbuf_output(uint64_t map, uint64_t data, uint64_t size,
				    uint64_t flags)
{
	return (uint64_t)ring_cpu_output(ring_of(map), (const void *)(uintptr_t)data,
					 size, flags);
}

/* bpf_egpu_trace_warp for the one lane a CPU run is: an affine record. */
static uint64_t host_trace_warp(uint64_t map, uint64_t addr, uint64_t info,
				uint64_t tag)
{
	struct egpu_warp_access rec = {
		.base = addr, .tag = tag, .mask = 1, .site = (uint32_t)(info >> 32),
		.size = (uint16_t)info, .kind = (uint8_t)(info >> 16),
		.flags = EGPU_WARP_AFFINE
	};

	return (uint64_t)ring_cpu_output(ring_of(map), &rec, sizeof(rec), 0);
}

/*
 * bpf_egpu_trace_warp_batch on the CPU: the one lane's record goes out at
 * once (a CPU ring has no spans to fill), so no span is ever open and the
 * state stays as it was.
 */
static uint64_t host_trace_warp_batch(uint64_t map, uint64_t state,
				      uint64_t addr, uint64_t info, uint64_t tag)
{
	host_trace_warp(map, addr, info, tag);
	return state;
}

/*
 * bpf_egpu_trace_span on the CPU: a span of the one record of the one lane
 * a run is, published at once (no span stays open, the state stays as
 * given).
 */
static uint64_t host_trace_span(uint64_t map, uint64_t state, uint64_t addr,
				uint64_t info)
{
	uint64_t span[1 + 6] = { 0 }; /* struct span_info, then the record */
	uint32_t slots = span_encode_one(span + 1, addr, info);

	ring_cpu_output(ring_of(map), span, 8 + slots * SPAN_SLOT, 0);
	return state;
}

/* bpf_egpu_trace_flush and _span_flush on the CPU: no span is open (above). */
static uint64_t host_trace_flush(uint64_t map, uint64_t state)
{
	(void)map;
	(void)state;
	return 0;
}

static uint64_t host_ringbuf_reserve(uint64_t map, uint64_t size, uint64_t flags)
{
	return (uintptr_t)ring_cpu_reserve(ring_of(map), size, flags);
}

static uint64_t host_ringbuf_submit(uint64_t data, uint64_t flags)
{
	(void)flags;
	if (data)
		ring_cpu_commit((void *)(uintptr_t)data, false);
	return 0;
}

static uint64_t host_ringbuf_discard(uint64_t data, uint64_t flags)
{
	(void)flags;
	if (data)
		ring_cpu_commit((void *)(uintptr_t)data, true);
	return 0;
}

/*
 * As on the GPU: one ring whatever CPU index @flags names, no ctx bytes
 * appended (BPF_F_CTXLEN_MASK: -EINVAL), -ENOSPC when full.
 */
static uint64_t host_perf_event_output(uint64_t ctx, uint64_t map,
				       uint64_t flags, uint64_t data,
				       uint64_t size)
{
	long err;

	(void)ctx;
	if (flags >> 32)
		return (uint64_t)-EINVAL;
	err = ring_cpu_output(ring_of(map), (const void *)(uintptr_t)data, size, 0);
	return (uint64_t)(err == -EAGAIN ? -ENOSPC : err);
}

static uint64_t host_get_current_pid_tgid(void)
{
	return (uint64_t)getpid() << 32 | (uint32_t)gettid();
}

/*
 * Host probes' bpf_probe_read_user: the application's memory, read by the
 * kernel on the process's behalf, so a bad address is -EFAULT (dst
 * zeroed, as Linux does) rather than a crash of the application.
 */
static uint64_t host_probe_read_user(uint64_t dst, uint64_t size, uint64_t src)
{
	struct iovec to = { (void *)(uintptr_t)dst, size };
	struct iovec from = { (void *)(uintptr_t)src, size };

	if (process_vm_readv(getpid(), &to, 1, &from, 1, 0) == (ssize_t)size)
		return 0;
	memset((void *)(uintptr_t)dst, 0, size);
	return (uint64_t)-EFAULT;
}

static uint64_t host_puts(uint64_t s)
{
	return fprintf(stderr, "%s\n", (const char *)(uintptr_t)s) < 0;
}

static uint64_t store_xyz(uint64_t x, uint64_t y, uint64_t z, uint64_t v)
{
	*(uint64_t *)(uintptr_t)x = v;
	*(uint64_t *)(uintptr_t)y = v;
	*(uint64_t *)(uintptr_t)z = v;
	return 0;
}

static uint64_t host_index_xyz(uint64_t x, uint64_t y, uint64_t z)
{
	return store_xyz(x, y, z, 0);
}

static uint64_t host_dim_xyz(uint64_t x, uint64_t y, uint64_t z)
{
	return store_xyz(x, y, z, 1);
}

static uint64_t host_zero(void)
{
	return 0;
}

/* One thread: a warp of one lane, which is always active. */
static uint64_t host_get_active_mask(void)
{
	return 1;
}

static uint64_t host_warp_ballot(uint64_t pred)
{
	return pred != 0;
}

static uint64_t host_warp_match(uint64_t v)
{
	(void)v;
	return 1;
}

/* Every lane there is (one) reads its own value. */
static uint64_t host_warp_shfl(uint64_t v, uint64_t lane)
{
	(void)lane;
	return v;
}

/* An atomic add all the same: several host threads may run programs. */
static uint64_t host_warp_add(uint64_t ptr, uint64_t delta)
{
	return __atomic_fetch_add((uint64_t *)(uintptr_t)ptr, delta,
				  __ATOMIC_RELAXED);
}

/* As on the GPU, at most HELPER_NANOSLEEP_MAX_NS per call. */
static uint64_t host_nanosleep(uint64_t ns)
{
	struct timespec ts = { 0, (long)(ns < HELPER_NANOSLEEP_MAX_NS ? ns :
					 HELPER_NANOSLEEP_MAX_NS) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return 0;
}

#define HOST_HELPER(id, fn) { id, #fn, (void (*)(void))fn }

const struct host_helper host_helpers[] = {
	HOST_HELPER(HELPER_MAP_LOOKUP, host_map_lookup_elem),
	HOST_HELPER(HELPER_MAP_UPDATE, host_map_update_elem),
	HOST_HELPER(HELPER_MAP_DELETE, host_map_delete_elem),
	HOST_HELPER(HELPER_KTIME_GET_NS, host_ktime_get_ns),
	HOST_HELPER(HELPER_GLOBALTIMER, host_ktime_get_ns),
	HOST_HELPER(HELPER_TRACE_PRINTK, host_trace_printk),
	HOST_HELPER(HELPER_TRACE_VPRINTK, host_trace_vprintk),
	HOST_HELPER(HELPER_RINGBUF_OUTPUT, host_ringbuf_output),
	HOST_HELPER(HELPER_TRACE_WARP, host_trace_warp),
	HOST_HELPER(HELPER_TRACE_WARP_BATCH, host_trace_warp_batch),
	HOST_HELPER(HELPER_TRACE_FLUSH, host_trace_flush),
	HOST_HELPER(HELPER_TRACE_SPAN, host_trace_span),
	HOST_HELPER(HELPER_TRACE_SPAN_FLUSH, host_trace_flush),
	HOST_HELPER(HELPER_RINGBUF_RESERVE, host_ringbuf_reserve),
	HOST_HELPER(HELPER_RINGBUF_SUBMIT, host_ringbuf_submit),
	HOST_HELPER(HELPER_RINGBUF_DISCARD, host_ringbuf_discard),
	HOST_HELPER(HELPER_PERF_EVENT_OUTPUT, host_perf_event_output),
	HOST_HELPER(HELPER_GET_PID_TGID, host_get_current_pid_tgid),
	HOST_HELPER(HELPER_PROBE_READ_USER, host_probe_read_user),
	HOST_HELPER(HELPER_PUTS, host_puts),
	HOST_HELPER(HELPER_BLOCK_IDX, host_index_xyz),
	HOST_HELPER(HELPER_THREAD_IDX, host_index_xyz),
	HOST_HELPER(HELPER_BLOCK_DIM, host_dim_xyz),
	HOST_HELPER(HELPER_GRID_DIM, host_dim_xyz),
	HOST_HELPER(HELPER_SMID, host_zero),
	HOST_HELPER(HELPER_WARPID, host_zero),
	HOST_HELPER(HELPER_LANEID, host_zero),
	HOST_HELPER(HELPER_ACTIVE_MASK, host_get_active_mask),
	HOST_HELPER(HELPER_WARP_BALLOT, host_warp_ballot),
	HOST_HELPER(HELPER_WARP_MATCH, host_warp_match),
	HOST_HELPER(HELPER_WARP_SHFL, host_warp_shfl),
	HOST_HELPER(HELPER_WARP_ADD, host_warp_add),
	HOST_HELPER(HELPER_NANOSLEEP, host_nanosleep),
};

const size_t host_helper_cnt = ARRAY_SIZE(host_helpers);

const struct host_helper *host_helper_find(int32_t id)
{
	for (size_t i = 0; i < host_helper_cnt; i++)
		if (host_helpers[i].id == id)
			return &host_helpers[i];
	return NULL;
}
