/* SPDX-License-Identifier: MIT */
/*
 * libegpu_inject.so: traces an unmodified CUDA application. The CUDA
 * driver loads the library CUDA_INJECTION64_PATH names at cuInit and calls
 * its InitializeInjection() (CUPTI's injection contract); the trace starts
 * there and is written at exit into $EGPU_TRACE_DIR (default: egpu-trace):
 * trace.perfetto-trace (Perfetto's protobuf trace; trace.json, the JSON
 * timeline, with $EGPU_TRACE_FORMAT=json), trace.folded, trace.svg,
 * summary.txt; the summary also goes to stderr. $EGPU_TRACE_PPROF names a file for a
 * gzip'd pprof profile as well; $EGPU_TRACE_NO_PYTHON=1 leaves Python
 * frames out. $EGPU_TRACE_DELAY and $EGPU_TRACE_DURATION (seconds) trace
 * a window only (window.c): the trace opens after the delay and is written
 * when the duration has passed; with $EGPU_TRACE_SIGNAL set, each SIGUSR1
 * opens a window or closes and writes the open one (files STEM.wN.EXT).
 * A crash (a fatal signal) writes the trace too (crash.c), unless
 * $EGPU_TRACE_NO_CRASH is set. $EGPU_TRACE_LAST=S keeps only the last S
 * seconds (the flight recorder: written at exit or at a crash, and with
 * $EGPU_TRACE_SIGNAL at each SIGUSR1, which starts it again). Otherwise the
 * Perfetto timeline is streamed to its file while the program runs;
 * $EGPU_TRACE_MAX_SIZE (bytes) stops it at that size, or with
 * $EGPU_TRACE_ROTATE=N rotates it, keeping N files. `egpu trace -- CMD`
 * sets this up.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "egpu.h"
#include "window.h"

#define EXPORT __attribute__((visibility("default")))
#define MSG "egpu trace: "

/* The trace is opened and closed by the program's thread in cuInit and
 * at exit, or by the window's thread: one at a time. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static egpu_trace *trace;
static bool initialized, closed;
static double start_ms; /* when the trace started */
static struct window window;
static unsigned windows_written; /* windows opened by signals */
static bool streaming; /* the Perfetto timeline goes to its file as traced */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct output {
	enum egpu_trace_format format;
	const char *stem, *ext;
};

/* The timeline first: Perfetto's binary trace, or with
 * EGPU_TRACE_FORMAT=json the JSON one. */
static struct output outputs[] = {
	{ EGPU_TRACE_PERFETTO, "trace", "perfetto-trace" },
	{ EGPU_TRACE_FOLDED, "trace", "folded" },
	{ EGPU_TRACE_SVG, "trace", "svg" },
	{ EGPU_TRACE_SUMMARY, "summary", "txt" },
};

static void pick_timeline(void)
{
	const char *format = getenv("EGPU_TRACE_FORMAT");

	if (format && !strcmp(format, "json"))
		outputs[0] = (struct output){ EGPU_TRACE_CHROME, "trace", "json" };
}

/* The folder the files go to, created if needed; NULL with a message. */
static const char *out_dir(void)
{
	const char *dir = getenv("EGPU_TRACE_DIR");

	if (!dir || !*dir)
		dir = "egpu-trace";
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, MSG "%s: %s\n", dir, strerror(errno));
		return NULL;
	}
	return dir;
}

/*
 * DIR/STEM.EXT; STEM.PID.EXT in a process other than the one `egpu trace`
 * started (EGPU_TRACE_PID), so that children do not overwrite it; with
 * windows opened by signals, STEM.wN.EXT (STEM.PID.wN.EXT) for the Nth.
 */
static void out_path(char *buf, size_t len, const char *dir, size_t i)
{
	const char *root = getenv("EGPU_TRACE_PID");
	char pid[32] = "", win[32] = "";

	if (root && atol(root) != (long)getpid())
		snprintf(pid, sizeof(pid), ".%ld", (long)getpid());
	if (window.by_signal)
		snprintf(win, sizeof(win), ".w%u", windows_written + 1);
	snprintf(buf, len, "%s/%s%s%s.%s", dir, outputs[i].stem, pid, win,
		 outputs[i].ext);
}

static void print_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[4096];
	size_t n;

	if (!f)
		return;
	while ((n = fread(buf, 1, sizeof(buf), f)))
		fwrite(buf, 1, n, stderr);
	fclose(f);
}

