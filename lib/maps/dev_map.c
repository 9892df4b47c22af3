/* SPDX-License-Identifier: MIT */
/*
 * Maps in GPU memory, host side: allocation, and the host's lookups and
 * updates, which copy only the bytes they need (one small copy for an array
 * value, a batch of consecutive slots for a hash probe).
 *
 * Every copy goes through the map's own non-blocking stream, so it neither
 * waits for the application's kernels (the legacy default stream's
 * implicit synchronisation) nor delays them; small ones through a
 * page-locked staging buffer, which the copy engine writes directly (a
 * pageable destination costs a bounce through the driver's buffer).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cu.h"
#include "maps/dev_map.h"
#include "maps/host_map.h"
#include "maps/layout.h"
#include "maps/ring.h"

/*
 * Bytes of consecutive hash slots one probe copy reads. A small device to
 * host copy costs its latency, not its size, so one copy usually covers the
 * whole probe chain (chains are short: the table is at most half full).
 */
#define PROBE_BYTES 1024
/* Bytes of slots next_key scans per copy. */
#define SCAN_BYTES (64 * 1024)
#define NO_SLOT UINT32_MAX
/* Copies up to this size go through the staging buffer. */
#define STAGE_BYTES 4096
/* A copy is waited for by spinning this long, then by blocking. */
#define SPIN_NS 200000

struct dev_map {
	struct dev_map_desc desc; /* host copy; desc.count lives on the device */
	CUdeviceptr base;         /* the descriptor, then the data */
	uint8_t *host;            /* host_memory maps: base's host address */
	CUcontext ctx;
	char *name;
	pthread_mutex_t io_lock;  /* one copy at a time on stream and stage */
	CUstream stream;          /* non-blocking; made at the first copy */
	void *stage;              /* STAGE_BYTES, page-locked */
};

/*
 * Make the map's context current on the calling thread (its stream and
 * staging buffer belong to it); *@prev is what leave() restores.
 */
static int enter(const struct dev_map *m, CUcontext *prev)
{
	*prev = NULL;
	if (cu_check(cu()->cuCtxGetCurrent(prev), "cuCtxGetCurrent") ||
	    (*prev != m->ctx &&
	     cu_check(cu()->cuCtxSetCurrent(m->ctx), "cuCtxSetCurrent"))) {
		err_prefix("map '%s'", m->name);
		return -EIO;
	}
	return 0;
}

/* A thread that had no context keeps the map's. */
static void leave(const struct dev_map *m, CUcontext prev)
{
	if (prev && prev != m->ctx)
		cu()->cuCtxSetCurrent(prev);
}

static int io_check(const struct dev_map *m, CUresult res, const char *what)
{
	if (cu_check(res, what)) {
		err_prefix("map '%s'", m->name);
		return -EIO;
	}
	return 0;
}

/* The stream and staging buffer, at the first copy (io_lock held). */
static int io_open(struct dev_map *m)
{
	const struct cu_driver *d = cu();

	if (m->stage)
		return 0;
	if (!m->stream &&
	    io_check(m, d->cuStreamCreate(&m->stream, CU_STREAM_NON_BLOCKING),
		     "cuStreamCreate"))
		return -EIO;
	return io_check(m, d->cuMemAllocHost(&m->stage, STAGE_BYTES),
			"cuMemAllocHost");
}

/*
 * Wait for the map's stream: a small copy takes microseconds, less than
 * a blocking wait's wake-up, so spin on it first.
 */
static CUresult io_wait(const struct dev_map *m)
{
	uint64_t t0 = now_ns();
	CUresult res;

	while ((res = cu()->cuStreamQuery(m->stream)) == CUDA_ERROR_NOT_READY)
		if (now_ns() - t0 > SPIN_NS)
			return cu()->cuStreamSynchronize(m->stream);
	return res;
}

/* Bytes in GPU memory a copy reaches: @rows of @width, @pitch apart. */
struct span {
	uint64_t addr;
	size_t width;
	size_t rows;
	size_t pitch;
};

/*
 * A map in page-locked host memory is read and written in place: the GPU
 * reaches the same bytes over the bus. The fences order the copy with the
 * program's accesses as seen from the host (values written by a running
 * kernel arrive when the GPU's stores reach memory, as in bpftime).
 */
