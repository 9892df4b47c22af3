/* SPDX-License-Identifier: MIT */
/*
 * Python frames of the launching thread, for CPython 3.10 to 3.13 in the
 * same process. The callback walks the thread's frames with CPython's own
 * API (PyThreadState_GetFrame, PyFrame_GetBack, PyFrame_GetCode,
 * PyFrame_GetLasti, PyFrame_GetLineNumber), looked up with dlsym, so
 * libegpu neither links nor needs Python. Each frame is interned once per
 * (code object, instruction): "function (file:line)", its strings copied
 * while Python runs (at stop it may be gone), the code object kept alive
 * so that its address names it for the whole trace.
 *
 * The walk needs the GIL. A thread that runs Python but launches with the
 * GIL released (PyTorch releases it around every operator) takes it for
 * the walk, as Proton does; a thread without a Python thread state, or a
 * Python being finalized, gets no Python frames.
 *
 * Where the frames go among the native ones: each C call of the eval loop
 * (_PyEval_EvalFrameDefault) runs one Python frame on 3.10 and a chain of
 * them on 3.11+ (Python-to-Python calls stay in the loop). The first frame
 * of a chain (the "entry frame") is marked by CPython only in its private
 * frame layout: is_entry on 3.11, the previous frame owned by the C stack
 * on 3.12 and 3.13. That one byte is read at the layout's offset, checked
 * first by finding there the code object the API gave (so another layout,
 * a debug or free-threaded build, is recognized and read nothing more);
 * without it the chains are unknown (py_capture's *entries is false).
 *
 * The walk through the API costs a microsecond or more per launch (frame
 * objects made for every frame, the GIL taken). So on 3.11-3.13 the
 * callback reads the thread's frame chain directly in CPython's private
 * layout (struct layout), as py-spy and austin do, and needs neither the
 * GIL nor Python's API as long as every frame's instruction is known: an
 * instruction pointer names one (code object, instruction), the code
 * objects being kept alive. An unknown one sends the capture down the API
 * walk (GIL taken), which also checks the direct walk against itself
 * (same first frame, same code objects, same entry marks) before its
 * instructions are remembered; one disagreement turns the direct walk off
 * for the trace (another build's layout). The launching thread is stopped
 * in its C call, so its frames do not change under the walk.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect_impl.h"

typedef struct _object PyObject;

#define PY_FUNCS(X)                                                           \
	X(int, Py_IsInitialized, (void))                                      \
	X(const char *, Py_GetVersion, (void))                                \
	X(void *, PyGILState_GetThisThreadState, (void))                      \
	X(int, PyGILState_Ensure, (void))                                     \
	X(void, PyGILState_Release, (int))                                    \
	X(PyObject *, PyThreadState_GetFrame, (void *))                       \
	X(PyObject *, PyFrame_GetBack, (PyObject *))                          \
	X(PyObject *, PyFrame_GetCode, (PyObject *))                          \
	X(int, PyFrame_GetLineNumber, (PyObject *))                           \
	X(PyObject *, PyObject_GetAttrString, (PyObject *, const char *))     \
	X(const char *, PyUnicode_AsUTF8, (PyObject *))                       \
	X(void, PyErr_Clear, (void))                                          \
	X(void, Py_IncRef, (PyObject *))                                      \
	X(void, Py_DecRef, (PyObject *))

#define PY_FIELD(ret, name, args) ret (*name) args;
struct py_api {
	PY_FUNCS(PY_FIELD)
	int (*PyFrame_GetLasti)(PyObject *);           /* 3.11+ */
	int (*is_finalizing)(void);                    /* either name */
	void *(*current)(void);                        /* either name */
	int minor;                                     /* 3.minor */
};
#undef PY_FIELD

/* One interned frame: code object and position -> its text. */
struct py_frame {
	PyObject *code;       /* a reference held for the trace */
	int pos;              /* instruction (3.11+) or line (3.10) */
	const char *text;     /* "function (file:line)" in pool */
};