static void print_stats(void)
{
	struct egpu_trace_stats st = { .sz = sizeof(st) };

	if (egpu_trace_stats(trace, &st))
		return;
	fprintf(stderr, MSG "%llu launches, %llu kernels (%llu matched to "
		"a launch), %llu copies, %llu records lost, %.3f ms GPU time\n",
		(unsigned long long)st.launches, (unsigned long long)st.kernels,
		(unsigned long long)st.matched, (unsigned long long)st.copies,
		(unsigned long long)st.lost, st.gpu_ns / 1e6);
	if (!st.launches)
		return;
	fprintf(stderr, MSG "own time on the application's threads %.1f ms, "
		"%.2f us a launch (native stacks %.2f, Python %.2f); %llu "
		"stacks, %llu finished from the previous, %llu by "
		"backtrace()%s%s\n", st.host_ns / 1e6,
		st.host_ns / 1e3 / (double)st.launches,
		st.stack_ns / 1e3 / (double)st.launches,
		st.python_ns / 1e3 / (double)st.launches,
		(unsigned long long)st.stacks,
		(unsigned long long)st.stacks_reused,
		(unsigned long long)st.stacks_slow,
		*st.slow_frame ? ", first at " : "", st.slow_frame);
}

/* The pprof profile $EGPU_TRACE_PPROF asks for (only the process that
 * `egpu trace` started, as children would overwrite it). */
static void write_pprof(void)
{
	const char *path = getenv("EGPU_TRACE_PPROF");
	const char *root = getenv("EGPU_TRACE_PID");
	double t = now_ms();

	if (!path || !*path || (root && atol(root) != (long)getpid()))
		return;
	if (egpu_trace_write_pprof(trace, path, NULL))
		fprintf(stderr, MSG "%s\n", egpu_errmsg());
	else
		fprintf(stderr, MSG "wrote %s (%.1f ms)\n", path, now_ms() - t);
}

/* The streamed timeline, written as the program ran. */
static void print_streamed(const char *path)
{
	struct egpu_trace_stats st = { .sz = sizeof(st) };

	fprintf(stderr, MSG "streamed %s\n", path);
	if (!egpu_trace_stats(trace, &st) && st.stream_full)
		fprintf(stderr, MSG "its timeline stopped at --max-size %s "
			"bytes (the other files cover the whole run)\n",
			getenv("EGPU_TRACE_MAX_SIZE"));
}

static void write_trace(void)
{
	const char *dir = out_dir();
	double t = now_ms(), ran = t - start_ms;
	char path[4096];

	if (egpu_trace_stop(trace)) {
		fprintf(stderr, MSG "%s\n", egpu_errmsg());
		return;
	}
	/* What tracing itself costs at the ends, so users can weigh it. */
	fprintf(stderr, MSG "traced %.1f ms; stopping and joining took %.1f ms\n",
		ran, now_ms() - t);
	if (!dir)
		return;
	print_stats();
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		out_path(path, sizeof(path), dir, i);
		t = now_ms();
		if (!i && streaming) {
			print_streamed(path);
			continue;
		}
		if (egpu_trace_write(trace, outputs[i].format, path))
			fprintf(stderr, MSG "%s\n", egpu_errmsg());
		else
			fprintf(stderr, MSG "wrote %s (%.1f ms)\n", path, now_ms() - t);
	}
	write_pprof();
	print_file(path);  /* the summary, written last */
	egpu_trace_free(trace);
	trace = NULL;
}

/* Stop and write the trace, once: at the window's end or at exit. */
static void finish(void)
{
	pthread_mutex_lock(&lock);
	if (!closed && trace)
		write_trace();
	else if (!closed && window.by_signal && !windows_written)
		fprintf(stderr, MSG "no trace: no SIGUSR1 opened a window\n");
	else if (!closed && !window.by_signal)
		fprintf(stderr, MSG "no trace: the program ended before the "
			"window began (--delay %g)\n", window.delay_s);
	closed = true;
	pthread_mutex_unlock(&lock);
}

/* The Perfetto timeline streams to @path unless a flight recorder holds
 * the trace or the timeline is JSON; false with a message. */