static int host_copy(struct dev_map *m, const struct span *s, void *host,
		     bool to_device)
{
	uint8_t *at = m->host + (s->addr - m->base), *h = host;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (size_t r = 0; r < s->rows; r++, at += s->pitch, h += s->width)
		if (to_device)
			memcpy(at, h, s->width);
		else
			memcpy(h, at, s->width);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* Start copying @s to or from @buf (rows packed) on the map's stream. */
static CUresult start_copy(const struct dev_map *m, const struct span *s,
			   void *buf, bool to_device)
{
	CUDA_MEMCPY2D c = { .WidthInBytes = s->width, .Height = s->rows };

	if (s->rows == 1)
		return to_device ?
		       cu()->cuMemcpyHtoDAsync(s->addr, buf, s->width, m->stream) :
		       cu()->cuMemcpyDtoHAsync(buf, s->addr, s->width, m->stream);
	if (to_device) {
		c.srcMemoryType = CU_MEMORYTYPE_HOST;
		c.srcHost = buf;
		c.srcPitch = s->width;
		c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
		c.dstDevice = s->addr;
		c.dstPitch = s->pitch;
	} else {
		c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
		c.srcDevice = s->addr;
		c.srcPitch = s->pitch;
		c.dstMemoryType = CU_MEMORYTYPE_HOST;
		c.dstHost = buf;
		c.dstPitch = s->width;
	}
	return cu()->cuMemcpy2DAsync(&c, m->stream);
}

/*
 * Copy span @s between GPU memory and @host (its rows packed), either way,
 * on the map's stream; through the staging buffer when they fit it.
 */
static int map_copy_span(struct dev_map *m, const struct span *s, void *host,
			 bool to_device)
{
	size_t n = s->width * s->rows;
	bool staged = n <= STAGE_BYTES;
	CUresult res;
	int err;

	if (m->host)
		return host_copy(m, s, host, to_device);
	pthread_mutex_lock(&m->io_lock);
	err = io_open(m);
	if (!err) {
		void *buf = staged ? m->stage : host;

		if (staged && to_device)
			memcpy(buf, host, n);
		res = start_copy(m, s, buf, to_device);
		err = io_check(m, res ? res : io_wait(m),
			       to_device ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync");
	}
	if (!err && staged && !to_device)
		memcpy(host, m->stage, n);
	pthread_mutex_unlock(&m->io_lock);
	return err;
}

static int map_copy(struct dev_map *m, uint64_t addr, void *host, size_t n,
		    bool to_device)
{
	const struct span s = { .addr = addr, .width = n, .rows = 1, .pitch = n };

	return map_copy_span(m, &s, host, to_device);
}

static int dtoh(struct dev_map *m, void *dst, uint64_t off, size_t n)
{
	return map_copy(m, m->base + off, dst, n, false);
}

static int htod(struct dev_map *m, uint64_t off, const void *src, size_t n)
{
	return map_copy(m, m->base + off, (void *)src, n, true); /* only read */
}

/* map_copy() from any thread: the map's context made current meanwhile. */
static int copy_at(struct dev_map *m, uint64_t addr, void *host, size_t n,
		   bool to_device)
{
	CUcontext prev;
	int err = enter(m, &prev);

	if (!err) {
		err = map_copy(m, addr, host, n, to_device);
		leave(m, prev);
	}
	return err;
}

int dev_map_read(struct dev_map *m, void *dst, uint64_t addr, size_t n)
{
	return copy_at(m, addr, dst, n, false);
}

int dev_map_write(struct dev_map *m, uint64_t addr, const void *src, size_t n)
{
	return copy_at(m, addr, (void *)src, n, true); /* only read */
}

int dev_map_zero(struct dev_map *m, uint64_t addr, size_t n)
{
	CUcontext prev;
	int err = enter(m, &prev);

	if (err)
		return err;
	pthread_mutex_lock(&m->io_lock);
	err = io_open(m);
	if (!err) {
		CUresult res = cu()->cuMemsetD8Async(addr, 0, n, m->stream);

		err = io_check(m, res ? res : io_wait(m), "cuMemsetD8Async");
	}
	pthread_mutex_unlock(&m->io_lock);
	leave(m, prev);
	return err;
}

/* ---- creation ---- */

static int check_spec(const struct bpf_map_spec *spec)
{
	/* A ring's data is its struct dev_ring, given as spec->init. */
	if (map_type_is_ring(spec->type))
		return spec->init && spec->init_len == sizeof(struct dev_ring) ? 0 :
		       err_set(EGPU_EINVAL, "map '%s': a ring needs its dev_ring",
			       spec->name);
	if (spec->type != EGPU_MAP_HASH && !map_type_is_array(spec->type))
		return err_set(EGPU_ENOTSUP,
			       "map '%s': type %u cannot live in GPU memory as a map",
			       spec->name, spec->type);
	if (!spec->key_size || !spec->value_size || !spec->max_entries)
		return err_set(EGPU_EINVAL,
			       "map '%s': key size %u, value size %u and max entries %u must not be 0",
			       spec->name, spec->key_size, spec->value_size,
			       spec->max_entries);
	if (map_type_is_array(spec->type) && spec->key_size != 4)
		return err_set(EGPU_EINVAL,
			       "map '%s': array keys are 4-byte indices, not %u bytes",
			       spec->name, spec->key_size);
	if (spec->type == EGPU_MAP_HASH &&
	    (spec->max_entries > (UINT32_MAX - 1) / 2 ||
	     (uint64_t)spec->key_size + spec->value_size > UINT32_MAX / 2))
		return err_set(EGPU_E2BIG,
			       "map '%s': hash map too large (%u entries of %u + %u bytes)",
			       spec->name, spec->max_entries, spec->key_size,
			       spec->value_size);
	return 0;
}

static uint32_t default_threads(const struct bpf_map_spec *spec)
{
	uint64_t per_thread = (uint64_t)spec->value_size * spec->max_entries;
	uint32_t t = DEV_MAP_THREADS_MAX;

	/* t * per_thread > bound, without overflow */
	while (t > 1 && t > DEV_MAP_THREADS_BYTES / per_thread)
		t >>= 1;
	return t;
}

static int choose_threads(const struct bpf_map_spec *spec, uint32_t threads,
			  uint32_t *out)
{
	if (!map_type_per_thread(spec->type))
		threads = 1;
	else if (!threads)
		threads = default_threads(spec);
	else if (threads & (threads - 1))
		return err_set(EGPU_EINVAL,
			       "map '%s': per-thread slots %u is not a power of two",
			       spec->name, threads);
	*out = threads;
	return 0;
}

/* Fill the descriptor (but data) and compute the data's size. */
static int describe(const struct bpf_map_spec *spec, uint32_t threads,
		    struct dev_map_desc *d, uint64_t *bytes)
{
	uint64_t n;

	*d = (struct dev_map_desc){
		.type = spec->type,
		.key_size = spec->key_size,
		.value_size = spec->value_size,
		.max_entries = spec->max_entries,
		.threads = threads,
	};
	if (map_type_is_ring(spec->type)) {
		*bytes = sizeof(struct dev_ring);
		return 0;
	}
	if (spec->type == EGPU_MAP_HASH) {
		d->slot_cnt = 2 * spec->max_entries + 1; /* at most half full */
		d->slot_size = dev_slot_size(spec->key_size, spec->value_size);
		*bytes = (uint64_t)d->slot_cnt * d->slot_size;
		return 0;
	}
	if (__builtin_mul_overflow((uint64_t)spec->max_entries * threads,
				   (uint64_t)spec->value_size, &n) ||
	    n > UINT64_MAX - DEV_MAP_DATA_OFFSET)
		return err_set(EGPU_E2BIG,
			       "map '%s': %u entries x %u threads x %u bytes overflows",
			       spec->name, spec->max_entries, threads,
			       spec->value_size);
	*bytes = n;
	return 0;
}

/* bpftime's host maps (1512, 1513): page-locked, mapped into the GPU. */
static int alloc_host(struct dev_map *m, uint64_t total)
{
	const struct cu_driver *d = cu();
	void *host = NULL;
	int err;

	err = cu_check(d->cuMemAllocHost(&host, total), "cuMemAllocHost");
	if (err)
		return err;
	m->host = host;
	memset(host, 0, total);
	return cu_check(d->cuMemHostGetDevicePointer(&m->base, host, 0),
			"cuMemHostGetDevicePointer");
}

/* A map larger than the GPU's free memory is refused before allocating. */
static int fits_gpu(uint64_t total)
{
	size_t free_b = 0, all_b = 0;
	int err = cu_check(cu()->cuMemGetInfo(&free_b, &all_b), "cuMemGetInfo");

	if (err || total <= free_b)
		return err;
	/* alloc_and_fill() names the map and the size */
	return err_set(EGPU_ENOMEM, "only %zu bytes free (of %zu)", free_b,
		       all_b);
}

static int alloc_dev(struct dev_map *m, uint64_t total)
{
	const struct cu_driver *d = cu();
	int err = fits_gpu(total);

	if (!err)
		err = cu_check(d->cuMemAlloc(&m->base, total), "cuMemAlloc");
	return err ? err : cu_check(d->cuMemsetD8(m->base, 0, total),
				    "cuMemsetD8");
}

static int alloc_and_fill(struct dev_map *m, const struct bpf_map_spec *spec,
			  uint64_t bytes)
{
	uint64_t total = DEV_MAP_DATA_OFFSET + bytes;
	int err;

	err = spec->host_memory ? alloc_host(m, total) : alloc_dev(m, total);
	if (err) {
		err_prefix("map '%s': %llu bytes of %s memory", spec->name,
			   (unsigned long long)total,
			   spec->host_memory ? "page-locked host" : "GPU");
		return err;
	}
	m->desc.data = m->base + DEV_MAP_DATA_OFFSET;
	if (htod(m, 0, &m->desc, sizeof(m->desc)))
		return EGPU_ECUDA;
	/* Global data (.data, .rodata) starts with its initial bytes, a
	 * ring with its struct dev_ring. */
	if (spec->init && (spec->type == EGPU_MAP_ARRAY ||
			   spec->type == EGPU_MAP_GPU_ARRAY ||
			   map_type_is_ring(spec->type)) &&
	    htod(m, DEV_MAP_DATA_OFFSET, spec->init,
		 spec->init_len < bytes ? spec->init_len : bytes))
		return EGPU_ECUDA;
	return 0;
}

int dev_map_new(const struct bpf_map_spec *spec, uint32_t threads,
		struct dev_map **out)
{
	struct dev_map *m;
	uint64_t bytes = 0;
	int err;

	err = check_spec(spec);
	if (!err)
		err = choose_threads(spec, threads, &threads);
	if (err)
		return err;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->name = strdup(spec->name))) {
		free(m);
		return err_set(EGPU_ENOMEM, "map '%s': out of memory", spec->name);
	}
	pthread_mutex_init(&m->io_lock, NULL);
	err = describe(spec, threads, &m->desc, &bytes);
	if (!err && (err = cu_ctx_current(&m->ctx)))
		err_prefix("map '%s'", spec->name);
	if (!err)
		err = alloc_and_fill(m, spec, bytes);
	if (err) {
		dev_map_free(m);
		return err;
	}
	*out = m;
	return 0;
}

