/* SPDX-License-Identifier: MIT */
/*
 * The agent: at the first module load, makes a libegpu context in the
 * application's CUDA context, loads the probe named by EGPU_ATTACH and
 * attaches its programs by section name; then instruments each module
 * image that carries PTX, keeping the result in a cache keyed by the
 * image's PTX (the probe and the target are fixed for the process). Prints
 * and events stream from a thread; maps and the report are printed at
 * exit.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/memcheck_agent.h"
#include "attach/memcheck_hook.h"
#include "attach/uprobe.h"
#include "core/core.h"
#include "cuda/cu.h"
#include "image/image.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct attach_env env;
static egpu_ctx *ctx;
static egpu_obj *obj;
static bool setup_done, setup_failed;
static struct attach_stats st;
static char target[16]; /* sm_XY of the device */
static pthread_t poller;
static bool poller_running, stopping;
static egpu_metrics *metrics; /* --metrics: the Prometheus exporter */

/* The cache: PTX in, instrumented PTX out. */
struct cached {
	uint64_t hash;
	char *in;
	size_t in_len;
	char *out;
};
static struct cached *cache;
static size_t ncache, cache_cap;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static FILE *report_file(void)
{
	FILE *f = env.out ? fopen(env.out, "w") : NULL;

	if (env.out && !f)
		fprintf(stderr, ATTACH_MSG "%s: cannot write, reporting to stderr\n",
			env.out);
	return f ? f : stderr;
}

static void *poll_loop(void *arg)
{
	double next = env.interval > 0 ? now_ms() + env.interval * 1e3 : 0;

	(void)arg;
	agent_enter();
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		/* not while a load moves maps or adds kernels (whose names
		 * print lines carry) */
		pthread_mutex_lock(&lock);
		events_poll();
		egpu_print_poll(ctx, 0);
		memcheck_agent_poll();
		if (next && now_ms() >= next && obj) {
			report_print(stderr, obj, &st, env.json, false);
			next += env.interval * 1e3;
		}
		pthread_mutex_unlock(&lock);
		usleep(50000);
	}
	return NULL;
}

static void finish(void)
{
	FILE *f;

	if (!ctx)
		return;
	agent_enter();
	if (poller_running) {
		__atomic_store_n(&stopping, true, __ATOMIC_RELEASE);
		pthread_join(poller, NULL);
		poller_running = false;
	}
	trace_file_stop(stderr);
	pthread_mutex_lock(&lock);
	egpu_print_poll(ctx, 0);
	events_stop();
	egpu_metrics_free(metrics);
	metrics = NULL;
	f = report_file();
	if (obj)
		report_print(f, obj, &st, env.json, true);
	/* One document a file: beside a probe's report, memcheck's goes to
	 * stderr. */
	memcheck_agent_finish(obj ? stderr : f, env.json);
	if (f != stderr)
		fclose(f);
	pthread_mutex_unlock(&lock);
	/* the context and maps stay: the application may still be running
	 * kernels from other exit handlers */
}

/*
 * --metrics: every map of the probe on /metrics (kinds from
 * EGPU_ATTACH_METRICS_SPEC, else from the maps); kernel ids are named
 * from each instrumentation's report. Failing to serve is not fatal: the
 * maps are still printed at exit.
 */
static void serve_metrics(void)
{
	EGPU_OPTS(egpu_metrics_opts, mo, .objs = &obj, .obj_cnt = 1,
		  .spec = env.metrics_spec, .listen = env.metrics);

	metrics = egpu_metrics_serve(ctx, &mo);
	if (metrics)
		fprintf(stderr, ATTACH_MSG "metrics on port %d (GET /metrics)\n",
			egpu_metrics_port(metrics));
	else
		fprintf(stderr, ATTACH_MSG "--metrics %s: %s; maps are printed at exit\n",
			env.metrics, egpu_errmsg());
}

/* The probe of EGPU_ATTACH, its maps seeded and its programs attached. */
static int setup_probe(void)
{
	int n;

	obj = egpu_load(ctx, env.probe, NULL);
	if (!obj)
		return -1;
	/* maps seeded before any instrumented kernel; rings consumed from
	 * the start */
	if (seed_maps(obj, &env))
		return err_set(EGPU_EINVAL, "the maps could not be seeded (above)");
	if (events_start(obj, &env))
		return err_set(EGPU_EINVAL, "the rings cannot be consumed (above)");
	n = egpu_attach_all(obj);
	if (n < 0)
		return -1;
	fprintf(stderr, ATTACH_MSG "%s: %d program%s attached, target %s\n",
		env.probe, n, n == 1 ? "" : "s", target);
	if (env.metrics)
		serve_metrics();
	if (env.trace && trace_file_start(obj, env.trace))
		return -1;
	return 0;
}

