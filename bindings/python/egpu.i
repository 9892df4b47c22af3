/* SPDX-License-Identifier: MIT */
/*
 * egpu._egpu, the C extension under the Python package: include/egpu.h as
 * SWIG wraps it, plus what makes it Python. Buffers come in as bytes-like
 * objects (or str for text), malloc'ed text comes back as str and is freed
 * here, options are dicts of keyword arguments, reports are dicts, and a
 * failure (a negative return, a NULL handle) raises the egpu.Error subclass
 * of its code with egpu_errmsg()'s text. The map operations and direct runs
 * are wrapped by hand (below) because their buffer sizes come from the map
 * or must be checked before C reads them.
 *
 * Built with `swig -python -noproxy`: egpu/__init__.py is the only Python
 * layer, there are no generated shadow classes.
 */
%module _egpu

%{
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "egpu/ctx.h"
#include "py_thread.h"

/* egpu.Error factory set by the Python layer: factory(code, message). */
static PyObject *error_factory;

static void raise_msg(int code, const char *msg)
{
	PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
	PyObject *exc = NULL;

	if (text && error_factory)
		exc = PyObject_CallFunction(error_factory, "iO", code, text);
	if (exc)
		PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
	else if (text && !PyErr_Occurred())
		PyErr_SetObject(PyExc_RuntimeError, text);
	Py_XDECREF(exc);
	Py_XDECREF(text);
}

/* Raise the calling thread's last library error; @code 0: not known. */
static void raise_last(int code)
{
	raise_msg(code, egpu_errmsg());
}

/* Borrow the bytes of a bytes-like object, or (@text) of a str as UTF-8. */
static int view_get(PyObject *o, Py_buffer *view, int text)
{
	if (text && PyUnicode_Check(o)) {
		Py_ssize_t n;
		const char *s = PyUnicode_AsUTF8AndSize(o, &n);

		return s ? PyBuffer_FillInfo(view, o, (void *)s, n, 1, PyBUF_SIMPLE) : -1;
	}
	return PyObject_GetBuffer(o, view, PyBUF_SIMPLE);
}

/* Log callback calling the Python callable @user(level, message), taking
 * the GIL in case the library ever logs from a thread of its own. */
static void log_to_python(enum egpu_log_level level, const char *msg, void *user)
{
	PyGILState_STATE gil = PyGILState_Ensure();
	PyObject *res = PyObject_CallFunction((PyObject *)user, "iN", (int)level,
		PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace"));

	if (!res)
		PyErr_WriteUnraisable((PyObject *)user);
	Py_XDECREF(res);
	PyGILState_Release(gil);
}

/*
 * Parse keyword options from dict @d (None: defaults) with @fmt and
 * @kwlist, as a Python call would: unknown keys raise TypeError.
 */
#define OPTS_PARSE(d, fmt, kwlist, ...)                                       \
	((d) == Py_None ||                                                   \
	 PyArg_ParseTupleAndKeywords(empty_args(), (d), "|$" fmt, (kwlist),   \
				     __VA_ARGS__))

static PyObject *empty_args(void)
{
	static PyObject *empty;

	if (!empty)
		empty = PyTuple_New(0);
	return empty;
}

static int ctx_opts_from(PyObject *d, struct egpu_ctx_opts *o)
{
	static char *kw[] = { "sm", "offline", "thread_slots", "log", "log_level",
			      "no_inline", "mem_inline_limit", NULL };
	PyObject *log = Py_None;
	int offline = 0, level = EGPU_LOG_WARN, no_inline = 0;
	unsigned long long limit = 0;

	if (!OPTS_PARSE(d, "zpIOipK", kw, &o->sm, &offline, &o->thread_slots, &log,
			&level, &no_inline, &limit))
		return -1;
	o->mem_inline_limit = limit > SIZE_MAX ? SIZE_MAX : (size_t)limit;
	o->offline = offline;
	o->no_inline = no_inline;
	o->log_level = (enum egpu_log_level)level;
	if (log != Py_None) {
		if (!PyCallable_Check(log)) {
			PyErr_SetString(PyExc_TypeError, "log must be callable(level, message)");
			return -1;
		}
		o->log = log_to_python;
		o->log_user = log; /* the Python Context keeps it alive */
	}
	return 0;
}

static int memcheck_opts_from(PyObject *d, struct egpu_memcheck_new_opts *o)
{
	static char *kw[] = { "contain", "max_reports", "max_allocs", NULL };
	int contain = 0;

	if (!OPTS_PARSE(d, "pII", kw, &contain, &o->max_reports, &o->max_allocs))
		return -1;
	o->contain = contain;
	return 0;
}

static int mem_trace_opts_from(PyObject *d, struct egpu_mem_trace_opts *o)
{
	static char *kw[] = { "kernel", "mem_spaces", "mem_kinds", "max_registers",
			      "runtime_max_registers", NULL };

	return OPTS_PARSE(d, "zIIIi", kw, &o->kernel, &o->mem_spaces,
			  &o->mem_kinds, &o->max_registers,
			  &o->runtime_max_registers) ? 0 : -1;
}

static int load_opts_from(PyObject *d, struct egpu_load_opts *o)
{
	static char *kw[] = { "name", "helpers", "strict", NULL };
	int helpers = EGPU_HELPERS_GPU, strict = 0;

	if (!OPTS_PARSE(d, "zip", kw, &o->name, &helpers, &strict))
		return -1;
	o->helpers = (enum egpu_helper_abi)helpers;
	o->strict = strict;
	return 0;
}

static int jit_opts_from(PyObject *d, struct egpu_jit_opts *o)
{
	static char *kw[] = { "sm", "func", "kernel", "ctx_len", NULL };
	int kernel = 0;
	Py_ssize_t ctx_len = 0;

	if (!OPTS_PARSE(d, "zzpn", kw, &o->sm, &o->func, &kernel, &ctx_len))
		return -1;
	if (ctx_len < 0) {
		PyErr_SetString(PyExc_ValueError, "ctx_len must not be negative");
		return -1;
	}
	o->kernel = kernel;
	o->ctx_len = (size_t)ctx_len;
	return 0;
}

static int trace_opts_from(PyObject *d, struct egpu_trace_opts *o)
{
	static char *kw[] = { "max_frames", "no_copies", "buffer_size",
			      "no_python", "keep_ns", "stream_path",
			      "max_size", "max_files", NULL };
	int no_copies = 0, no_python = 0;
	Py_ssize_t buffer_size = 0;
	long long keep_ns = 0, max_size = 0;

	/* stream_path is borrowed from the dict, alive through the call */
	if (!OPTS_PARSE(d, "IpnpLzLI", kw, &o->max_frames, &no_copies,
			&buffer_size, &no_python, &keep_ns, &o->stream_path,
			&max_size, &o->max_files))
		return -1;
	o->no_python = no_python;
	if (buffer_size < 0 || keep_ns < 0 || max_size < 0) {
		PyErr_SetString(PyExc_ValueError, buffer_size < 0 ?
				"buffer_size must not be negative" :
				keep_ns < 0 ? "keep_ns must not be negative" :
				"max_size must not be negative");
		return -1;
	}
	o->max_size = (uint64_t)max_size;
	o->keep_ns = (uint64_t)keep_ns;
	o->no_copies = no_copies;
	o->buffer_size = (size_t)buffer_size;
	return 0;
}

/* The memory masks of egpu_attach_opts; the Python layer turns the names
 * of spaces and kinds into them. */
static int attach_opts_from(PyObject *d, struct egpu_attach_opts *o)
{
	static char *kw[] = { "mem_spaces", "mem_kinds", "strict", NULL };
	int strict = 0;

	if (!OPTS_PARSE(d, "IIp", kw, &o->mem_spaces, &o->mem_kinds, &strict))
		return -1;
	o->strict = strict;
	return 0;
}

static PyObject *kernel_item(const struct egpu_report *r, uint32_t i)
{
	const struct egpu_kernel_report *k = &r->kernels[i];

	return Py_BuildValue("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I}",
		"name", k->name, "demangled", k->demangled,
		"kernel_id", k->kernel_id, "entry_points", k->entry_points,
		"exit_points", k->exit_points, "programs", k->programs,
		"inlined", k->inlined, "mem_points", k->mem_points);
}

/* kind and space stay numbers here: the Python layer names them. */
static PyObject *mem_site_item(const struct egpu_report *r, uint32_t i)
{
	const struct egpu_mem_site *s = &r->mem_sites[i];

	return Py_BuildValue("{s:I,s:I,s:s,s:s,s:I,s:I,s:z,s:I,s:I,s:I}",
		"site", s->site, "kernel_id", s->kernel_id,
		"function", s->function, "text", s->text,
		"ptx_line", s->ptx_line, "line", s->line, "file", s->file,
		"size", s->size, "kind", (unsigned)s->kind,
		"space", (unsigned)s->space);
}

static PyObject *warning_item(const struct egpu_report *r, uint32_t i)
{
	return PyUnicode_DecodeUTF8(r->warnings[i], (Py_ssize_t)strlen(r->warnings[i]),
				    "replace");
}

typedef PyObject *(*report_item_fn)(const struct egpu_report *r, uint32_t i);

/* The list of @item(@r, i) for i < @n. */
static PyObject *report_list(const struct egpu_report *r, uint32_t n,
			     report_item_fn item)
{
	PyObject *list = PyList_New(n);

	for (uint32_t i = 0; list && i < n; i++) {
		PyObject *o = item(r, i);

		if (!o)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, i, o);
	}
	return list;
}

static PyObject *report_dict(const struct egpu_report *r)
{
	PyObject *kernels = report_list(r, r->kernel_cnt, kernel_item);
	PyObject *sites = report_list(r, r->mem_site_cnt, mem_site_item);
	PyObject *warnings = report_list(r, r->warning_cnt, warning_item);

	if (!kernels || !sites || !warnings) {
		Py_XDECREF(kernels);
		Py_XDECREF(sites);
		Py_XDECREF(warnings);
		return NULL;
	}
	return Py_BuildValue("{s:I,s:I,s:I,s:I,s:I,s:d,s:N,s:N,s:N,s:I}",
		"kernel_cnt", r->kernel_cnt, "kernels_patched", r->kernels_patched,
		"entry_points", r->entry_points, "exit_points", r->exit_points,
		"programs", r->programs, "instrument_ms", r->instrument_ms,
		"kernels", kernels, "mem_sites", sites, "warnings", warnings,
		"mem_called", r->mem_called);
}

static PyObject *clock_dict(const struct egpu_clock *c)
{
	return Py_BuildValue("{s:L,s:K,s:K,s:K,s:K,s:I}",
		"offset_ns", (long long)c->offset_ns,
		"error_ns", (unsigned long long)c->error_ns,
		"host_ns", (unsigned long long)c->host_ns,
		"round_trip_ns", (unsigned long long)c->round_trip_ns,
		"step_ns", (unsigned long long)c->step_ns, "rounds", c->rounds);
}

/* Append malloc'ed text @s of @n bytes to the results as a str. */
static PyObject *append_text(PyObject *result, const char *s, size_t n)
{
	PyObject *str = PyUnicode_DecodeUTF8(s ? s : "", s ? (Py_ssize_t)n : 0,
					     "surrogateescape");

	if (!str) {
		Py_XDECREF(result);
		return NULL;
	}
	return SWIG_Python_AppendOutput(result, str);
}
%}