/* CPython's private layouts, release builds (Include/internal/
 * pycore_frame.h, cpython/pystate.h and cpython/code.h of each version). */
struct layout {
	uint16_t ts_frame;      /* PyThreadState.cframe (3.11, 3.12) or
				   .current_frame (3.13) */
	int16_t cframe_frame;   /* _PyCFrame.current_frame; -1: no _PyCFrame */
	/* _PyInterpreterFrame */
	uint16_t code, previous, instr, owner;
	uint16_t is_entry;      /* 3.11's is_entry; 0: none */
	int8_t owned_by_cstack; /* FRAME_OWNED_BY_CSTACK; -1: none */
	/* PyCodeObject: co_code_adaptive, _co_firsttraceable */
	uint16_t code_units, first_traceable;
};

#define OWNED_BY_GENERATOR 1    /* FRAME_OWNED_BY_GENERATOR */
#define FRAMEOBJ_IFRAME 24      /* PyFrameObject.f_frame, 3.11-3.13 */

static const struct layout layouts[] = {
	{ 56, 8, 32, 48, 56, 69, 68, -1, 184, 168 },   /* 3.11 */
	{ 56, 0, 0, 8, 56, 70, 0, 3, 192, 176 },       /* 3.12 */
	{ 72, -1, 0, 8, 56, 70, 0, 3, 200, 184 },      /* 3.13 */
};

/* One frame as the direct walk read it. */
struct raw_pyframe {
	const char *frame;    /* the _PyInterpreterFrame */
	const void *code;
	uintptr_t instr;
	bool entry;
};

struct pyframes {
	struct py_api api;
	const struct layout *layout;  /* NULL: the API walk only */
	atomic_bool direct;   /* the direct walk agreed with the API's */
	struct lfmap by_instr;        /* instruction pointer -> frame id */
	pthread_mutex_t lock; /* the table (free-threaded builds have no GIL) */
	struct py_frame *frames;
	size_t n, cap;
	uint32_t *slot;       /* frame index + 1, 0: empty */
	size_t slot_cap;
	struct strpool pool;
};


