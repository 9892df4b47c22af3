/* SPDX-License-Identifier: MIT */
/*
 * The trace's API calls and stacks from the threads' chunks. A captured
 * stack runs from this collector through libcupti and the CUDA libraries
 * to the application; the stack kept starts at the application's frame
 * that made the call and ends with the API's name:
 *   main;run;vecadd(float*, int);__device_stub__...;cudaLaunchKernel
 * Equal stacks are stored once.
 */
#include <stdlib.h>
#include <string.h>

#include "collect_impl.h"

/* Distinct stacks by content (open addressing over td->stacks). */
struct stack_set {
	uint32_t *slot;   /* stack index + 1, 0: empty */
	size_t cap;
};

/* A stack built from a run of frames calls may share (share_frames). */
struct built {
	void *const *raw;
	uint16_t frame_n, py_n;
	bool py_entries;
	const char *api;
	uint32_t stack;
};

#define BUILT_SLOTS 64

struct builder {
	struct collect *c;
	struct symbolizer *sym;
	struct stack_set set;
	struct built built[BUILT_SLOTS];  /* by the frames' address */
	struct ptrmap api_names;   /* CUPTI's functionName -> clean name */
	struct ptrmap py_names;    /* Python frame id + 1 -> interned text */
	size_t stack_cap;
	const char **frames;       /* scratch, outermost first */
	const char **spliced;      /* scratch: frames with Python's */
};

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel", "cuMemcpyHtoD_v2" ->
 * "cuMemcpyHtoD", "cudaMemcpy_ptds" -> "cudaMemcpy". */
static const char *api_name(struct builder *b, const char *fn)
{
	const char *clean = ptrmap_get(&b->api_names, (uintptr_t)fn);
	size_t n = strlen(fn);

	if (clean)
		return clean;
	for (;;) {
		size_t d = n;

		while (d && fn[d - 1] >= '0' && fn[d - 1] <= '9')
			d--;
		if (d < n && d >= 2 && !strncmp(fn + d - 2, "_v", 2))
			n = d - 2;
		else if (n > 5 && (!strncmp(fn + n - 5, "_ptsz", 5) ||
				   !strncmp(fn + n - 5, "_ptds", 5)))
			n -= 5;
		else
			break;
	}
	clean = strpool_add(&b->c->names, fn, n);
	if (clean && ptrmap_put(&b->api_names, (uintptr_t)fn, (void *)clean))
		return NULL;
	return clean;
}

/* The eval loop's C function (and its .cold part where it has one). */
static bool eval_frame(const char *name)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";
	size_t len = sizeof(eval) - 1;

	return !strncmp(name, eval, len) && (!name[len] || name[len] == '.');
}

/* Python frame @id's text in the trace's pool; NULL when out of memory. */
static const char *py_name(struct builder *b, uintptr_t id)
{
	const char *name = ptrmap_get(&b->py_names, (id & ~PY_ENTRY) + 1);
	const char *text;

	if (name)
		return name;
	text = py_frame_text(b->c->py, (uint32_t)id);
	if (!text)
		text = "?";
	name = strpool_add(&b->c->names, text, strlen(text));
	if (name && ptrmap_put(&b->py_names, (id & ~PY_ENTRY) + 1, (void *)name))
		return NULL;
	return name;
}

/*
 * Put the Python frames @ids (innermost first) in place of the native
 * frames of the eval loop among b->frames[0..n) (outermost first), as
 * b->spliced; returns its length, or -1 when out of memory. The frames
 * run by one C call of the loop form a chain ending (outward) with an
 * entry frame; the innermost chain replaces the innermost loop frame,
 * and so on outward; chains beyond the loop frames found (a stack cut by
 * max_frames) go to the outermost one, loop frames beyond the chains are
 * dropped (chains unknown: one chain), and without any loop frame the
 * Python frames start the stack.
 */
static int splice_python(struct builder *b, uint32_t n, void *const *ids,
			 uint32_t m, bool entries)
{
	uint32_t start[PY_MAX_FRAMES + 1], chains = 0, evals = 0, seen = 0;
	uint32_t out = 0, k;

	start[chains++] = 0;
	for (uint32_t i = 0; entries && i + 1 < m; i++)
		if ((uintptr_t)ids[i] & PY_ENTRY)
			start[chains++] = i + 1;
	start[chains] = m;
	for (uint32_t i = 0; i < n; i++)
		evals += eval_frame(b->frames[i]);
	for (uint32_t i = 0, lo = 0, hi = evals ? 0 : m; i <= n; i++) {
		for (; hi > lo; hi--)
			if (!(b->spliced[out++] = py_name(b, (uintptr_t)ids[hi - 1])))
				return -1;
		if (i == n)
			break;
		if (!eval_frame(b->frames[i])) {
			b->spliced[out++] = b->frames[i];
			continue;
		}
		k = evals - 1 - seen++;   /* the k-th chain from the innermost */
		if (k < chains) {
			lo = start[k];
			hi = seen == 1 ? m : start[k + 1];
		}
	}
	return (int)out;
}