%include <stdint.i>

/* Failures raise. Counts (egpu_attach_all) and flags stay ints. */
%typemap(out) int {
	if ($1 < 0) {
		raise_last($1);
		SWIG_fail;
	}
	$result = PyLong_FromLong($1);
}
/* Calls whose only result is their out-parameters return just those. */
%typemap(out) int egpu_prog_jit_ptx, int egpu_instrument_ptx, int egpu_module_load,
	      int egpu_clock_sync, int egpu_clock_get, int egpu_metrics_render,
	      int egpu_memcheck_text {
	if ($1 < 0) {
		raise_last($1);
		SWIG_fail;
	}
	$result = SWIG_Py_Void();
}

/* Read-only bytes in: bytes, bytearray, memoryview, array, or a str. */
%typemap(in) (const void *BUF, size_t LEN) (Py_buffer view = { 0 }) {
	if (view_get($input, &view, 1))
		SWIG_fail;
	$1 = ($1_ltype)view.buf;
	$2 = (size_t)view.len;
}
%typemap(freearg) (const void *BUF, size_t LEN) {
	if (view$argnum.obj)
		PyBuffer_Release(&view$argnum);
}
%apply (const void *BUF, size_t LEN) {
	(const void *elf, size_t len), (const void *insns, size_t len),
	(const void *image, size_t len), (const char *ptx, size_t len),
	(const void *data, size_t size), (const void *span, size_t len)
};

/* Text out: returned as a str, the C buffer freed. */
%typemap(in, numinputs=0) (char **TEXT, size_t *LEN) (char *text = NULL, size_t n = 0) {
	$1 = &text;
	$2 = &n;
}
%typemap(argout) (char **TEXT, size_t *LEN) {
	$result = append_text($result, text$argnum, n$argnum);
	if (!$result)
		SWIG_fail;
}
%typemap(freearg) (char **TEXT, size_t *LEN) {
	free(text$argnum);
}
%apply (char **TEXT, size_t *LEN) { (char **ptx, size_t *len), (char **out, size_t *out_len),
	(char **text, size_t *len) };

%typemap(in, numinputs=0) struct egpu_report *report (struct egpu_report rep) {
	memset(&rep, 0, sizeof(rep));
	rep.sz = sizeof(rep);
	$1 = &rep;
}
%typemap(argout) struct egpu_report *report {
	PyObject *r = report_dict(&rep$argnum);

	if (!r) {
		Py_CLEAR($result);
		SWIG_fail;
	}
	$result = SWIG_Python_AppendOutput($result, r);
}

/* A clock calibration comes back as a dict. */
%typemap(in, numinputs=0) struct egpu_clock *out (struct egpu_clock clk) {
	memset(&clk, 0, sizeof(clk));
	clk.sz = sizeof(clk);
	$1 = &clk;
}
%typemap(argout) struct egpu_clock *out {
	PyObject *c = clock_dict(&clk$argnum);

	if (!c) {
		Py_CLEAR($result);
		SWIG_fail;
	}
	$result = SWIG_Python_AppendOutput($result, c);
}