static bool load_api(struct py_api *a)
{
	void **fn;
	const char *v;

#define PY_LOAD(ret, name, args)                                              \
	fn = (void **)&a->name;                                               \
	if (!(*fn = dlsym(RTLD_DEFAULT, #name)))                              \
		return false;
	PY_FUNCS(PY_LOAD)
#undef PY_LOAD
	*(void **)&a->PyFrame_GetLasti = dlsym(RTLD_DEFAULT, "PyFrame_GetLasti");
	*(void **)&a->is_finalizing = dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
	if (!a->is_finalizing)
		*(void **)&a->is_finalizing =
			dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
	*(void **)&a->current = dlsym(RTLD_DEFAULT, "PyThreadState_GetUnchecked");
	if (!a->current)
		*(void **)&a->current =
			dlsym(RTLD_DEFAULT, "_PyThreadState_UncheckedGet");
	v = a->Py_GetVersion();
	return a->is_finalizing && a->current && v &&
	       sscanf(v, "3.%d", &a->minor) == 1 && a->minor >= 10;
}

struct pyframes *py_new(void)
{
	struct pyframes *p;

	if (!dlsym(RTLD_DEFAULT, "Py_IsInitialized"))
		return NULL;    /* no Python in this process: not an error */
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (!load_api(&p->api)) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	if (p->api.minor >= 11 && p->api.minor <= 13 &&
	    !lfmap_init(&p->by_instr, 1u << 16)) {
		p->layout = &layouts[p->api.minor - 11];
		atomic_init(&p->direct, true);
	}
	return p;
}

static const void *word_at(const char *base, size_t off)
{
	return *(const void *const *)(base + off);
}

/* Whether the interpreter frame @f ran first in its eval-loop call. */
static bool entry_of(const struct layout *l, const char *f)
{
	const char *prev;

	if (l->is_entry)
		return f[l->is_entry] != 0;
	prev = word_at(f, l->previous);
	return !prev || prev[l->owner] == l->owned_by_cstack;
}

/* The interpreter frame of frame object @frame, if it holds @code. */
static const char *iframe_of(const struct layout *l, PyObject *frame,
			     PyObject *code)
{
	const char *f = word_at((const char *)frame, FRAMEOBJ_IFRAME);

	return f && word_at(f, l->code) == code ? f : NULL;
}

/*
 * Whether @frame ran first in its call of the eval loop; -1 when this
 * build's layout is not the one expected (@code not where it should be).
 */
static int entry_frame(const struct pyframes *p, PyObject *frame,
		       PyObject *code)
{
	const char *f;

	if (p->api.minor == 10)
		return 1;
	if (!p->layout || !(f = iframe_of(p->layout, frame, code)))
		return -1;
	return entry_of(p->layout, f);
}

static uint64_t frame_hash(const PyObject *code, int pos)
{
	uint64_t h = ((uintptr_t)code ^ ((uint64_t)(unsigned)pos << 40)) *
		0x9e3779b97f4a7c15ull;

	return h ^ (h >> 31);
}

static int64_t table_find(const struct pyframes *p, const PyObject *code,
			  int pos, size_t *slot)
{
	size_t i;

	*slot = 0;
	if (!p->slot_cap)
		return -1;
	i = frame_hash(code, pos) & (p->slot_cap - 1);
	for (; p->slot[i]; i = (i + 1) & (p->slot_cap - 1)) {
		const struct py_frame *f = &p->frames[p->slot[i] - 1];

		if (f->code == code && f->pos == pos)
			return p->slot[i] - 1;
	}
	*slot = i;
	return -1;
}

static int table_grow(struct pyframes *p)
{
	size_t cap = p->slot_cap ? p->slot_cap * 2 : 1024;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t k = 0; k < p->n; k++) {
		size_t i = frame_hash(p->frames[k].code, p->frames[k].pos) &
			(cap - 1);

		while (slot[i])
			i = (i + 1) & (cap - 1);
		slot[i] = (uint32_t)k + 1;
	}
	free(p->slot);
	p->slot = slot;
	p->slot_cap = cap;
	return 0;
}

/* The code object's attribute @name as UTF-8, or @fallback. */
static const char *code_str(const struct py_api *a, PyObject *code,
			    const char *name, char *buf, size_t len,
			    const char *fallback)
{
	PyObject *o = a->PyObject_GetAttrString(code, name);
	const char *s = o ? a->PyUnicode_AsUTF8(o) : NULL;

	snprintf(buf, len, "%s", s ? s : fallback);
	if (!s)
		a->PyErr_Clear();
	if (o)
		a->Py_DecRef(o);
	return buf;
}

/* "function (file:line)" of @frame, formatted into @buf. */
static void frame_text(const struct py_api *a, PyObject *frame,
		       PyObject *code, char *buf, size_t len)
{
	char fn[256], file[768];

	/* co_qualname (3.11+) says Class.method */
	if (a->minor >= 11)
		code_str(a, code, "co_qualname", fn, sizeof(fn), "?");
	else
		code_str(a, code, "co_name", fn, sizeof(fn), "?");
	code_str(a, code, "co_filename", file, sizeof(file), "?");
	snprintf(buf, len, "%s (%s:%d)", fn, file,
		 a->PyFrame_GetLineNumber(frame));
}

/* The id of (code, pos), interned on first sight; -1 when out of memory. */
static int64_t frame_id(struct pyframes *p, PyObject *frame, PyObject *code,
			int pos)
{
	char text[1100];
	const char *s;
	int64_t id;
	size_t slot;

	pthread_mutex_lock(&p->lock);
	id = table_find(p, code, pos, &slot);
	pthread_mutex_unlock(&p->lock);
	if (id >= 0)
		return id;
	/* Python calls outside the lock: they may run a collection */
	frame_text(&p->api, frame, code, text, sizeof(text));
	pthread_mutex_lock(&p->lock);
	if ((id = table_find(p, code, pos, &slot)) >= 0)
		goto out;
	if ((p->n + 1) * 2 > p->slot_cap) {
		if (table_grow(p))
			goto out;
		table_find(p, code, pos, &slot);
	}
	if (!ARRAY_GROW(p->frames, p->cap, p->n, 256))
		goto out;
	if (!(s = strpool_add(&p->pool, text, strlen(text))))
		goto out;
	p->api.Py_IncRef(code);
	p->frames[p->n] = (struct py_frame){ code, pos, s };
	id = (int64_t)p->n++;
	p->slot[slot] = (uint32_t)p->n;
out:
	pthread_mutex_unlock(&p->lock);
	return id;
}

/* Walk the frames of the thread state @ts into @out (GIL held). */
static uint32_t walk(struct pyframes *p, void *ts, uint32_t *out,
		     uint32_t max, bool *entries)
{
	const struct py_api *a = &p->api;
	PyObject *f = a->PyThreadState_GetFrame(ts), *back, *code;
	uint32_t n = 0;

	*entries = true;
	while (f && n < max) {
		int64_t id = -1;
		int entry, pos;

		if ((code = a->PyFrame_GetCode(f))) {
			entry = entry_frame(p, f, code);
			if (entry < 0)
				*entries = false;
			pos = a->PyFrame_GetLasti ? a->PyFrame_GetLasti(f)
						  : a->PyFrame_GetLineNumber(f);
			id = frame_id(p, f, code, pos);
			a->Py_DecRef(code);
			if (id >= 0)
				out[n++] = (uint32_t)id | (entry > 0 ? PY_ENTRY : 0);
		}
		back = a->PyFrame_GetBack(f);
		a->Py_DecRef(f);
		f = back;
		if (id < 0)
			break;
	}
	if (f)
		a->Py_DecRef(f);
	return n;
}

/* Not yet started or a C-stack shim: PyFrame_GetBack() skips it. */
static bool incomplete(const struct layout *l, const char *f)
{
	const char *code = word_at(f, l->code);
	int first;

	if (f[l->owner] == l->owned_by_cstack)
		return true;
	memcpy(&first, code + l->first_traceable, sizeof(first));
	return f[l->owner] != OWNED_BY_GENERATOR &&
	       (uintptr_t)word_at(f, l->instr) <
	       (uintptr_t)code + l->code_units + 2 * (uintptr_t)first;
}

/* The innermost interpreter frame of thread state @ts, NULL if unsure. */
static const char *first_iframe(const struct layout *l, const char *ts)
{
	const char *at = word_at(ts, l->ts_frame);

	if (l->cframe_frame < 0)
		return at;
	/* the _PyCFrame lies in the thread state or on the C stack */
	if (!at || (!(at >= ts && at + 16 <= ts + 512) &&
		    !uw_stack_has((uintptr_t)at, 16)))
		return NULL;
	return word_at(at, (size_t)l->cframe_frame);
}

/* The complete frames of @ts by the layout, innermost first; -1 if odd. */
static int direct_frames(const struct layout *l, const char *ts,
			 struct raw_pyframe *raw, uint32_t max)
{
	const char *f = first_iframe(l, ts);
	uint32_t n = 0, steps = 0;

	for (; f && n < max; f = word_at(f, l->previous)) {
		if (++steps > 4 * PY_MAX_FRAMES)
			return -1;
		if (incomplete(l, f))
			continue;
		raw[n++] = (struct raw_pyframe){ f, word_at(f, l->code),
			(uintptr_t)word_at(f, l->instr), entry_of(l, f) };
	}
	return (int)n;
}

/* The direct walk: -1 where a frame's instruction is not known yet. */
static int direct_capture(struct pyframes *p, const char *ts, uint32_t *out,
			  uint32_t max)
{
	struct raw_pyframe raw[PY_MAX_FRAMES];
	int n = direct_frames(p->layout, ts, raw, max);
	uint64_t id;

	for (int i = 0; i < n; i++) {
		if (!lfmap_get(&p->by_instr, raw[i].instr, &id))
			return -1;
		out[i] = (uint32_t)id | (raw[i].entry ? PY_ENTRY : 0);
	}
	return n;
}

/*
 * Whether the direct walk of @ts reads the frames the API walk gave as
 * @ids (GIL held) into @raw: the same first frame (checked before reading
 * further), code objects and entry marks.
 */
static bool agrees(struct pyframes *p, PyObject *ts, const uint32_t *ids,
		   uint32_t n, struct raw_pyframe *raw)
{
	const struct py_api *a = &p->api;
	PyObject *frame = a->PyThreadState_GetFrame(ts), *code = NULL;
	const char *first = NULL;
	bool same = false;

	if (frame && (code = a->PyFrame_GetCode(frame)))
		first = iframe_of(p->layout, frame, code);
	if (first && first_iframe(p->layout, (const char *)ts) == first)
		same = direct_frames(p->layout, (const char *)ts, raw, n) ==
			(int)n;
	if (code)
		a->Py_DecRef(code);
	if (frame)
		a->Py_DecRef(frame);
	pthread_mutex_lock(&p->lock);
	for (uint32_t i = 0; same && i < n; i++)
		same = p->frames[ids[i] & ~PY_ENTRY].code == raw[i].code &&
		       raw[i].entry == !!(ids[i] & PY_ENTRY);
	pthread_mutex_unlock(&p->lock);
	return same;
}

/* After the API walk of @ts gave @ids: remember their instructions for
 * the direct walk, or turn it off where it disagrees. */
static void learn(struct pyframes *p, PyObject *ts, const uint32_t *ids,
		  uint32_t n, bool entries)
{
	struct raw_pyframe raw[PY_MAX_FRAMES];

	if (!n)
		return;
	if (!entries || !agrees(p, ts, ids, n, raw)) {
		atomic_store(&p->direct, false);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		lfmap_put(&p->by_instr, raw[i].instr, ids[i] & ~PY_ENTRY);
}

/* The API walk, with the GIL; teaches the direct walk. */
static uint32_t api_capture(struct pyframes *p, uint32_t *out, uint32_t max,
			    bool *entries)
{
	const struct py_api *a = &p->api;
	void *ts = a->current();
	bool take = !ts;
	uint32_t n;
	int gil = 0;

	if (take) {
		gil = a->PyGILState_Ensure();
		ts = a->current();
	}
	n = walk(p, ts, out, max, entries);
	if (atomic_load(&p->direct))
		learn(p, ts, out, n, *entries);
	if (take)
		a->PyGILState_Release(gil);
	return n;
}

uint32_t py_capture(struct pyframes *p, uint32_t *out, uint32_t max,
		    bool *entries)
{
	const struct py_api *a = &p->api;
	void *ts;
	int n;

	if (!a->Py_IsInitialized() || a->is_finalizing() ||
	    !(ts = a->PyGILState_GetThisThreadState()))
		return 0;       /* no Python on this thread (or any longer) */
	if (atomic_load_explicit(&p->direct, memory_order_relaxed) &&
	    (n = direct_capture(p, ts, out, max)) >= 0) {
		*entries = true;
		return (uint32_t)n;
	}
	return api_capture(p, out, max, entries);
}

const char *py_frame_text(struct pyframes *p, uint32_t id)
{
	const char *text;

	/* named while Python runs when the trace streams: the table grows */
	id &= ~PY_ENTRY;
	pthread_mutex_lock(&p->lock);
	text = id < p->n ? p->frames[id].text : NULL;
	pthread_mutex_unlock(&p->lock);
	return text;
}

void py_free(struct pyframes *p)
{
	const struct py_api *a;
	int gil;

	if (!p)
		return;
	a = &p->api;
	/* the references go back while Python runs; at exit it is gone */
	if (p->n && a->Py_IsInitialized() && !a->is_finalizing()) {
		gil = a->PyGILState_Ensure();
		for (size_t i = 0; i < p->n; i++)
			a->Py_DecRef(p->frames[i].code);
		a->PyGILState_Release(gil);
	}
	free(p->frames);
	free(p->slot);
	lfmap_free(&p->by_instr);
	strpool_free(&p->pool);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