void dev_map_free(struct dev_map *m)
{
	const struct cu_driver *d;
	CUcontext prev;

	if (!m)
		return;
	if ((m->base || m->host || m->stream) && !enter(m, &prev)) {
		d = cu();
		if (m->stream)
			d->cuStreamDestroy(m->stream);
		if (m->stage)
			d->cuMemFreeHost(m->stage);
		if (m->host)
			d->cuMemFreeHost(m->host);
		else if (m->base)
			d->cuMemFree(m->base);
		leave(m, prev);
	}
	pthread_mutex_destroy(&m->io_lock);
	free(m->name);
	free(m);
}

uint64_t dev_map_handle(const struct dev_map *m)
{
	return m->base;
}

uint64_t dev_map_value_base(const struct dev_map *m)
{
	return map_type_is_array(m->desc.type) ? m->desc.data : 0;
}

uint64_t dev_map_data(const struct dev_map *m)
{
	return m->desc.data;
}

uint32_t dev_map_threads(const struct dev_map *m)
{
	return m->desc.threads;
}

/* ---- arrays ---- */

/*
 * Where key @idx's values are: all threads' side by side for per-thread
 * maps, one row per SM for SM arrays (an SM's values of every key are
 * side by side: layout.h).
 */
static struct span array_span(const struct dev_map *m, uint32_t idx)
{
	const struct dev_map_desc *d = &m->desc;
	size_t vs = d->value_size;