/* The CUmodule comes back as an int, as cuda-python and ctypes take it. */
%typemap(in, numinputs=0) CUmodule *mod (CUmodule m = NULL) {
	$1 = &m;
}
%typemap(argout) CUmodule *mod {
	PyObject *h = PyLong_FromVoidPtr((void *)m$argnum);

	if (!h) {
		Py_CLEAR($result);
		SWIG_fail;
	}
	$result = SWIG_Python_AppendOutput($result, h);
}

/* Options are dicts of keyword arguments, or None for the defaults. */
%define %opts_typemap(STRUCT, PARSE)
%typemap(in) const struct STRUCT *opts (struct STRUCT o), struct STRUCT *opts (struct STRUCT o) {
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	if (PARSE($input, &o))
		SWIG_fail;
	$1 = $input == Py_None ? NULL : &o;
}
%enddef
%opts_typemap(egpu_ctx_opts, ctx_opts_from)
%opts_typemap(egpu_load_opts, load_opts_from)
%opts_typemap(egpu_jit_opts, jit_opts_from)
%opts_typemap(egpu_trace_opts, trace_opts_from)
%opts_typemap(egpu_attach_opts, attach_opts_from)
%opts_typemap(egpu_memcheck_new_opts, memcheck_opts_from)
%opts_typemap(egpu_mem_trace_opts, mem_trace_opts_from)

/*
 * A NULL handle raises with @code. The C API reports no code for NULL
 * returns, so this is the code the function documents, or 0 (egpu.Error
 * with code None) where several are possible.
 *
 * Every call holds the GIL: a context is not safe for concurrent use, and
 * the GIL is what keeps Python threads sharing one from racing in C.
 */
%define %raise_if_null(FUNC, CODE)
%exception FUNC {
	$action
	if (!result) {
		raise_last(egpu_errcode() ? egpu_errcode() : CODE);
		SWIG_fail;
	}
}
%enddef
%raise_if_null(egpu_ctx_new, 0)
%raise_if_null(egpu_obj_prog, EGPU_ENOENT)
%raise_if_null(egpu_obj_map, EGPU_ENOENT)
%raise_if_null(egpu_attach_kernel, 0)
%raise_if_null(egpu_load, 0)
%raise_if_null(egpu_load_mem, 0)
%raise_if_null(egpu_load_insns, 0)
%raise_if_null(egpu_trace_start, 0)
%raise_if_null(ptxas_server_start, 0)
%raise_if_null(egpu_memcheck_new, 0)

/* C only: a cubin for the driver's own loaders (Python loads modules
 * with egpu_module_load, which links the same way). */
%ignore egpu_ptx_link;
%ignore egpu_ptx_link_opts;

/* Replaced by the size-checked functions below. */
%ignore egpu_map_lookup;
%ignore egpu_map_update;
%ignore egpu_map_delete;
%ignore egpu_map_next_key;
%ignore egpu_map_lookup_sum;
%ignore egpu_map_lookup_values;
%ignore egpu_prog_insns;
%ignore egpu_prog_run;
%ignore egpu_prog_verify;
%ignore egpu_prog_verdict;
/* Replaced by the ring and print functions below, which call Python. */
%ignore egpu_ringbuf_new;
%ignore egpu_ringbuf_add;
%ignore egpu_ringbuf_poll;
%ignore egpu_ringbuf_consume;
%ignore egpu_ringbuf_stats;
%ignore egpu_ringbuf_drops;
%ignore egpu_ringbuf_fd;
%ignore egpu_ringbuf_free;
%ignore egpu_ringbuf_add_opts;
%ignore egpu_ringbuf_reclaim;
/* Replaced by span_decode() below. */
%ignore egpu_span_begin;
%ignore egpu_span_next;
%ignore egpu_span_count;
%ignore egpu_span_iter;
%ignore egpu_span_info;
%ignore egpu_warp_rec;
%ignore egpu_ringbuf_new_opts;
%ignore egpu_ringbuf_opts;
%ignore egpu_record;
%ignore egpu_print_set_callback;
%ignore egpu_print_poll;
%ignore egpu_print_info;
/* Replaced by trace_stats() and trace_kernels() below (also the
 * structs of the same names). */
%ignore egpu_trace_stats;
%ignore egpu_trace_kernel;
%ignore egpu_trace_kernel_cnt;
/* Options and reports cross as dicts (above), not as structs. */
%ignore egpu_ctx_opts;
%ignore egpu_load_opts;
%ignore egpu_jit_opts;
%ignore egpu_run_opts;
%ignore egpu_attach_opts;
%ignore egpu_report;
%ignore egpu_kernel_report;
%ignore egpu_trace_opts;
%ignore egpu_mem_site;
%ignore egpu_clock;
/* Replaced by clock_gpu_to_host() below, which takes the offset. */
%ignore egpu_clock_gpu_to_host;
/* The struct and the function share the name: kernel_info() below. */
%ignore egpu_kernel_info;
/* Replaced by ptxas_server_start() and ptxas_server_stats() below. */
%ignore egpu_ptxas_server_start;
%ignore egpu_ptxas_server_opts;
%ignore egpu_ptxas_server_stats;
%ignore egpu_ptxas_stats;
%ignore egpu_map_lookup_kernel;
/* Reports cross as a list of dicts: memcheck_reports() below. */
%ignore egpu_memcheck_new_opts;
%ignore egpu_memcheck_report;
%ignore egpu_memcheck_report_at;
%ignore egpu_memcheck_poll;
/* <egpu/ctx.h> gives its constants (EGPU_MEM_*, EGPU_SPACE_*); the ctx
 * structs are for probes, not for the host. */
%ignore egpu_kernel_ctx;
%ignore egpu_mem_ctx;

/* Metrics: made and fed by metrics_new() and metrics_add_map() below
 * (no object arrays or report structs cross); served from Python by
 * prometheus_client, so no egpu_metrics_serve. */
%ignore egpu_metrics_new;
%ignore egpu_metrics_serve;
%ignore egpu_metrics_add_map;
%ignore egpu_metrics_add_kernels;
%ignore egpu_metrics_opts;
%ignore egpu_metric_desc;
%ignore egpu_gpu_info;
%ignore egpu_ctx_gpu;
%ignore egpu_pprof_opts;
%ignore egpu_trace_write_pprof;
%apply (char **TEXT, size_t *LEN) { (char **text, size_t *len) };
%raise_if_null(metrics_new, 0)

/* Replaced by helper_register(), helper_poll() and helper_dispatch()
 * below, which call Python and wait without the GIL. */
%ignore egpu_helper_register;
%ignore egpu_helper_opts;
%ignore egpu_helper_sig;
%ignore egpu_helper_sig_parse;
%ignore egpu_helper_poll;
%ignore egpu_helper_set_dispatch;
/* Freeing a context stops its helper dispatcher, which may be waiting
 * for the GIL to call Python: let it have it. */
%exception egpu_ctx_free {
	Py_BEGIN_ALLOW_THREADS
	$action
	Py_END_ALLOW_THREADS
}