static bool stream_to(struct egpu_trace_opts *opts, char *path, size_t len)
{
	const char *dir, *max = getenv("EGPU_TRACE_MAX_SIZE");
	const char *rotate = getenv("EGPU_TRACE_ROTATE");

	pick_timeline();
	streaming = outputs[0].format == EGPU_TRACE_PERFETTO && !opts->keep_ns;
	if (!streaming)
		return true;
	if (!(dir = out_dir()))
		return false;
	out_path(path, len, dir, 0);
	opts->stream_path = path;
	opts->max_size = max ? strtoull(max, NULL, 10) : 0;
	opts->max_files = rotate ? (uint32_t)strtoul(rotate, NULL, 10) : 0;
	return true;
}

/* Start the trace (the lock held); false with a message. */
static bool start_trace(void)
{
	double t = now_ms();
	const char *no_python = getenv("EGPU_TRACE_NO_PYTHON");
	struct egpu_trace_opts opts = { .sz = sizeof(opts),
		.no_python = no_python && *no_python && strcmp(no_python, "0"),
		.keep_ns = (uint64_t)(window.last_s * 1e9) };
	char path[4096];

	start_ms = t;
	if (!stream_to(&opts, path, sizeof(path)))
		return false;
	trace = egpu_trace_start(&opts);
	if (!trace) {
		fprintf(stderr, MSG "not tracing: %s\n", egpu_errmsg());
		return false;
	}
	fprintf(stderr, MSG "CUPTI set up in %.1f ms\n", now_ms() - t);
	/* Exit handlers run last-registered first: CUPTI registered its own
	 * teardown while the trace started, and the trace must stop before
	 * it (cuptiActivityDisable faults on a torn-down CUPTI). finish()
	 * runs once whichever registration calls it. */
	if (atexit(finish))
		fprintf(stderr, MSG "the trace may not be written at exit: atexit failed\n");
	return true;
}

/* The window's start, after its delay (unless the program has exited). */
static void open_window(void)
{
	pthread_mutex_lock(&lock);
	if (!closed && !trace && start_trace())
		fprintf(stderr, MSG "window opened after %g s\n",
			window.delay_s);
	pthread_mutex_unlock(&lock);
}

/* A fatal signal: write what was traced (on crash.c's thread). */
static void on_crash(int sig)
{
	fprintf(stderr, MSG "the program got signal %d (%s): writing the "
		"trace\n", sig, strsignal(sig));
	finish();
}

/* Write the trace at a crash too, unless $EGPU_TRACE_NO_CRASH. */
static void watch_crashes(void)
{
	int err;

	if (getenv("EGPU_TRACE_NO_CRASH") || !(err = crash_watch(on_crash)))
		return;
	fprintf(stderr, MSG "a crash will not write the trace: %s\n",
		strerror(err));
}

/* SIGUSR1 (by_signal): open a window, or close and write the open one;
 * with the flight recorder, write what it holds and start it again. */
static void toggle_window(void)
{
	pthread_mutex_lock(&lock);
	if (!closed && trace) {
		write_trace();
		windows_written++;
		if (window.last_s)
			start_trace();
	} else if (!closed && start_trace()) {
		fprintf(stderr, MSG "window %u opened by SIGUSR1\n",
			windows_written + 1);
	}
	pthread_mutex_unlock(&lock);
}

/* Called by the CUDA driver once, inside the application's cuInit. */
EXPORT int InitializeInjection(void)
{
	bool ok = true;
	int err = 0;

	if (initialized)
		return 1;
	initialized = true;
	window = (struct window){ window_env("EGPU_TRACE_DELAY"),
		window_env("EGPU_TRACE_DURATION"), window_env("EGPU_TRACE_LAST"),
		open_window, finish, toggle_window,
		getenv("EGPU_TRACE_SIGNAL") != NULL };
	if (window.delay_s < 0 || window.duration_s < 0 || window.last_s < 0)
		return 0;
	if (atexit(finish)) {
		fprintf(stderr, MSG "not tracing: atexit failed\n");
		return 0;
	}
	watch_crashes();
	if (window.by_signal && (err = window_run(&window)))
		fprintf(stderr, MSG "not tracing: cannot wait for SIGUSR1: "
			"%s\n", strerror(err));
	if (window.by_signal && !err && window.last_s)
		toggle_window();  /* the flight recorder runs from the start */
	if (window.by_signal)
		return !err;
	pthread_mutex_lock(&lock);
	if (!window.delay_s)
		closed = !(ok = start_trace());
	pthread_mutex_unlock(&lock);
	if (ok && (window.delay_s || window.duration_s) && window_run(&window)) {
		fprintf(stderr, MSG "no window: cannot start its thread; "
			"tracing to the end\n");
		if (window.delay_s)
			open_window();
	}
	return ok;
}