	if (d->type == EGPU_MAP_SM_ARRAY)
		return (struct span){ .addr = m->base + DEV_MAP_DATA_OFFSET + idx * vs,
				      .width = vs, .rows = d->threads,
				      .pitch = (size_t)d->max_entries * vs };
	vs *= d->threads;
	return (struct span){ .addr = m->base + DEV_MAP_DATA_OFFSET + idx * vs,
			      .width = vs, .rows = 1, .pitch = vs };
}

static int array_lookup(struct dev_map *m, const void *key, void *value)
{
	uint32_t idx;
	struct span s;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= m->desc.max_entries)
		return -ENOENT;
	s = array_span(m, idx);
	return map_copy_span(m, &s, value, false);
}

static int array_update(struct dev_map *m, const void *key, const void *value,
			uint64_t flags)
{
	uint32_t idx;
	struct span s;

	memcpy(&idx, key, sizeof(idx));
	if (idx >= m->desc.max_entries)
		return -E2BIG;
	if (flags == EGPU_NOEXIST)
		return -EEXIST; /* every array entry always exists */
	s = array_span(m, idx);
	return map_copy_span(m, &s, (void *)value, true); /* only read */
}

static int array_next_key(struct dev_map *m, const void *key, void *next)
{
	uint32_t idx = 0;

	if (key) {
		memcpy(&idx, key, sizeof(idx));
		idx = idx < m->desc.max_entries ? idx + 1 : 0;
	}
	if (idx >= m->desc.max_entries)
		return -ENOENT;
	memcpy(next, &idx, sizeof(idx));
	return 0;
}