/* Stopping waits for a request being served, which needs no GIL. */
%exception egpu_ptxas_server_stop {
	Py_BEGIN_ALLOW_THREADS
	$action
	Py_END_ALLOW_THREADS
}

/* The enum's name would hide the function egpu_map_type(). */
%rename(egpu_map_type_enum, %$isenum) egpu_map_type;

%include "egpu.h"
%include "egpu/ctx.h"

%{
/* The bytes of @o, exactly @size of them, as the @what of @map. */
static int view_sized(egpu_map *map, PyObject *o, uint32_t size,
		      const char *what, Py_buffer *view)
{
	char msg[256];

	if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE))
		return -1;
	if ((size_t)view->len == size)
		return 0;
	snprintf(msg, sizeof(msg), "map '%s': %s of %zd bytes, expected %u",
		 egpu_map_name(map), what, view->len, size);
	PyBuffer_Release(view);
	raise_msg(EGPU_EINVAL, msg);
	return -1;
}

typedef int (*map_read_fn)(egpu_map *map, const void *key, void *out);

/* Read @size bytes under @key with @read into a new bytes object. */
static PyObject *map_read(egpu_map *map, PyObject *key, size_t size,
			  map_read_fn read)
{
	PyObject *out;
	Py_buffer k;
	int err;

	if (view_sized(map, key, egpu_map_key_size(map), "key", &k))
		return NULL;
	out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
	if (out) {
		err = read(map, k.buf, PyBytes_AS_STRING(out));
		if (err) {
			Py_CLEAR(out);
			raise_last(err);
		}
	}
	PyBuffer_Release(&k);
	return out;
}
%}

%inline %{
/* Install egpu.Error's factory(code, message); returns None. */
PyObject *set_error_factory(PyObject *factory)
{
	Py_XINCREF(factory);
	Py_XSETREF(error_factory, factory);
	Py_RETURN_NONE;
}

/* Every value stored under @key: value_size * values_per_key bytes
 * (each thread's, or each SM's of an SM array). */
PyObject *map_lookup(egpu_map *map, PyObject *key)
{
	return map_read(map, key, (size_t)egpu_map_value_size(map) *
			egpu_map_values_per_key(map), egpu_map_lookup_values);
}

/* Kernel @id of @ctx as a dict (egpu_kernel_info). */
PyObject *kernel_info(egpu_ctx *ctx, uint32_t id)
{
	EGPU_OPTS(egpu_kernel_info, k);
	int err = egpu_kernel_info(ctx, id, &k);

	if (err) {
		raise_last(err);
		return NULL;
	}
	return Py_BuildValue("{s:I,s:s,s:s,s:I,s:K,s:I}",
		"kernel_id", k.kernel_id, "name", k.name,
		"demangled", k.demangled, "module", k.module,
		"module_hash", (unsigned long long)k.module_hash,
		"index", k.index);
}

/* The values under the ids of the kernels @kernel names, summed
 * (egpu_map_lookup_kernel): value_size bytes, or None if none had one. */
PyObject *map_lookup_kernel(egpu_map *map, const char *kernel)
{
	PyObject *out = PyBytes_FromStringAndSize(NULL, egpu_map_value_size(map));
	int n;

	if (!out)
		return NULL;
	n = egpu_map_lookup_kernel(map, kernel, PyBytes_AS_STRING(out));
	if (n < 0) {
		Py_DECREF(out);
		raise_last(n);
		return NULL;
	}
	if (!n) {
		Py_DECREF(out);
		Py_RETURN_NONE;
	}
	return out;
}

/* The per-thread values under @key summed: value_size bytes. */
PyObject *map_lookup_sum(egpu_map *map, PyObject *key)
{
	return map_read(map, key, egpu_map_value_size(map), egpu_map_lookup_sum);
}

PyObject *map_update(egpu_map *map, PyObject *key, PyObject *value,
		     uint64_t flags)
{
	Py_buffer k, v;
	int err;

	if (view_sized(map, key, egpu_map_key_size(map), "key", &k))
		return NULL;
	if (view_sized(map, value, egpu_map_value_size(map), "value", &v)) {
		PyBuffer_Release(&k);
		return NULL;
	}
	err = egpu_map_update(map, k.buf, v.buf, flags);
	PyBuffer_Release(&v);
	PyBuffer_Release(&k);
	if (err) {
		raise_last(err);
		return NULL;
	}
	Py_RETURN_NONE;
}

PyObject *map_delete(egpu_map *map, PyObject *key)
{
	Py_buffer k;
	int err;

	if (view_sized(map, key, egpu_map_key_size(map), "key", &k))
		return NULL;
	err = egpu_map_delete(map, k.buf);
	PyBuffer_Release(&k);
	if (err) {
		raise_last(err);
		return NULL;
	}
	Py_RETURN_NONE;
}

/* The key after @key (None: the first) as bytes, or None after the last. */
PyObject *map_next_key(egpu_map *map, PyObject *key)
{
	PyObject *next;
	Py_buffer k = { 0 };
	int err;

	if (key != Py_None && view_sized(map, key, egpu_map_key_size(map), "key", &k))
		return NULL;
	next = PyBytes_FromStringAndSize(NULL, egpu_map_key_size(map));
	if (next) {
		err = egpu_map_next_key(map, k.obj ? k.buf : NULL, PyBytes_AS_STRING(next));
		if (err == EGPU_ENOENT) {
			Py_INCREF(Py_None);
			Py_SETREF(next, Py_None);
		} else if (err) {
			Py_CLEAR(next);
			raise_last(err);
		}
	}
	if (k.obj)
		PyBuffer_Release(&k);
	return next;
}

/* egpu_clock_gpu_to_host() of a calibration with @offset_ns. */
uint64_t clock_gpu_to_host(int64_t offset_ns, uint64_t gpu_ns)
{
	EGPU_OPTS(egpu_clock, clk, .offset_ns = offset_ns);

	return egpu_clock_gpu_to_host(&clk, gpu_ns);
}

/* The linked instructions, 8 bytes each. */
PyObject *prog_insns(egpu_prog *prog)
{
	return PyBytes_FromStringAndSize(egpu_prog_insns(prog),
					 (Py_ssize_t)egpu_prog_insn_cnt(prog) * 8);
}

/*
 * Verify @prog at @at (-1: its own attach point) with @ctx_len bytes for a
 * direct run and @verbose: (accepted, message, log, insns_processed,
 * states, verify_ms). A refusal is a result, not an exception.
 */
PyObject *prog_verify(egpu_prog *prog, int at, uint32_t ctx_len, int verbose)
{
	EGPU_OPTS(egpu_verify_opts, vo, .at = (enum egpu_attach_point)(at < 0 ? 0 : at),
		  .at_set = at >= 0, .ctx_len = ctx_len,
		  .verbose = verbose);
	int err = egpu_prog_verify(prog, &vo);
	PyObject *r;

	if (err && err != EGPU_EVERIFY) {
		free(vo.log);
		raise_last(err);
		return NULL;
	}
	r = Py_BuildValue("(Ns" "s#KKd)", PyBool_FromLong(!err), err ? egpu_errmsg() : "",
			  vo.log ? vo.log : "", (Py_ssize_t)(vo.log ? strlen(vo.log) : 0),
			  (unsigned long long)vo.insns_processed,
			  (unsigned long long)vo.states, vo.verify_ms);
	free(vo.log);
	return r;
}

/* The load verdict of @prog: (code, message); code 0 if accepted. */
PyObject *prog_verdict(egpu_prog *prog)
{
	const char *msg;
	int code = egpu_prog_verdict(prog, &msg);

	return Py_BuildValue("(is)", code, msg);
}

/*
 * Run @prog once on @backend with @memory as r1/r2: a writable buffer
 * (bytearray, numpy array, ...) sees the program's stores, a read-only one
 * is copied first. An entry or exit probe gets @params (a buffer, or None)
 * as its kernel's parameter bytes. Returns (r0, run_ns).
 */
PyObject *prog_run(egpu_prog *prog, int backend, PyObject *memory,
		   PyObject *params)
{
	EGPU_OPTS(egpu_run_opts, ro, .backend = (enum egpu_backend)backend);
	Py_buffer view, pview = { .buf = NULL, .len = 0 };
	bool have_params = params != Py_None;
	void *copy = NULL;
	int err;

	if (have_params && PyObject_GetBuffer(params, &pview, PyBUF_SIMPLE))
		return NULL;
	ro.params = pview.len ? pview.buf : NULL;
	ro.params_len = (size_t)pview.len;
	if (PyObject_GetBuffer(memory, &view, PyBUF_WRITABLE)) {
		PyErr_Clear();
		if (PyObject_GetBuffer(memory, &view, PyBUF_SIMPLE))
			goto no_memory;
		copy = malloc(view.len ? (size_t)view.len : 1);
		if (!copy) {
			PyBuffer_Release(&view);
			PyErr_NoMemory();
			goto no_memory;
		}
		memcpy(copy, view.buf, (size_t)view.len);
	}
	/* no bytes: no memory (a probe's r1 is made from its params) */
	ro.ctx = !view.len ? NULL : copy ? copy : view.buf;
	ro.ctx_len = (size_t)view.len;
	err = egpu_prog_run(prog, &ro);
	free(copy);
	PyBuffer_Release(&view);
	if (have_params)
		PyBuffer_Release(&pview);
	if (err) {
		raise_last(err);
		return NULL;
	}
	return Py_BuildValue("(Kd)", (unsigned long long)ro.retval, ro.run_ns);
no_memory:
	if (have_params)
		PyBuffer_Release(&pview);
	return NULL;
}
%}

