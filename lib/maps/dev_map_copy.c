/* SPDX-License-Identifier: MIT */
/*
 * The copy engine of maps in GPU memory: the host's copies to and from a
 * map, which copy only the bytes they need.
 *
 * Every copy goes through the map's own non-blocking stream, so it neither
 * waits for the application's kernels (the legacy default stream's
 * implicit synchronisation) nor delays them; small ones through a
 * page-locked staging buffer, which the copy engine writes directly (a
 * pageable destination costs a bounce through the driver's buffer).
 */
#include <errno.h>
#include <string.h>

#include "maps/dev_map_impl.h"

/* Copies up to this size go through the staging buffer. */
#define STAGE_BYTES 4096
/*
 * Zeroing copies from a page-locked buffer of zeros this big, piece by
 * piece: see zero_on.
 */
#define ZERO_BYTES (256u << 10)
/* A copy is waited for by spinning this long, then by blocking. */
#define SPIN_NS 200000

int dev_map_enter(const struct dev_map *m, CUcontext *prev)
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

void dev_map_leave(const struct dev_map *m, CUcontext prev)
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

/* Channel @io's stream and staging buffer, at its first copy (lock held). */
static int io_open(const struct dev_map *m, struct map_io *io)
{
	const struct cu_driver *d = cu();

	if (io->stage)
		return 0;
	if (!io->stream &&
	    io_check(m, d->cuStreamCreate(&io->stream, CU_STREAM_NON_BLOCKING),
		     "cuStreamCreate"))
		return -EIO;
	return io_check(m, d->cuMemAllocHost(&io->stage, STAGE_BYTES),
			"cuMemAllocHost");
}

/*
 * Wait for a channel's stream: a small copy takes microseconds, less than
 * a blocking wait's wake-up, so spin on it first.
 */
static CUresult io_wait(const struct map_io *io)
{
	uint64_t t0 = now_ns();
	CUresult res;

	while ((res = cu()->cuStreamQuery(io->stream)) == CUDA_ERROR_NOT_READY)
		if (now_ns() - t0 > SPIN_NS)
			return cu()->cuStreamSynchronize(io->stream);
	return res;
}

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

/* Start copying @s to or from @buf (rows packed) on @stream. */
static CUresult start_copy(CUstream stream, const struct span *s, void *buf,
			   bool to_device)
{
	CUDA_MEMCPY2D c = { .WidthInBytes = s->width, .Height = s->rows };

	if (s->rows == 1)
		return to_device ?
		       cu()->cuMemcpyHtoDAsync(s->addr, buf, s->width, stream) :
		       cu()->cuMemcpyDtoHAsync(buf, s->addr, s->width, stream);
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
	return cu()->cuMemcpy2DAsync(&c, stream);
}