/* The context, then memcheck (EGPU_MEMCHECK) and the probe, either or
 * both; a memcheck that cannot start leaves the probe running. */
static int setup(void)
{
	EGPU_OPTS(egpu_ctx_opts, co, .sm = target);
	CUcontext cur;

	if (cu_ctx_current(&cur) || cu_device_sm(target, sizeof(target)))
		return -1;
	ctx = egpu_ctx_new(&co);
	if (!ctx)
		return -1;
	if (memcheck_on() && memcheck_agent_start(ctx)) {
		if (!env.probe)
			return -1;
		fprintf(stderr, ATTACH_MSG "memcheck is off: %s\n", egpu_errmsg());
	}
	if (env.probe && setup_probe())
		return -1;
	atexit(finish);
	poller_running = !pthread_create(&poller, NULL, poll_loop, NULL);
	return 0;
}

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

static struct cached *cache_find(uint64_t h, const char *ptx, size_t len)
{
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].hash == h && cache[i].in_len == len &&
		    !memcmp(cache[i].in, ptx, len))
			return &cache[i];
	return NULL;
}

static void cache_add(uint64_t h, char *ptx, size_t len, char *out)
{
	if (!ARRAY_GROW(cache, cache_cap, ncache, 16)) {
		free(ptx);
		free(out);
		return;
	}
	cache[ncache++] = (struct cached){ h, ptx, len, out };
}

static void note_kernels(const struct egpu_report *rep)
{
	for (uint32_t i = 0; i < rep->kernel_cnt; i++) {
		const struct egpu_kernel_report *k = &rep->kernels[i];
		struct attach_kernel *ks;
		size_t j;

		if (!k->programs)
			continue;
		for (j = 0; j < st.nkernels && st.kernels[j].id != k->kernel_id; j++)
			;
		if (j < st.nkernels)
			continue;
		ks = realloc(st.kernels, (st.nkernels + 1) * sizeof(*ks));
		if (!ks)
			return;
		st.kernels = ks;
		ks[st.nkernels++] = (struct attach_kernel){
			strdup(k->name), strdup(k->demangled), k->kernel_id };
	}
}

static void note_sass(const struct image_info *info, const char *via)
{
	char what[160], line[256], **l;

	image_describe(info, what, sizeof(what));
	snprintf(line, sizeof(line), "%s: %s %s", via,
		 info->kind == IMAGE_CUBIN ? "cubin" : "fatbin", what);
	l = realloc(st.sass_only, (st.nsass_only + 1) * sizeof(*l));
	if (!l)
		return;
	st.sass_only = l;
	l[st.nsass_only++] = strdup(line);
}

/* Instrumented PTX for @image, from the cache or made now; NULL: none. */
static char *instrument(const void *image, size_t len, const char *via)
{
	EGPU_OPTS(egpu_report, rep);
	struct image_info info;
	struct cached *c;
	size_t plen, out_len;
	char *ptx, *out;
	uint64_t h;
	double t0 = now_ms();

	if (image_ptx(image, len, target, &ptx, &plen, &info)) {
		if (egpu_errcode() == EGPU_ENOTSUP)
			note_sass(&info, via);
		else
			st.failed++;
		return NULL;
	}
	h = fnv1a(ptx, plen);
	c = cache_find(h, ptx, plen);
	if (c) {
		free(ptx);
		st.cache_hits++;
		st.instrument_ms += now_ms() - t0;
		return c->out;
	}
	if (egpu_instrument_ptx(ctx, ptx, plen, &out, &out_len, &rep)) {
		fprintf(stderr, ATTACH_MSG "%s: not instrumented: %s\n", via,
			egpu_errmsg());
		st.failed++;
		free(ptx);
		return NULL;
	}
	note_kernels(&rep);
	memcheck_agent_sites(&rep);
	if (metrics && egpu_metrics_add_kernels(metrics, &rep))
		fprintf(stderr, ATTACH_MSG "%s: kernel names for metrics: %s\n",
			via, egpu_errmsg());
	cache_add(h, ptx, plen, out);
	st.instrument_ms += now_ms() - t0;
	return out;
}

/* The context and probe, made at the first load or host probe. */
static void setup_once(void)
{
	if (setup_done)
		return;
	setup_done = true;
	setup_failed = setup() != 0;
	if (setup_failed)
		fprintf(stderr, ATTACH_MSG "no probes: %s\n", egpu_errmsg());
}