%{
/*
 * Waits release the GIL, so other Python threads run while a consumer
 * waits for records; callbacks take it back. They wait in slices so that
 * Ctrl-C (a signal handler raising) ends a long wait.
 */
#define WAIT_SLICE_MS 100

typedef int (*wait_fn)(void *handle, int timeout_ms);

/* @wait(@handle, ...) for up to @timeout_ms (< 0: without limit) until it
 * returns non-zero; its result, or 0 with an exception set by a signal. */
static int wait_sliced(wait_fn wait, void *handle, int timeout_ms)
{
	int n, slice;

	for (;;) {
		slice = timeout_ms < 0 || timeout_ms > WAIT_SLICE_MS ?
			WAIT_SLICE_MS : timeout_ms;
		Py_BEGIN_ALLOW_THREADS
		n = wait(handle, slice);
		Py_END_ALLOW_THREADS
		if (n || slice == timeout_ms || PyErr_CheckSignals())
			return n;
		if (timeout_ms > 0)
			timeout_ms -= slice;
	}
}

/*
 * A consumer of one ring map. @fn is the callable of the poll in progress
 * (borrowed for its duration); what it raised waits in @exc_* until the
 * poll returns, as the C consumer stops at the failed record.
 */
struct py_ring {
	egpu_ringbuf *rb;
	PyObject *fn;
	PyObject *exc_type, *exc_value, *exc_tb;
};

/*
 * What a callback raised, kept for ring_poll: the first exception of a
 * pass (consumer threads may raise at once: the others are dropped).
 */
static void ring_keep_exception(struct py_ring *r)
{
	PyObject *t, *v, *tb;

	if (r->exc_type) {
		PyErr_Clear();
		return;
	}
	PyErr_Fetch(&t, &v, &tb);
	r->exc_type = t;
	r->exc_value = v;
	r->exc_tb = tb;
}

/* Callbacks may come on egpu_ringbuf's consumer threads: py_gil_take. */
static int ring_to_python(void *user, const void *data, size_t size)
{
	struct py_ring *r = user;
	PyGILState_STATE gil = py_gil_take();
	PyObject *res = PyObject_CallFunction(r->fn, "y#", (const char *)data,
					      (Py_ssize_t)size);
	int ret = 0;

	if (!res) {
		ring_keep_exception(r);
		ret = -1;
	}
	Py_XDECREF(res);
	PyGILState_Release(gil);
	return ret;
}

/* Batch delivery: one call of the callable with a list of bytes. */
static int ring_batch_to_python(void *user, const struct egpu_record *recs,
				size_t n)
{
	struct py_ring *r = user;
	PyGILState_STATE gil = py_gil_take();
	PyObject *list = PyList_New((Py_ssize_t)n), *res = NULL;
	int ret = 0;

	for (size_t i = 0; list && i < n; i++) {
		PyObject *b = PyBytes_FromStringAndSize(recs[i].data,
							(Py_ssize_t)recs[i].size);

		if (!b) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, b);
	}
	if (list)
		res = PyObject_CallFunctionObjArgs(r->fn, list, NULL);
	if (!res) {
		ring_keep_exception(r);
		ret = -1;
	}
	Py_XDECREF(res);
	Py_XDECREF(list);
	PyGILState_Release(gil);
	return ret;
}

/* Chunk delivery: one call of the callable with the chunk's bytes. */
static int ring_chunk_to_python(void *user, const void *data, size_t size)
{
	struct py_ring *r = user;
	PyGILState_STATE gil = py_gil_take();
	PyObject *res = PyObject_CallFunction(r->fn, "y#", (const char *)data,
					      (Py_ssize_t)size);
	int ret = 0;

	if (!res) {
		ring_keep_exception(r);
		ret = -1;
	}
	Py_XDECREF(res);
	PyGILState_Release(gil);
	return ret;
}

static int ring_wait(void *handle, int timeout_ms)
{
	return egpu_ringbuf_poll(handle, timeout_ms);
}

static void print_to_python(void *user, const char *line,
			    const struct egpu_print_info *info)
{
	PyGILState_STATE gil = PyGILState_Ensure();
	PyObject *res = PyObject_CallFunction((PyObject *)user, "N(III)(III)",
		PyUnicode_DecodeUTF8(line, (Py_ssize_t)strlen(line), "replace"),
		info->block[0], info->block[1], info->block[2],
		info->thread[0], info->thread[1], info->thread[2]);

	if (!res)
		PyErr_WriteUnraisable((PyObject *)user);
	Py_XDECREF(res);
	PyGILState_Release(gil);
}

static int print_wait(void *handle, int timeout_ms)
{
	return egpu_print_poll(handle, timeout_ms);
}
%}