/* ---- hash ---- */

/* A walk along a key's probe chain, and what it found. */
struct probe {
	uint32_t home;
	uint32_t walked;    /* slots looked at, from home on */
	uint32_t slot;      /* the key's slot, NO_SLOT when absent */
	uint32_t word;      /* its state word */
	uint32_t free_dist; /* first reusable slot's distance from home, or NO_SLOT */
	uint32_t free_word; /* its state word */
};

static uint64_t slot_off(const struct dev_map *m, uint32_t i)
{
	return DEV_MAP_DATA_OFFSET + (uint64_t)i * m->desc.slot_size;
}

static uint32_t slot_word(const uint8_t *slot)
{
	struct dev_slot_hdr hdr;

	memcpy(&hdr, slot, sizeof(hdr));
	return hdr.state;
}

static uint32_t probe_index(const struct dev_map *m, const struct probe *p,
			    uint32_t dist)
{
	return (uint32_t)(((uint64_t)p->home + dist) % m->desc.slot_cnt);
}

/*
 * Look at @n slots copied from distance p->walked on. With a key, stop
 * (return 1) at the key or at an EMPTY slot; without, at a reusable slot.
 */
static int probe_batch(const struct dev_map *m, const uint8_t *buf,
		       uint32_t n, const void *key, void *value,
		       struct probe *p)
{
	const uint32_t ss = m->desc.slot_size;

	for (uint32_t j = 0; j < n; j++) {
		const uint8_t *s = buf + (size_t)j * ss;
		uint32_t word = slot_word(s), state = dev_slot_state_of(word);

		if ((state == DEV_SLOT_EMPTY || state == DEV_SLOT_DELETED) &&
		    p->free_dist == NO_SLOT) {
			p->free_dist = p->walked + j;
			p->free_word = word;
			if (!key)
				return 1;
		}
		if (state == DEV_SLOT_EMPTY)
			return 1;
		if (key && state == DEV_SLOT_USED &&
		    !memcmp(s + dev_slot_key_offset(), key, m->desc.key_size)) {
			p->slot = probe_index(m, p, p->walked + j);
			p->word = word;
			if (value)
				memcpy(value, s + dev_slot_value_offset(m->desc.key_size),
				       m->desc.value_size);
			return 1;
		}
	}
	return 0;
}

/*
 * Walk on from p->walked in copies of PROBE_BYTES until probe_batch stops
 * (returns 1) or @limit slots were looked at (returns 0).
 */
static int probe_walk(struct dev_map *m, const void *key, void *value,
		      struct probe *p, uint32_t limit)
{
	const uint32_t ss = m->desc.slot_size, cnt = m->desc.slot_cnt;
	uint32_t batch = PROBE_BYTES / ss ? PROBE_BYTES / ss : 1;
	uint8_t *buf = malloc((size_t)batch * ss);
	int ret = 0;