/* Copy @s on channel @c, complete on return. The map's context is current. */
static int copy_span_on(struct dev_map *m, uint32_t c, const struct span *s,
			void *host, bool to_device)
{
	struct map_io *io = &m->io[c];
	size_t n = s->width * s->rows;
	bool staged = n <= STAGE_BYTES;
	CUresult res;
	int err;

	if (m->host)
		return host_copy(m, s, host, to_device);
	pthread_mutex_lock(&io->lock);
	err = io_open(m, io);
	if (!err) {
		void *buf = staged ? io->stage : host;

		if (staged && to_device)
			memcpy(buf, host, n);
		res = start_copy(io->stream, s, buf, to_device);
		err = io_check(m, res ? res : io_wait(io),
			       to_device ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync");
	}
	if (!err && staged && !to_device)
		memcpy(host, io->stage, n);
	pthread_mutex_unlock(&io->lock);
	return err;
}

int dev_map_copy_span(struct dev_map *m, const struct span *s, void *host,
		      bool to_device)
{
	return copy_span_on(m, 0, s, host, to_device);
}

static int map_copy(struct dev_map *m, uint64_t addr, void *host, size_t n,
		    bool to_device)
{
	const struct span s = { .addr = addr, .width = n, .rows = 1, .pitch = n };

	return dev_map_copy_span(m, &s, host, to_device);
}

int dev_map_dtoh(struct dev_map *m, void *dst, uint64_t off, size_t n)
{
	return map_copy(m, m->base + off, dst, n, false);
}

int dev_map_htod(struct dev_map *m, uint64_t off, const void *src, size_t n)
{
	return map_copy(m, m->base + off, (void *)src, n, true); /* only read */
}

int dev_map_read(struct dev_map *m, uint32_t chan, void *dst, uint64_t addr,
		 size_t n)
{
	const struct span s = { .addr = addr, .width = n, .rows = 1, .pitch = n };
	CUcontext prev;
	int err = dev_map_enter(m, &prev);

	if (!err) {
		err = copy_span_on(m, chan, &s, dst, false);
		dev_map_leave(m, prev);
	}
	return err;
}

/* What to queue on a channel's stream, and what the driver call was. */
struct queued {
	uint64_t addr;
	void *dst;       /* a copy out into page-locked memory */
	const void *src; /* NULL (and no dst): zeroes */
	size_t n;
	bool wait;
	bool by_copy; /* zeroes by the copy engine (zero_on) */
	/* Or @n copies at once, all @dir (batch_on). */
	const struct mem_copy *batch;
	enum mem_copy_dir dir;
};

/*
 * Queue zeroing @n bytes at @addr on channel @io (lock held) as copies
 * from page-locked zeros (dev_map_clear_async says why).
 */
static CUresult zeros_of(struct map_io *io);

static CUresult zero_on(struct map_io *io, uint64_t addr, size_t n)
{
	const struct cu_driver *d = cu();
	CUresult res = zeros_of(io);

	for (size_t done = 0; done < n && !res; done += ZERO_BYTES) {
		size_t k = n - done < ZERO_BYTES ? n - done : ZERO_BYTES;

		res = d->cuMemcpyHtoDAsync(addr + done, io->zeros, k, io->stream);
	}
	return res;
}

/* Page-locked zeros of channel @io to copy from (lock held). */
static CUresult zeros_of(struct map_io *io)
{
	CUresult res = CUDA_SUCCESS;

	if (!io->zeros) {
		res = cu()->cuMemAllocHost(&io->zeros, ZERO_BYTES);
		if (!res)
			memset(io->zeros, 0, ZERO_BYTES);
	}
	return res;
}

#ifdef CU_HAVE_MEMCPY_BATCH
/* Bytes per piece of a copy of @n bytes: zeroes go ZERO_BYTES at a time. */
static size_t piece_bytes(enum mem_copy_dir dir, size_t n)
{
	return dir == MEM_COPY_ZERO ? ZERO_BYTES : n ? n : 1;
}

/* @v's copies as one cuMemcpyBatchAsync on channel @io (lock held). */
static CUresult batch_call(struct map_io *io, enum mem_copy_dir dir,
			   const struct mem_copy *v, size_t n)
{
	CUmemcpyAttributes attr = { .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM };
	size_t k = 0, at = 0, first = 0;
	CUdeviceptr *dst, *src;
	size_t *size;
	CUresult res;

	for (size_t i = 0; i < n; i++)
		k += (v[i].n + piece_bytes(dir, v[i].n) - 1) / piece_bytes(dir, v[i].n);
	if (!k)
		return CUDA_SUCCESS;
	dst = malloc(k * 2 * sizeof(*dst));
	size = malloc(k * sizeof(*size));
	src = dst + k;
	for (size_t i = 0; dst && size && i < n; i++) {
		size_t step = piece_bytes(dir, v[i].n);

		for (size_t off = 0; off < v[i].n; off += step, at++) {
			CUdeviceptr host = dir == MEM_COPY_ZERO ?
					   (CUdeviceptr)(uintptr_t)io->zeros :
					   (CUdeviceptr)(uintptr_t)v[i].host + off;

			size[at] = v[i].n - off < step ? v[i].n - off : step;
			dst[at] = dir == MEM_COPY_OUT ? host : v[i].addr + off;
			src[at] = dir == MEM_COPY_OUT ? v[i].addr + off : host;
		}
	}
	res = dst && size ? cu()->cuMemcpyBatchAsync(dst, src, size, k, &attr,
						     &first, 1, io->stream) :
			    CUDA_ERROR_OUT_OF_MEMORY;
	free(dst);
	free(size);
	return res;
}
#endif

/*
 * @v's @n copies queued on channel @io (lock held): in one driver call
 * where the driver batches copies, else one each.
 */
static CUresult batch_on(struct map_io *io, enum mem_copy_dir dir,
			 const struct mem_copy *v, size_t n)
{
	CUresult res = dir == MEM_COPY_ZERO ? zeros_of(io) : CUDA_SUCCESS;

#ifdef CU_HAVE_MEMCPY_BATCH
	if (!res && cu()->cuMemcpyBatchAsync)
		return batch_call(io, dir, v, n);
#endif
	for (size_t i = 0; i < n && !res; i++)
		res = dir == MEM_COPY_OUT ?
		      cu()->cuMemcpyDtoHAsync(v[i].host, v[i].addr, v[i].n, io->stream) :
		      dir == MEM_COPY_IN ?
		      cu()->cuMemcpyHtoDAsync(v[i].addr, v[i].host, v[i].n, io->stream) :
		      zero_on(io, v[i].addr, v[i].n);
	return res;
}

/*
 * Queue @q on channel @c of @m from any thread, the map's context made
 * current meanwhile; with q->wait, then wait for the channel.
 */
static int queue_on(struct dev_map *m, uint32_t c, const struct queued *q)
{
	struct map_io *io = &m->io[c];
	CUcontext prev;
	CUresult res = CUDA_SUCCESS;
	int err = dev_map_enter(m, &prev);

	if (err)
		return err;
	pthread_mutex_lock(&io->lock);
	/* A wait on a channel that never copied has nothing to wait for. */
	err = q->n || io->stream ? io_open(m, io) : 0;
	if (!err && q->batch)
		res = batch_on(io, q->dir, q->batch, q->n);
	else if (!err && q->n)
		res = q->dst ? cu()->cuMemcpyDtoHAsync(q->dst, q->addr, q->n,
						       io->stream) :
			q->src ? cu()->cuMemcpyHtoDAsync(q->addr, q->src, q->n,
							 io->stream) :
			q->by_copy ? zero_on(io, q->addr, q->n) :
			cu()->cuMemsetD8Async(q->addr, 0, q->n, io->stream);
	if (!err && !res && q->wait && io->stream)
		res = io_wait(io);
	if (!err)
		err = io_check(m, res, !q->n ? "cuStreamSynchronize" :
				       q->batch ? "a batch of copies" :
				       q->dst ? "cuMemcpyDtoHAsync" :
				       q->src ? "cuMemcpyHtoDAsync" :
				       q->by_copy ? "zeroing (cuMemcpyHtoDAsync)" :
						    "cuMemsetD8Async");
	pthread_mutex_unlock(&io->lock);
	dev_map_leave(m, prev);
	return err;
}

int dev_map_write_async(struct dev_map *m, uint32_t chan, uint64_t addr,
			const void *src, size_t n)
{
	return queue_on(m, chan, &(struct queued){ .addr = addr, .src = src,
						   .n = n });
}

int dev_map_read_async(struct dev_map *m, uint32_t chan, void *dst,
		       uint64_t addr, size_t n)
{
	if (m->host) /* a map in host memory is read in place, at once */
		return dev_map_read(m, chan, dst, addr, n);
	return queue_on(m, chan, &(struct queued){ .addr = addr, .dst = dst,
						   .n = n });
}

int dev_map_zero_async(struct dev_map *m, uint32_t chan, uint64_t addr,
		       size_t n)
{
	return queue_on(m, chan, &(struct queued){ .addr = addr, .n = n });
}

int dev_map_clear_async(struct dev_map *m, uint32_t chan, uint64_t addr,
			size_t n)
{
	return queue_on(m, chan, &(struct queued){ .addr = addr, .n = n,
						   .by_copy = true });
}

int dev_map_batch_async(struct dev_map *m, uint32_t chan,
			enum mem_copy_dir dir, const struct mem_copy *v,
			size_t n)
{
	if (m->host) /* read and written in place: one by one */
		for (size_t i = 0; i < n; i++) {
			int err = dir == MEM_COPY_OUT ?
				  dev_map_read(m, chan, v[i].host, v[i].addr, v[i].n) :
				  dir == MEM_COPY_IN ?
				  dev_map_write_async(m, chan, v[i].addr, v[i].host, v[i].n) :
				  dev_map_clear_async(m, chan, v[i].addr, v[i].n);

			if (err)
				return err;
		}
	return m->host || !n ? 0 :
	       queue_on(m, chan, &(struct queued){ .batch = v, .n = n, .dir = dir });
}

int dev_map_sync(struct dev_map *m, uint32_t chan)
{
	return queue_on(m, chan, &(struct queued){ .wait = true });
}