%exception ring_new {
	$action
	if (!result)
		SWIG_fail;
}

%{
/* What a pass that handed @n records (or failed) returns to Python. */
static PyObject *ring_result(struct py_ring *r, int n)
{
	if (r->exc_type) {
		PyErr_Restore(r->exc_type, r->exc_value, r->exc_tb);
		r->exc_type = r->exc_value = r->exc_tb = NULL;
		return NULL;
	}
	if (PyErr_Occurred())
		return NULL;
	if (n < 0) {
		raise_last(n);
		return NULL;
	}
	return PyLong_FromLong(n);
}

/* A decoded warp access as (mask, site, size, kind, affine, stride, addrs). */
static PyObject *span_rec_tuple(const struct egpu_warp_rec *rec)
{
	PyObject *addrs = PyTuple_New(__builtin_popcount(rec->mask));
	Py_ssize_t k = 0;

	for (uint32_t m = rec->mask; addrs && m; m &= m - 1)
		PyTuple_SET_ITEM(addrs, k++, PyLong_FromUnsignedLongLong(
			rec->addr[__builtin_ctz(m)]));
	return addrs ? Py_BuildValue("(IIIiiLN)", rec->mask, rec->site,
				     rec->size, (int)rec->kind, (int)rec->affine,
				     (long long)rec->stride, addrs) : NULL;
}
%}

%inline %{
/*
 * A consumer of ring map @map; free it with ring_free(). @batch 1: the
 * callable gets lists of records, 2: chunks (bytes of whole records in
 * the ring's format); @path (or NULL): records also go to
 * that file; @threads consumer threads (egpu_ringbuf_opts).
 */
struct py_ring *ring_new(egpu_map *map, int batch, const char *path,
			 unsigned int threads)
{
	struct py_ring *r = calloc(1, sizeof(*r));
	EGPU_OPTS(egpu_ringbuf_opts, o,
		  .batch_fn = batch == 1 ? ring_batch_to_python : NULL,
		  .chunk_fn = batch == 2 ? ring_chunk_to_python : NULL,
		  .path = path, .threads = threads);

	if (!r) {
		PyErr_NoMemory();
		return NULL;
	}
	r->rb = egpu_ringbuf_new_opts(map, ring_to_python, r, &o);
	if (!r->rb) {
		raise_last(egpu_errcode() ? egpu_errcode() : EGPU_EINVAL);
		free(r);
		return NULL;
	}
	return r;
}

/* Without the GIL: the consumer threads it joins may be taking it. */
void ring_free(struct py_ring *r)
{
	if (r) {
		Py_BEGIN_ALLOW_THREADS
		egpu_ringbuf_free(r->rb);
		Py_END_ALLOW_THREADS
	}
	free(r);
}

/*
 * Call @fn(bytes) for every record, first waiting up to @timeout_ms
 * (< 0: without limit) when there is none. Returns the records handed to
 * @fn; raises what @fn raised, after the records before it.
 */
PyObject *ring_poll(struct py_ring *r, int timeout_ms, PyObject *fn)
{
	int n;

	r->fn = fn;
	n = wait_sliced(ring_wait, r->rb, timeout_ms);
	r->fn = NULL;
	return ring_result(r, n);
}

/* egpu_ringbuf_reclaim with @fn(bytes) for every record (as ring_poll). */
PyObject *ring_reclaim(struct py_ring *r, PyObject *fn)
{
	int n;

	r->fn = fn;
	n = egpu_ringbuf_reclaim(r->rb);
	r->fn = NULL;
	return ring_result(r, n);
}

/*
 * A span record (bpf_egpu_trace_span) decoded by egpu_span_next:
 * (block, warp, smid, [(mask, site, size, kind, affine, stride, addrs)]),
 * addrs a tuple of the active lanes' addresses in lane order.
 */
PyObject *span_decode(const void *span, size_t len)
{
	struct egpu_span_iter it;
	struct egpu_span_info info;
	struct egpu_warp_rec rec;
	PyObject *recs;
	int got = 0, err = egpu_span_begin(&it, span, len, &info);

	if (err) {
		raise_last(err);
		return NULL;
	}
	recs = PyList_New(0);
	while (recs && (got = egpu_span_next(&it, &rec)) == 1) {
		PyObject *t = span_rec_tuple(&rec);

		if (!t || PyList_Append(recs, t))
			Py_CLEAR(recs);
		Py_XDECREF(t);
	}
	if (recs && got < 0) {
		Py_DECREF(recs);
		raise_last(got);
		return NULL;
	}
	return recs ? Py_BuildValue("(IIIN)", info.block, info.warp, info.smid,
				    recs) : NULL;
}

/*
 * Every lane address of span @span, in record order then lane order, as
 * little-endian u64 bytes (for numpy.frombuffer): no Python per record.
 */
PyObject *span_addresses(const void *span, size_t len)
{
	struct egpu_span_iter it;
	struct egpu_warp_rec rec;
	PyObject *out;
	uint64_t *a;
	size_t n = 0;
	int got, err = egpu_span_begin(&it, span, len, NULL);

	while (!err && (got = egpu_span_next(&it, &rec)) == 1)
		n += (size_t)__builtin_popcount(rec.mask);
	if (err || got < 0) {
		raise_last(err ? err : got);
		return NULL;
	}
	out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 8));
	a = out ? (uint64_t *)PyBytes_AS_STRING(out) : NULL;
	egpu_span_begin(&it, span, len, NULL);
	while (a && egpu_span_next(&it, &rec) == 1)
		for (uint32_t m = rec.mask; m; m &= m - 1)
			*a++ = rec.addr[__builtin_ctz(m)];
	return out;
}

/*
 * Where the span records of chunk @data (whole ring records: a chunk, a
 * record file's body) are, for a vectorised decode: little-endian u64
 * pairs, each record's byte offset and its span's header's. Only the
 * walk from record to record is done here, each record's fields are read
 * by numpy (egpu/_spans.py).
 */
PyObject *span_index(const void *span, size_t len)
{
	const void *data = span;
	struct egpu_chunk_iter it = { data, (const uint8_t *)data + len };
	struct egpu_chunk_rec c;
	size_t n = 0, cap = 1024;
	uint64_t *v = malloc(cap * 16);
	PyObject *out = NULL;
	int more = 0;

	while (v && (more = egpu_chunk_next(&it, &c)) == 1) {
		struct egpu_span_iter si;
		struct egpu_warp_rec rec;
		uint64_t hdr = (uint64_t)((const uint8_t *)c.data - (const uint8_t *)data) - 8;
		int got;

		/* A span ring holds spans only (the CPU back end's lack the flag). */
		if (c.flags & EGPU_REC_BATCH)
			continue;
		got = egpu_span_begin(&si, c.data, c.size, NULL);
		while (!got && (got = egpu_span_next(&si, &rec)) == 1) {
			uint64_t *nv = n == cap ? realloc(v, (cap *= 2) * 16) : v;

			if (!nv) {
				free(v);
				v = NULL;
				break;
			}
			v = nv;
			v[2 * n] = (uint64_t)(si.at - rec.bytes - (const uint8_t *)data);
			v[2 * n++ + 1] = hdr;
			got = 0;
		}
		if (got < 0)
			more = got;
		if (more < 0)
			break;
	}
	if (!v)
		return PyErr_NoMemory();
	if (more < 0)
		raise_last(more);
	else
		out = PyBytes_FromStringAndSize((const char *)v, (Py_ssize_t)(n * 16));
	free(v);
	return out;
}