egpu_obj *agent_obj(void)
{
	bool was_busy;
	egpu_obj *o;

	if (!env.probe)
		return NULL;
	was_busy = agent_enter();
	pthread_mutex_lock(&lock);
	setup_once();
	o = setup_failed ? NULL : obj;
	pthread_mutex_unlock(&lock);
	agent_leave(was_busy);
	return o;
}

void agent_begin(const void *image, size_t len, const char *via,
		 struct attach_load *ld)
{
	memset(ld, 0, sizeof(*ld));
	if ((!env.probe && !memcheck_on()) || !image)
		return;
	agent_enter();
	pthread_mutex_lock(&lock);
	st.modules++;
	st.ptxas_compiles += !strcmp(via, ATTACH_VIA_PTXAS);
	setup_once();
	if (!setup_failed)
		ld->ptx = instrument(image, len, via);
	if (env.verbose)
		fprintf(stderr, ATTACH_MSG "%s: %s\n", via,
			ld->ptx ? "instrumented" : "loaded as it is");
	pthread_mutex_unlock(&lock);
	agent_leave(false);
	ld->t_load_ms = now_ms();
}

void agent_link(struct attach_load *ld, unsigned n, const void *keys,
		void *const *vals)
{
	EGPU_OPTS(egpu_ptx_link_opts, o, .jit_cnt = n, .jit_keys = keys,
		  .jit_vals = vals);
	size_t size;
	bool was_busy;
	int err;

	if (!ld->ptx)
		return;
	was_busy = agent_enter();
	pthread_mutex_lock(&lock); /* the context's trace options */
	err = egpu_ptx_link(ctx, ld->ptx, &o, &ld->cubin, &size);
	pthread_mutex_unlock(&lock);
	agent_leave(was_busy);
	if (err && err != EGPU_ENOENT)
		fprintf(stderr, ATTACH_MSG "the device runtime not compiled apart, the module loaded as one: %s\n",
			egpu_errmsg());
}

const char *agent_target(void)
{
	return target;
}

void agent_end(struct attach_load *ld, bool ok, int cuda_err)
{
	double ms = now_ms() - ld->t_load_ms;

	free(ld->cubin);
	ld->cubin = NULL;

	pthread_mutex_lock(&lock);
	st.load_ms += ms;
	if (ok)
		st.instrumented++;
	else
		st.failed++;
	pthread_mutex_unlock(&lock);
	if (!ok)
		fprintf(stderr, ATTACH_MSG "the driver refused an instrumented module (CUDA error %d); loaded the original\n",
			cuda_err);
}

/* At exit with EGPU_MEMCHECK, when finish() was never registered (the
 * setup failed): the report, or why there is none. */
static void finish_idle(void)
{
	FILE *f;

	if ((setup_done && !setup_failed) || !memcheck_agent_has_report())
		return;
	f = report_file();
	memcheck_agent_finish(f, env.json);
	if (f != stderr)
		fclose(f);
}

__attribute__((constructor)) static void read_env(void)
{
	const char *v;

	/* Before the application's context: its streams and the rings'
	 * copy streams on hardware queues of their own (8 by default), so
	 * that a drain never waits behind a kernel waiting for the drain
	 * (docs/events.md "Drained while the kernel runs"). */
	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);

	env.probe = getenv("EGPU_ATTACH");
	if (env.probe && !*env.probe)
		env.probe = NULL;
	env.out = getenv("EGPU_ATTACH_OUT");
	v = getenv("EGPU_ATTACH_JSON");
	env.json = v && *v && strcmp(v, "0");
	v = getenv("EGPU_ATTACH_INTERVAL");
	env.interval = v ? atof(v) : 0;
	env.metrics = getenv("EGPU_ATTACH_METRICS");
	env.metrics_spec = getenv("EGPU_ATTACH_METRICS_SPEC");
	v = getenv("EGPU_ATTACH_VERBOSE");
	env.verbose = v && *v && strcmp(v, "0");
	env.events_out = getenv("EGPU_ATTACH_EVENTS_OUT");
	env.events_raw = getenv("EGPU_ATTACH_EVENTS_RAW");
	env.event_types = getenv("EGPU_ATTACH_EVENT_TYPES");
	env.set = getenv("EGPU_ATTACH_SET");
	env.set_file = getenv("EGPU_ATTACH_SET_FILE");
	env.trace = getenv("EGPU_ATTACH_TRACE");
	if (!env.probe && !memcheck_on())
		fprintf(stderr, ATTACH_MSG "EGPU_ATTACH is not set: no probes\n");
	if (memcheck_on())
		atexit(finish_idle);
}