	if (!buf) {
		err_set(EGPU_ENOMEM, "map '%s': out of memory", m->name);
		return -ENOMEM;
	}
	while (!ret && p->walked < limit) {
		uint32_t i = probe_index(m, p, p->walked);
		uint32_t n = batch < cnt - i ? batch : cnt - i;

		if (n > limit - p->walked)
			n = limit - p->walked;
		ret = dtoh(m, buf, slot_off(m, i), (size_t)n * ss);
		if (!ret && !(ret = probe_batch(m, buf, n, key, value, p)))
			p->walked += n;
	}
	free(buf);
	return ret;
}

/*
 * Walk @key's probe chain, copying its value into @value (if given) when
 * found. The first copy from home usually settles it; otherwise the walk
 * goes no farther than desc.max_probe, which bounds every key's distance
 * from home (tombstones may have replaced every EMPTY slot).
 */
static int hash_probe(struct dev_map *m, const void *key, void *value,
		      struct probe *p)
{
	const uint32_t cnt = m->desc.slot_cnt;
	uint32_t first = PROBE_BYTES / m->desc.slot_size, max_probe;
	int ret;

	*p = (struct probe){ .home = dev_hash_key(key, m->desc.key_size) % cnt,
			     .slot = NO_SLOT, .free_dist = NO_SLOT };
	first = first < 1 ? 1 : first < cnt ? first : cnt;
	ret = probe_walk(m, key, value, p, first);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = dtoh(m, &max_probe, offsetof(struct dev_map_desc, max_probe),
		   sizeof(max_probe));
	if (!ret && max_probe >= first)
		ret = probe_walk(m, key, value, p,
				 max_probe < cnt ? max_probe + 1 : cnt);
	return ret < 0 ? ret : 0;
}

static int count_add(struct dev_map *m, int32_t delta)
{
	const uint64_t off = offsetof(struct dev_map_desc, count);
	uint32_t count;
	int err = dtoh(m, &count, off, sizeof(count));

	if (err)
		return err;
	count += (uint32_t)delta;
	return htod(m, off, &count, sizeof(count));
}

static int hash_lookup(struct dev_map *m, const void *key, void *value)
{
	struct probe p;
	int err = hash_probe(m, key, value, &p);

	return err ? err : p.slot == NO_SLOT ? -ENOENT : 0;
}

/*
 * Fill the free slot @p found, in the device's order: key and value,
 * max_probe, then the state word, so a device reader sees a whole slot.
 */
static int hash_insert(struct dev_map *m, const struct probe *p,
		       const void *key, const void *value)
{
	const struct dev_map_desc *d = &m->desc;
	size_t key_len = dev_round8(d->key_size), len = key_len + d->value_size;
	uint32_t state = dev_slot_claim_word(p->free_word, DEV_SLOT_USED);
	uint64_t off = slot_off(m, probe_index(m, p, p->free_dist));
	struct dev_map_desc cur;
	uint8_t *buf;
	int err;

	err = dtoh(m, &cur, 0, sizeof(cur));
	if (err)
		return err;
	if (cur.count >= d->max_entries)
		return -E2BIG;
	buf = calloc(1, len);
	if (!buf) {
		err_set(EGPU_ENOMEM, "map '%s': out of memory", m->name);
		return -ENOMEM;
	}
	memcpy(buf, key, d->key_size);
	memcpy(buf + key_len, value, d->value_size);
	err = htod(m, off + dev_slot_key_offset(), buf, len);
	free(buf);
	if (!err && p->free_dist > cur.max_probe)
		err = htod(m, offsetof(struct dev_map_desc, max_probe),
			   &p->free_dist, sizeof(p->free_dist));
	if (!err)
		err = htod(m, off, &state, sizeof(state));
	cur.count++;
	return err ? err : htod(m, offsetof(struct dev_map_desc, count),
				&cur.count, sizeof(cur.count));
}

static int hash_update(struct dev_map *m, const void *key, const void *value,
		       uint64_t flags)
{
	struct probe p;
	int err = hash_probe(m, key, NULL, &p);

	if (err)
		return err;
	if (p.slot != NO_SLOT) {
		if (flags == EGPU_NOEXIST)
			return -EEXIST;
		return htod(m, slot_off(m, p.slot) +
			    dev_slot_value_offset(m->desc.key_size),
			    value, m->desc.value_size);
	}
	if (flags == EGPU_EXIST)
		return -ENOENT;
	/* Every slot the key may be in was taken: look on for a free one. */
	if (p.free_dist == NO_SLOT &&
	    (err = probe_walk(m, NULL, NULL, &p, m->desc.slot_cnt)) < 0)
		return err;
	if (p.free_dist == NO_SLOT)
		return -E2BIG;
	return hash_insert(m, &p, key, value);
}