/* egpu_record_file_read's callback: the record appended to list @user. */
static int file_record_to_list(void *user, const void *data, size_t size)
{
	PyObject *b = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
	int ret = b ? PyList_Append((PyObject *)user, b) : -1;

	Py_XDECREF(b);
	return ret < 0 ? -1 : 0;
}

/* The records of record file @path as a list of bytes. */
PyObject *record_file_read(const char *path)
{
	PyObject *list = PyList_New(0);
	long n = list ? egpu_record_file_read(path, file_record_to_list, list) : -1;

	if (n >= 0)
		return list;
	Py_XDECREF(list);
	if (!PyErr_Occurred())
		raise_last((int)n);
	return NULL;
}

/* The consumer's counters as a dict. */
PyObject *ring_stats(struct py_ring *r)
{
	EGPU_OPTS(egpu_ringbuf_stats, st);
	int err = egpu_ringbuf_stats(r->rb, &st);

	if (err) {
		raise_last(err);
		return NULL;
	}
	return Py_BuildValue("{s:K,s:K,s:K,s:I,s:K}",
		"records", (unsigned long long)st.records,
		"bytes", (unsigned long long)st.bytes,
		"drops", (unsigned long long)st.drops, "rings", st.rings,
		"copied", (unsigned long long)st.copied);
}

unsigned long long ring_drops(struct py_ring *r)
{
	return egpu_ringbuf_drops(r->rb);
}

int ring_fd(struct py_ring *r)
{
	return egpu_ringbuf_fd(r->rb);
}

/* Send @ctx's GPU print lines to @fn(line, block, thread), or (None) back
 * to the log. The Python Context keeps @fn alive. */
PyObject *print_set_callback(egpu_ctx *ctx, PyObject *fn)
{
	int err;

	if (fn != Py_None && !PyCallable_Check(fn)) {
		PyErr_SetString(PyExc_TypeError,
				"the print callback must be callable(line, block, thread)");
		return NULL;
	}
	err = fn == Py_None ? egpu_print_set_callback(ctx, NULL, NULL) :
		egpu_print_set_callback(ctx, print_to_python, fn);
	if (err) {
		raise_last(err);
		return NULL;
	}
	Py_RETURN_NONE;
}

/* Deliver @ctx's print lines, waiting up to @timeout_ms for some. */
PyObject *print_poll(egpu_ctx *ctx, int timeout_ms)
{
	int n = wait_sliced(print_wait, ctx, timeout_ms);

	if (PyErr_Occurred())
		return NULL;
	if (n < 0) {
		raise_last(n);
		return NULL;
	}
	return PyLong_FromLong(n);
}
%}

%{
/* Library text as a str, whatever bytes it holds. */
static PyObject *text(const char *s)
{
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}
%}

%inline %{
/* A stand-in ptxas server on a socket of its own (egpu.jax). */
egpu_ptxas_server *ptxas_server_start(egpu_ctx *ctx)
{
	return egpu_ptxas_server_start(ctx, NULL);
}

/* What the checker reported so far, after a poll: a list of dicts
 * (egpu_memcheck_report's fields; kind and space as numbers). */
PyObject *memcheck_reports(egpu_memcheck *mc)
{
	int n = egpu_memcheck_poll(mc);
	PyObject *list;

	if (n < 0) {
		raise_last(n);
		return NULL;
	}
	list = PyList_New(0);
	for (int i = 0; list && i < n; i++) {
		EGPU_OPTS(egpu_memcheck_report, r);
		PyObject *d;

		if (egpu_memcheck_report_at(mc, (uint32_t)i, &r)) {
			raise_last(egpu_errcode());
			Py_CLEAR(list);
			break;
		}
		d = Py_BuildValue("{s:z,s:z,s:I,s:I,s:I,s:I,s:I,s:K,s:(III),s:(III),s:s,s:K}",
			"kernel", r.kernel, "file", r.file, "line", r.line,
			"site", r.site, "kind", (unsigned)r.kind,
			"space", (unsigned)r.space, "size", r.size,
			"address", (unsigned long long)r.addr,
			"block", r.block[0], r.block[1], r.block[2],
			"thread", r.thread[0], r.thread[1], r.thread[2],
			"where", r.where, "count", (unsigned long long)r.count);
		if (!d || PyList_Append(list, d))
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	return list;
}

/* What a ptxas server did, as a dict. */
PyObject *ptxas_server_stats(egpu_ptxas_server *srv)
{
	EGPU_OPTS(egpu_ptxas_stats, st);
	int err = egpu_ptxas_server_stats(srv, &st);

	if (err) {
		raise_last(err);
		return NULL;
	}
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:d}",
		"requests", (unsigned long long)st.requests,
		"instrumented", (unsigned long long)st.instrumented,
		"declined", (unsigned long long)st.declined,
		"failed", (unsigned long long)st.failed,
		"instrument_ms", st.instrument_ms);
}

/* The totals of a stopped trace as a dict. */
PyObject *trace_stats(egpu_trace *t)
{
	EGPU_OPTS(egpu_trace_stats, st);
	int err = egpu_trace_stats(t, &st);

	if (err) {
		raise_last(err);
		return NULL;
	}
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:I,s:K,s:K,s:K,s:K,"
			     "s:K,s:K,s:s,s:N}",
		"launches", (unsigned long long)st.launches,
		"kernels", (unsigned long long)st.kernels,
		"matched", (unsigned long long)st.matched,
		"copies", (unsigned long long)st.copies,
		"lost", (unsigned long long)st.lost,
		"gpu_ns", (unsigned long long)st.gpu_ns, "devices", st.devices,
		"host_ns", (unsigned long long)st.host_ns,
		"stack_ns", (unsigned long long)st.stack_ns,
		"python_ns", (unsigned long long)st.python_ns,
		"stacks", (unsigned long long)st.stacks,
		"stacks_slow", (unsigned long long)st.stacks_slow,
		"stacks_reused", (unsigned long long)st.stacks_reused,
		"slow_frame", st.slow_frame ? st.slow_frame : "",
		"stream_full", PyBool_FromLong(st.stream_full));
}

/* The kernels of a stopped trace, most GPU time first, as dicts. */
PyObject *trace_kernels(egpu_trace *t)
{
	size_t n = egpu_trace_kernel_cnt(t);
	PyObject *list = PyList_New((Py_ssize_t)n);

	for (size_t i = 0; list && i < n; i++) {
		const struct egpu_trace_kernel *k = egpu_trace_kernel(t, i);
		PyObject *d = Py_BuildValue("{s:N,s:K,s:K,s:N,s:K}",
			"name", text(k->name),
			"launches", (unsigned long long)k->launches,
			"gpu_ns", (unsigned long long)k->gpu_ns,
			"hottest_path", text(k->hottest_path),
			"hottest_ns", (unsigned long long)k->hottest_ns);

		if (!d)
			Py_CLEAR(list);
		else
			PyList_SET_ITEM(list, (Py_ssize_t)i, d);
	}
	return list;
}
%}