/*
 * Name @call's frames into b->frames, outermost first, Python's in their
 * place, ending with the API: returns the count, or -1 when out of memory.
 */
static int name_frames(struct builder *b, const struct call_chunk *k,
		       const struct raw_call *call, const char *api)
{
	void *const *raw = k->frames + call->frame_at;
	uint32_t n = call->frame_n;
	uint32_t i = 0, out = 0, max = b->c->opts.max_frames;
	const char *name;

	/*
	 * raw[] is innermost first: this collector, libcupti, the driver,
	 * whatever glue lies between them. Everything up to the outermost
	 * CUDA library frame goes (the program cannot call CUDA from code
	 * CUDA calls back); without one, the collector's frames.
	 */
	for (uint32_t k = 0; k < n; k++)
		if (sym_role(b->sym, sym_call_site(raw, k)) == SYM_CUDA)
			i = k + 1;
	if (!i)
		while (i < n && sym_role(b->sym, sym_call_site(raw, i)) == SYM_SELF)
			i++;
	for (; i < n; i++) {
		if (!(name = sym_name(b->sym, sym_call_site(raw, i))))
			return -1;
		if (!sym_cuda_runtime(name, api))
			break;
	}
	while (n > i && sym_startup(b->sym, sym_call_site(raw, n - 1)))
		n--;
	if (n - i > max)
		n = i + max;
	for (uint32_t f = n; f > i; f--) {
		b->frames[out] = sym_name(b->sym, sym_call_site(raw, f - 1));
		if (!b->frames[out++])
			return -1;
	}
	if (call->py_n) {
		int m = splice_python(b, out, raw + call->frame_n, call->py_n,
				      call->py_entries);

		if (m < 0)
			return -1;
		memcpy(b->frames, b->spliced, (size_t)m * sizeof(*b->frames));
		out = (uint32_t)m;
	}
	b->frames[out++] = api;
	return (int)out;
}

static uint64_t frames_hash(const char *const *f, uint32_t n)
{
	uint64_t h = n;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uintptr_t)f[i]) * 0x100000001b3ull;
	return h;
}

static bool stack_eq(const struct trace_stack *s, const char *const *f,
		     uint32_t n)
{
	return s->n == n && !memcmp(s->frames, f, n * sizeof(*f));
}

static int set_grow(struct builder *b)
{
	struct trace_data *td = &b->c->td;
	size_t cap = b->set.cap ? b->set.cap * 2 : 1024;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t s = 0; s < td->stack_cnt; s++) {
		const struct trace_stack *st = &td->stacks[s];
		size_t i = frames_hash(st->frames, st->n) & (cap - 1);

		while (slot[i])
			i = (i + 1) & (cap - 1);
		slot[i] = (uint32_t)s + 1;
	}
	free(b->set.slot);
	b->set.slot = slot;
	b->set.cap = cap;
	return 0;
}

/* The index of the stack b->frames[0..n), added if new; -1 on ENOMEM. */
static int64_t stack_index(struct builder *b, uint32_t n)
{
	struct trace_data *td = &b->c->td;
	struct trace_stack *st;
	size_t i;

	if ((td->stack_cnt + 1) * 2 > b->set.cap && set_grow(b))
		return -1;
	i = frames_hash(b->frames, n) & (b->set.cap - 1);
	for (; b->set.slot[i]; i = (i + 1) & (b->set.cap - 1))
		if (stack_eq(&td->stacks[b->set.slot[i] - 1], b->frames, n))
			return b->set.slot[i] - 1;
	if (!ARRAY_GROW(td->stacks, b->stack_cap, td->stack_cnt, 256))
		return -1;
	st = &td->stacks[td->stack_cnt];
	st->frames = malloc(n * sizeof(*st->frames));
	if (!st->frames)
		return -1;
	memcpy(st->frames, b->frames, n * sizeof(*st->frames));
	st->n = n;
	b->set.slot[i] = (uint32_t)++td->stack_cnt;
	return (int64_t)td->stack_cnt - 1;
}

/*
 * The stack of @call as named and interned: calls sharing their frames
 * (share_frames) are named once.
 */
static int64_t call_stack(struct builder *b, const struct call_chunk *k,
			  const struct raw_call *call, const char *api)
{
	void *const *raw = k->frames + call->frame_at;
	struct built *m = &b->built[((uintptr_t)raw >> 3) % BUILT_SLOTS];
	int64_t stack;
	int n;

	if (m->raw == raw && m->frame_n == call->frame_n &&
	    m->py_n == call->py_n && m->py_entries == call->py_entries &&
	    m->api == api)
		return m->stack;
	if ((n = name_frames(b, k, call, api)) < 0 ||
	    (stack = stack_index(b, (uint32_t)n)) < 0)
		return -1;
	*m = (struct built){ raw, call->frame_n, call->py_n,
			     call->py_entries, api, (uint32_t)stack };
	return stack;
}