static int hash_delete(struct dev_map *m, const void *key)
{
	struct probe p;
	uint32_t state;
	int err = hash_probe(m, key, NULL, &p);

	if (err)
		return err;
	if (p.slot == NO_SLOT)
		return -ENOENT;
	state = dev_slot_word(p.word, DEV_SLOT_DELETED);
	err = htod(m, slot_off(m, p.slot), &state, sizeof(state));
	return err ? err : count_add(m, -1);
}

/* The first USED slot at or after @from, scanning in large copies. */
static int hash_scan(struct dev_map *m, uint32_t from, void *next)
{
	const uint32_t ss = m->desc.slot_size, cnt = m->desc.slot_cnt;
	uint32_t batch = SCAN_BYTES / ss ? SCAN_BYTES / ss : 1;
	uint8_t *buf = malloc((size_t)batch * ss);
	int err = -ENOENT;

	if (!buf) {
		err_set(EGPU_ENOMEM, "map '%s': out of memory", m->name);
		return -ENOMEM;
	}
	for (uint64_t i = from; i < cnt && err == -ENOENT; i += batch) {
		uint32_t n = batch < cnt - i ? batch : (uint32_t)(cnt - i);

		if (dtoh(m, buf, slot_off(m, (uint32_t)i), (size_t)n * ss)) {
			err = -EIO;
			break;
		}
		for (uint32_t j = 0; j < n; j++) {
			const uint8_t *s = buf + (size_t)j * ss;

			if (dev_slot_state_of(slot_word(s)) == DEV_SLOT_USED) {
				memcpy(next, s + dev_slot_key_offset(),
				       m->desc.key_size);
				err = 0;
				break;
			}
		}
	}
	free(buf);
	return err;
}

static int hash_next_key(struct dev_map *m, const void *key, void *next)
{
	struct probe p = { .slot = NO_SLOT };
	int err = key ? hash_probe(m, key, NULL, &p) : 0;

	if (err)
		return err;
	/* A vanished key restarts iteration, as Linux does. */
	return hash_scan(m, p.slot == NO_SLOT ? 0 : p.slot + 1, next);
}

/* ---- operations ---- */

/* enter(), for the key-value operations, which ring maps do not have. */
static int enter_op(const struct dev_map *m, CUcontext *prev)
{
	return map_type_is_ring(m->desc.type) ? -EOPNOTSUPP : enter(m, prev);
}

int dev_map_lookup(struct dev_map *m, const void *key, void *value)
{
	CUcontext prev;
	int err = enter_op(m, &prev);

	if (err)
		return err;
	if (m->desc.type == EGPU_MAP_HASH)
		err = hash_lookup(m, key, value);
	else
		err = array_lookup(m, key, value);
	leave(m, prev);
	return err;
}

int dev_map_update(struct dev_map *m, const void *key, const void *value,
		   uint64_t flags)
{
	CUcontext prev;
	int err = map_type_is_ring(m->desc.type) || flags <= EGPU_EXIST ?
		  enter_op(m, &prev) : -EINVAL;

	if (err)
		return err;
	if (m->desc.type == EGPU_MAP_HASH)
		err = hash_update(m, key, value, flags);
	else
		err = array_update(m, key, value, flags);
	leave(m, prev);
	return err;
}

int dev_map_delete(struct dev_map *m, const void *key)
{
	CUcontext prev;
	int err = map_type_is_ring(m->desc.type) ||
		  m->desc.type == EGPU_MAP_HASH ? enter_op(m, &prev) : -EINVAL;

	if (err)
		return err;
	err = hash_delete(m, key);
	leave(m, prev);
	return err;
}

int dev_map_next_key(struct dev_map *m, const void *key, void *next)
{
	CUcontext prev;
	int err = enter_op(m, &prev);

	if (err)
		return err;
	if (m->desc.type == EGPU_MAP_HASH)
		err = hash_next_key(m, key, next);
	else
		err = array_next_key(m, key, next);
	leave(m, prev);
	return err;
}
