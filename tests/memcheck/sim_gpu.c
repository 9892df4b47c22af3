// SPDX-License-Identifier: MIT
/* The simulated GPU of sim_gpu.h. */
#include <stdlib.h>
#include <string.h>

#include "sim_gpu.h"

static int publish(void *user, const void *ix, size_t bytes)
{
	struct sim_gpu *g = user;
	void *copy = malloc(bytes);

	if (!copy)
		return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	memcpy(copy, ix, bytes);
	pthread_mutex_lock(&g->lock);
	free(g->index);
	g->index = copy;
	g->index_bytes = bytes;
	g->publishes++;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

static int enqueue(struct sim_gpu *g, struct sim_stream *s, struct sim_op op)
{
	pthread_mutex_lock(&g->lock);
	if (s->nops == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct sim_op *ops = realloc(s->ops, cap * sizeof(*ops));

		if (!ops) {
			pthread_mutex_unlock(&g->lock);
			return 2;
		}
		s->ops = ops;
		s->cap = cap;
	}
	s->ops[s->nops++] = op;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

static int set_state(void *user, uint32_t slot, uint32_t v, void *stream)
{
	struct sim_gpu *g = user;

	if (stream)
		return enqueue(g, stream, (struct sim_op){ .slot = slot, .v = v });
	pthread_mutex_lock(&g->lock);
	g->states[slot] = v;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

/* The cell's tag = @tag, the GPU's lock held. */
static void put_tag(struct sim_gpu *g, uint32_t tag)
{
	g->wraps += !tag;
	g->tag = tag;
	g->tags++;
}

static int set_tag(void *user, uint32_t tag, void *stream)
{
	struct sim_gpu *g = user;

	if (stream)
		return enqueue(g, stream,
			       (struct sim_op){ .v = tag, .tag = true });
	pthread_mutex_lock(&g->lock);
	put_tag(g, tag);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

static int host_fn(void *user, void *stream, void (*fn)(void *), void *arg)
{
	return enqueue(user, stream, (struct sim_op){ .fn = fn, .arg = arg });
}

void sim_run(struct sim_gpu *g, struct sim_stream *s)
{
	for (;;) {
		struct sim_op op;

		pthread_mutex_lock(&g->lock);
		if (!s->nops) {
			pthread_mutex_unlock(&g->lock);
			return;
		}
		op = s->ops[0];
		memmove(s->ops, s->ops + 1, --s->nops * sizeof(*s->ops));
		if (op.tag) {
			put_tag(g, op.v);
		} else if (!op.fn) {
			g->states[op.slot] = op.v;
		}
		pthread_mutex_unlock(&g->lock);
		if (op.fn)
			op.fn(op.arg); /* takes the table's lock: not ours held */
	}
}

static int quiesce(void *user)
{
	struct sim_gpu *g = user;

	for (size_t i = 0; i < g->nstreams; i++)
		sim_run(g, &g->streams[i]);
	pthread_mutex_lock(&g->lock);
	g->quiesces++;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

void sim_init(struct sim_gpu *g, uint32_t max_slots, struct sim_stream *s,
	      size_t nstreams)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	g->states = calloc(max_slots, sizeof(*g->states));
	g->streams = s;
	g->nstreams = nstreams;
	memset(s, 0, nstreams * sizeof(*s));
	g->be = (struct mc_backend){ .user = g, .publish = publish,
				     .set_state = set_state, .set_tag = set_tag,
				     .host_fn = host_fn,
				     .quiesce = quiesce, .max_slots = max_slots };
}

void sim_fini(struct sim_gpu *g)
{
	for (size_t i = 0; i < g->nstreams; i++)
		free(g->streams[i].ops);
	free(g->states);
	free(g->index);
	pthread_mutex_destroy(&g->lock);
}

int sim_check(struct sim_gpu *g, uint64_t addr, uint32_t size)
{
	int ok = 0;

	pthread_mutex_lock(&g->lock);
	if (g->index)
		ok = mc_check(g->index, g->states, addr, size);
	pthread_mutex_unlock(&g->lock);
	return ok;
}

int sim_site_check(struct sim_gpu *g, struct mc_hint *hint, uint64_t addr,
		   uint32_t size)
{
	const struct mc_entry *e = NULL;
	int ok = 1;

	pthread_mutex_lock(&g->lock);
	if (!mc_hint_holds(hint, g->tag, addr, size) && g->index) {
		ok = mc_find(g->index, g->states, addr, size, &e);
		if (ok && e)
			mc_hint_of(e, g->tag, hint);
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}