%inline %{
/* egpu_metrics_new without objects: maps come one by one. */
egpu_metrics *metrics_new(egpu_ctx *ctx, uint32_t top_n, const char *labels)
{
	EGPU_OPTS(egpu_metrics_opts, o, .top_n = top_n, .labels = labels);

	return egpu_metrics_new(ctx, &o);
}

/* egpu_metrics_add_map with the description's fields as arguments. */
int metrics_add_map(egpu_metrics *m, egpu_map *map, int kind, int key,
		    const char *name, const char *help, uint32_t top_n)
{
	EGPU_OPTS(egpu_metric_desc, d, .name = name, .help = help,
		  .kind = (enum egpu_metric_kind)kind,
		  .key = (enum egpu_metric_key)key, .top_n = top_n);

	return egpu_metrics_add_map(m, map, &d);
}

/* Name one kernel id for kernel="..." labels. */
int metrics_name_kernel(egpu_metrics *m, uint32_t id, const char *name)
{
	struct egpu_kernel_report k = { .name = name, .demangled = name,
					.kernel_id = id };
	EGPU_OPTS(egpu_report, r, .kernel_cnt = 1, .kernels = &k);

	return egpu_metrics_add_kernels(m, &r);
}

/* egpu_trace_write_pprof with its option as an argument. */
int trace_write_pprof(const egpu_trace *t, const char *path, int no_copies)
{
	EGPU_OPTS(egpu_pprof_opts, o, .no_copies = no_copies != 0);

	return egpu_trace_write_pprof(t, path, &o);
}
%}

%{
/*
 * A Python callable registered as a user helper: libffi's closure of the
 * helper's signature calls helper_to_python() with the arguments as
 * 64-bit words, synchronously on the CPU back end, and on the dispatcher
 * thread (or in helper_poll) for GPU calls; it takes the GIL either way.
 */
struct py_helper {
	PyObject *fn;
	struct egpu_helper_sig sig;
};

#define PY_HELPER_CAPSULE "egpu.helper"

/* Argument @i as Python gets it: an int, bytes (a const buffer) or a
 * bytearray copy (a writable buffer, copied back after the call). */
static PyObject *helper_arg(const struct py_helper *h, unsigned i, uint64_t v)
{
	const char *buf = (const char *)(uintptr_t)v;
	Py_ssize_t n = (Py_ssize_t)h->sig.size[i];

	switch (h->sig.kind[i]) {
	case EGPU_HELPER_ARG_U64:
		return PyLong_FromUnsignedLongLong(v);
	case EGPU_HELPER_ARG_CONST_BUF:
		return PyBytes_FromStringAndSize(buf, n);
	default:
		return PyByteArray_FromStringAndSize(buf, n);
	}
}

/* Copy what the function left in its writable buffers back to them. */
static void helper_write_back(const struct py_helper *h, PyObject *args,
			      const uint64_t *words)
{
	for (unsigned i = 0; i < h->sig.nargs; i++) {
		PyObject *o = PyTuple_GET_ITEM(args, i);
		size_t n;

		if (h->sig.kind[i] != EGPU_HELPER_ARG_BUF)
			continue;
		n = (size_t)PyByteArray_GET_SIZE(o);
		memcpy((void *)(uintptr_t)words[i], PyByteArray_AS_STRING(o),
		       n < h->sig.size[i] ? n : h->sig.size[i]);
	}
}

/* egpu_helper_generic_fn: what @user's callable raises is reported as
 * unraisable (sys.unraisablehook) and the call returns 0. */
static uint64_t helper_to_python(void *user, uint32_t id, const uint64_t *words,
				 uint32_t nargs)
{
	struct py_helper *h = user;
	PyGILState_STATE gil = py_gil_take();
	PyObject *args = PyTuple_New(nargs), *res = NULL;
	uint64_t ret = 0;

	(void)id;
	for (unsigned i = 0; args && i < nargs; i++) {
		PyObject *a = helper_arg(h, i, words[i]);

		if (!a) {
			Py_CLEAR(args);
			break;
		}
		PyTuple_SET_ITEM(args, i, a);
	}
	if (args)
		res = PyObject_CallObject(h->fn, args);
	if (res) {
		helper_write_back(h, args, words);
		if (!h->sig.ret_void)
			ret = PyLong_AsUnsignedLongLongMask(res);
	}
	if (PyErr_Occurred())
		PyErr_WriteUnraisable(h->fn);
	Py_XDECREF(res);
	Py_XDECREF(args);
	PyGILState_Release(gil);
	return ret;
}

static void py_helper_free(PyObject *capsule)
{
	struct py_helper *h = PyCapsule_GetPointer(capsule, PY_HELPER_CAPSULE);

	Py_XDECREF(h->fn);
	free(h);
}

static int helper_wait(void *handle, int timeout_ms)
{
	return egpu_helper_poll(handle, timeout_ms);
}
%}

%inline %{
/*
 * Make callable @fn helper @id of @ctx with @signature. Returns a capsule
 * owning the registration's Python side: the Python Context keeps it
 * until the C context is freed.
 */
PyObject *helper_register(egpu_ctx *ctx, uint32_t id, const char *name,
			  const char *signature, PyObject *fn)
{
	struct py_helper *h;
	PyObject *capsule;
	int err;

	if (!PyCallable_Check(fn)) {
		PyErr_SetString(PyExc_TypeError, "a helper must be callable");
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return PyErr_NoMemory();
	capsule = PyCapsule_New(h, PY_HELPER_CAPSULE, py_helper_free);
	if (!capsule) {
		free(h);
		return NULL;
	}
	Py_INCREF(fn);
	h->fn = fn;
	h->sig.sz = sizeof(h->sig);
	EGPU_OPTS(egpu_helper_opts, o, .generic = helper_to_python, .user = h);
	err = egpu_helper_register(ctx, id, name, NULL, signature, &o);
	if (!err)
		err = egpu_helper_sig_parse(signature, &h->sig);
	if (err) {
		Py_DECREF(capsule);
		raise_last(err);
		return NULL;
	}
	return capsule;
}

/* egpu_helper_poll() without the GIL, in slices (Ctrl-C ends it). */
PyObject *helper_poll(egpu_ctx *ctx, int timeout_ms)
{
	int n = wait_sliced(helper_wait, ctx, timeout_ms);

	if (PyErr_Occurred())
		return NULL;
	if (n < 0) {
		raise_last(n);
		return NULL;
	}
	return PyLong_FromLong(n);
}

/* egpu_helper_set_dispatch() without the GIL: stopping the dispatcher
 * waits for the call it is making, which may need the GIL. */
PyObject *helper_dispatch(egpu_ctx *ctx, int how)
{
	int err;

	Py_BEGIN_ALLOW_THREADS
	err = egpu_helper_set_dispatch(ctx, (enum egpu_helper_dispatch)how);
	Py_END_ALLOW_THREADS
	if (err) {
		raise_last(err);
		return NULL;
	}
	Py_RETURN_NONE;
}
%}