int builder_call(struct builder *b, const struct call_chunk *k,
		 const struct raw_call *call, struct trace_api *api)
{
	const char *name = api_name(b, call->name);
	int64_t stack;

	if (!name || (stack = call_stack(b, k, call, name)) < 0)
		return err_set(EGPU_ENOMEM, "trace: out of memory naming "
			       "stacks");
	*api = (struct trace_api){ call->corr, call->tid, call->start,
		call->end ? call->end : call->start, name, (uint32_t)stack };
	if (call->kind == CALL_LAUNCH || call->kind == CALL_GRAPH)
		b->c->counts.launches++;
	return 0;
}

void builder_forget_frames(struct builder *b)
{
	memset(b->built, 0, sizeof(b->built));
}

struct builder *builder_new(struct collect *c)
{
	struct builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->c = c;
	/* native frames, Python's, the API; then as much for splicing */
	b->frames = calloc(2 * (c->raw_frames + PY_MAX_FRAMES + 1),
			   sizeof(*b->frames));
	b->spliced = b->frames + c->raw_frames + PY_MAX_FRAMES + 1;
	b->sym = sym_new(&c->names);
	if (!b->frames || !b->sym) {
		builder_free(b);
		return NULL;
	}
	return b;
}

void builder_free(struct builder *b)
{
	if (!b)
		return;
	sym_free(b->sym);
	ptrmap_free(&b->api_names);
	ptrmap_free(&b->py_names);
	free(b->set.slot);
	free(b->frames);
	free(b);
}

/* The frame that sent a stack to backtrace() first, as frames are named. */
int builder_name_slow_frame(struct builder *b)
{
	struct collect_counts *n = &b->c->counts;

	n->slow_frame = n->slow_pc ? sym_name(b->sym, n->slow_pc - 1) : "";
	return n->slow_frame ? 0 :
	       err_set(EGPU_ENOMEM, "egpu_trace_stop: out of memory");
}

/* Correlation ids as map keys (never 0). */
static uintptr_t corr_key(uint32_t corr)
{
	return (uintptr_t)corr + 1;
}

/* GPU records that carry a nested driver call's id get the runtime's. */
static int apply_aliases(struct collect *c)
{
	struct ptrmap alias = { 0 };
	const struct raw_call *call;
	uintptr_t outer;
	int err = 0;

	for (struct call_chunk *k = c->chunks; k && !err; k = k->next) {
		for (uint32_t i = 0; i < k->call_n && !err; i++) {
			call = &k->calls[i];
			outer = call->outer;
			if (call->kind == CALL_ALIAS)
				err = ptrmap_put(&alias, corr_key(call->corr),
						 (void *)outer);
		}
	}
	for (size_t i = 0; !err && alias.n && i < c->op_n; i++) {
		outer = (uintptr_t)ptrmap_get(&alias, corr_key(c->ops[i].corr));
		if (outer)
			c->ops[i].corr = (uint32_t)outer;
	}
	ptrmap_free(&alias);
	return err ? err_set(err, "egpu_trace_stop: out of memory") : 0;
}

static int by_op_start(const void *a, const void *b)
{
	const struct trace_op *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int collect_build_calls(struct collect *c)
{
	struct builder *b = builder_new(c);
	struct keep keep = { 0 };
	size_t n = 0;
	int err;

	for (struct call_chunk *k = c->chunks; k; k = k->next)
		n += k->call_n;
	c->td.apis = calloc(n ? n : 1, sizeof(*c->td.apis));
	/* the flight recorder's window, on the operations' final ids */
	err = apply_aliases(c);
	if (!err)
		err = collect_keep_ops(c, &keep);
	if (!err && (!c->td.apis || !b))
		err = err_set(EGPU_ENOMEM, "egpu_trace_stop: out of memory");
	for (struct call_chunk *k = c->chunks; k && !err; k = k->next)
		for (uint32_t i = 0; i < k->call_n && !err; i++)
			if (k->calls[i].kind != CALL_ALIAS &&
			    collect_keep_call(&keep, &k->calls[i]))
				err = builder_call(b, k, &k->calls[i],
					&c->td.apis[c->td.api_cnt++]);
			else if (k->calls[i].kind != CALL_ALIAS)
				c->dropped++;
	if (!err)
		err = builder_name_slow_frame(b);
	ptrmap_free(&keep.corrs);
	if (!err && c->op_n)
		qsort(c->ops, c->op_n, sizeof(*c->ops), by_op_start);
	builder_free(b);
	return err;
}
