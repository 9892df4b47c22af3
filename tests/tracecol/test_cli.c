// SPDX-License-Identifier: MIT
/*
 * `egpu trace` without a GPU: usage errors, the command's exit status and
 * environment, and the whole path (libegpu_inject.so loaded by a stand-in
 * driver, tracing through a stand-in libcupti): files and stderr summary.
 */
#include <check.h>
#include <glob.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>

#include "egpu.h"
#include "test_util.h"

extern char **environ;

/* Run the egpu tool with @argv (after "egpu"), stderr into @err. */
static int run_egpu(const char *const *argv, char *err, size_t len)
{
	char path[] = "/tmp/egpu_tracecol_XXXXXX";
	const char *args[16] = { EGPU_CLI };
	posix_spawn_file_actions_t fa;
	int fd = mkstemp(path), status;
	size_t n = 1;
	ssize_t got;
	pid_t pid;

	ck_assert_int_ge(fd, 0);
	while (argv[n - 1] && n < 15) {
		args[n] = argv[n - 1];
		n++;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 2);
	ck_assert_int_eq(posix_spawn(&pid, EGPU_CLI, &fa, NULL,
				     (char *const *)args, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	got = pread(fd, err, len - 1, 0);
	err[got > 0 ? got : 0] = '\0';
	close(fd);
	unlink(path);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(cli_usage_errors)
{
	const char *none[] = { "trace", NULL };
	const char *no_dir[] = { "trace", "-o", NULL };
	const char *unknown[] = { "trace", "-x", "true", NULL };
	const char *only_dashes[] = { "trace", "-o", "/tmp", "--", NULL };
	const char *no_pprof[] = { "trace", "--pprof", NULL };
	char err[4096];

	ck_assert_int_eq(run_egpu(none, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "no command to run"));
	ck_assert_int_eq(run_egpu(no_dir, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "-o needs a folder"));
	ck_assert_int_eq(run_egpu(unknown, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "unknown option '-x'"));
	ck_assert_int_eq(run_egpu(only_dashes, err, sizeof(err)), 2);
	ck_assert_int_eq(run_egpu(no_pprof, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "--pprof needs a file"));
}
END_TEST

START_TEST(cli_output_not_a_folder)
{
	const char *file[] = { "trace", "-o", "/dev/null", "true", NULL };
	char err[4096];

	ck_assert_int_eq(run_egpu(file, err, sizeof(err)), 1);
	ck_assert_ptr_nonnull(strstr(err, "/dev/null: not a folder"));
}
END_TEST

START_TEST(cli_runs_the_command)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX";
	const char *exit3[] = { "trace", "-o", dir, "--", "sh", "-c",
		"test \"$CUDA_INJECTION64_PATH\" && test -d \"$EGPU_TRACE_DIR\""
		" && exit 3", NULL };
	const char *missing[] = { "trace", "-o", dir, "/nonexistent/cmd",
		NULL };
	char err[4096];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* the command's status comes back; it saw the injection set up */
	ck_assert_int_eq(run_egpu(exit3, err, sizeof(err)), 3);
	ck_assert_msg(strstr(err, "no trace written"), "stderr: %s", err);
	ck_assert_int_eq(run_egpu(missing, err, sizeof(err)), 127);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/cmd"));
	setenv("EGPU_INJECT_LIB", "/nonexistent/libegpu_inject.so", 1);
	ck_assert_int_eq(run_egpu(exit3, err, sizeof(err)), 1);
	ck_assert_ptr_nonnull(strstr(err, "EGPU_INJECT_LIB"));
	unsetenv("EGPU_INJECT_LIB");
	rmdir(dir);
}
END_TEST

/* Whether the gzip'd file @path holds the bytes of @s. */
static bool gz_holds(const char *path, const char *s)
{
	static char buf[1 << 16];
	gzFile gz = gzopen(path, "rb");
	int n = gz ? gzread(gz, buf, sizeof(buf) - 1) : -1;

	if (gz)
		gzclose(gz);
	return n > 0 && memmem(buf, (size_t)n, s, strlen(s));
}

/* The whole path with the stand-in driver and libcupti: files, stderr. */
START_TEST(cli_writes_the_trace)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX", path[128], pprof[128];
	const char *run[] = { "trace", "-o", dir, "--pprof", pprof,
		FAKE_DRIVER, NULL };
	static const char *const files[] = { "trace.folded",
		"trace.perfetto-trace", "trace.svg", "summary.txt" };
	char err[8192], *text;
	size_t len;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(pprof, sizeof(pprof), "%s/gpu.pb.gz", dir);
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 5);
	ck_assert_msg(strstr(err, "3 launches, 3 kernels (3 matched"),
		      "stderr: %s", err);
	/* the profile names the kernel and the launching frames */
	ck_assert_msg(gz_holds(pprof, "[GPU_Kernel]update(float*, int)") &&
		      gz_holds(pprof, "train_step"), "stderr: %s", err);
	unlink(pprof);
	ck_assert_msg(strstr(err, "update(float*, int)"), "stderr: %s", err);
	ck_assert_ptr_null(strstr(err, "no trace written"));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		text = tu_read_file(path, &len);
		/* the Perfetto trace is binary: its strings among other bytes */
		ck_assert_msg(memmem(text, len, "update(float*, int)", 19),
			      "%s lacks the kernel", path);
		if (i == 0)
			ck_assert_msg(strstr(text, "play;train_step;"
					     "cudaLaunchKernel;"),
				      "folded: %s", text);
		free(text);
		unlink(path);
	}
	rmdir(dir);
}
END_TEST

/* --format json: the JSON timeline instead of Perfetto's; a format the
 * tool does not know is refused. */
START_TEST(cli_json_timeline)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX", path[128];
	const char *run[] = { "trace", "-o", dir, "--format", "json",
		FAKE_DRIVER, NULL };
	const char *bad[] = { "trace", "--format", "xml", "true", NULL };
	static const char *const others[] = { "trace.folded", "trace.svg",
		"summary.txt" };
	char err[8192], *text;
	size_t len;

	ck_assert_int_eq(run_egpu(bad, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "--format takes perfetto or json"));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 5);
	snprintf(path, sizeof(path), "%s/trace.perfetto-trace", dir);
	ck_assert_int_ne(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	text = tu_read_file(path, &len);
	ck_assert_msg(strstr(text, "\"traceEvents\""), "json: %s", text);
	free(text);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, others[i]);
		unlink(path);
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Remove the four outputs of a run from @dir (STEM@infix.EXT), each of
 * which must be there; @err (the run's stderr) says why not. */
static void take_outputs(const char *dir, const char *infix, const char *err)
{
	static const char *const stem_ext[][2] = { { "trace", "folded" },
		{ "trace", "perfetto-trace" }, { "trace", "svg" },
		{ "summary", "txt" } };
	char path[160];

	for (size_t i = 0; i < sizeof(stem_ext) / sizeof(stem_ext[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s%s.%s", dir, stem_ext[i][0],
			 infix, stem_ext[i][1]);
		ck_assert_msg(!unlink(path), "%s: %s", path, err);
	}
}

/* --delay and --duration: the window between the first and last burst
 * of launches holds only the middle one (4 launches), written when the
 * window closes; bad values are refused. */
START_TEST(cli_window)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX";
	const char *run[] = { "trace", "-o", dir, "--delay", "0.4",
		"--duration", "0.8", FAKE_DRIVER, "bursts", NULL };
	const char *bad[] = { "trace", "--delay", "-1", "true", NULL };
	const char *late[] = { "trace", "-o", dir, "--delay", "30",
		FAKE_DRIVER, NULL };
	char err[8192];

	ck_assert_int_eq(run_egpu(bad, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "--delay takes seconds"));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 5);
	ck_assert_msg(strstr(err, "window opened after 0.4 s") &&
		      strstr(err, "4 launches, 4 kernels (4 matched"),
		      "stderr: %s", err);
	take_outputs(dir, "", err);
	/* the program ends before the window begins: said, nothing written */
	ck_assert_int_eq(run_egpu(late, err, sizeof(err)), 5);
	ck_assert_msg(strstr(err, "ended before the window began"),
		      "stderr: %s", err);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* --signal: SIGUSR1 opens a window and the next closes it, written as
 * trace.w1.*; it cannot be mixed with --delay. */
START_TEST(cli_signal_window)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX";
	const char *run[] = { "trace", "-o", dir, "--signal", FAKE_DRIVER,
		"signals", NULL };
	const char *mixed[] = { "trace", "--signal", "--delay", "1", "true",
		NULL };
	char err[8192];

	ck_assert_int_eq(run_egpu(mixed, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "no --delay or --duration"));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 5);
	ck_assert_msg(strstr(err, "window 1 opened by SIGUSR1") &&
		      strstr(err, "4 launches, 4 kernels (4 matched"),
		      "stderr: %s", err);
	ck_assert_ptr_null(strstr(err, "no trace written"));
	take_outputs(dir, ".w1", err);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* --last: the flight recorder keeps the last burst only (5 launches). */
START_TEST(cli_flight_recorder)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX";
	const char *run[] = { "trace", "-o", dir, "--last", "0.4", FAKE_DRIVER,
		"bursts", NULL };
	char err[8192];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 5);
	ck_assert_msg(strstr(err, "5 launches, 5 kernels (5 matched"),
		      "stderr: %s", err);
	take_outputs(dir, "", err);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* --last with --signal: each SIGUSR1 writes what the recorder holds (the
 * burst before it) and starts it again; the exit writes the last. */
START_TEST(cli_flight_recorder_on_signal)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX";
	const char *run[] = { "trace", "-o", dir, "--signal", "--last", "0.4",
		FAKE_DRIVER, "signals", NULL };
	char err[8192];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 5);
	ck_assert_msg(strstr(err, "3 launches, 3 kernels (3 matched") &&
		      strstr(err, "4 launches, 4 kernels (4 matched") &&
		      strstr(err, "5 launches, 5 kernels (5 matched"),
		      "stderr: %s", err);
	take_outputs(dir, ".w1", err);
	take_outputs(dir, ".w2", err);
	take_outputs(dir, ".w3", err);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ASAN_OPTIONS with handle_segv=0 added (this test's process only:
 * Check runs each test in a process of its own). */
static void sanitizer_keeps_segv_default(void)
{
	const char *old = getenv("ASAN_OPTIONS");
	char opts[512];

	snprintf(opts, sizeof(opts), "%s%shandle_segv=0", old ? old : "",
		 old && *old ? ":" : "");
	ck_assert_int_eq(setenv("ASAN_OPTIONS", opts, 1), 0);
}

/* A program that dies of SIGSEGV still leaves its trace, and dies of it
 * (egpu trace: 128 + 11). */
START_TEST(cli_crash_writes_the_trace)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX";
	const char *run[] = { "trace", "-o", dir, FAKE_DRIVER, "crash", NULL };
	char err[8192];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* Under AddressSanitizer the program's SIGSEGV handler is ASan's, and
	 * the crash handler calls a handler the process had first (CUDA's,
	 * a sanitizer's): this run must have none. */
	sanitizer_keeps_segv_default();
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 128 + SIGSEGV);
	ck_assert_msg(strstr(err, "got signal 11") &&
		      strstr(err, "3 launches, 3 kernels (3 matched"),
		      "stderr: %s", err);
	take_outputs(dir, "", err);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Another process of the command writes its own files beside. */
START_TEST(cli_child_process_files)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX", pattern[64];
	const char *run[] = { "trace", "-o", dir, FAKE_DRIVER, "child", NULL };
	char err[8192];
	glob_t g;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 5);
	ck_assert_msg(!strstr(err, "no trace written"), "stderr: %s", err);
	snprintf(pattern, sizeof(pattern), "%s/*.[0-9]*.*", dir);
	ck_assert_int_eq(glob(pattern, 0, NULL, &g), 0);
	ck_assert_uint_eq(g.gl_pathc, 4);
	for (size_t i = 0; i < g.gl_pathc; i++)
		unlink(g.gl_pathv[i]);
	globfree(&g);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* --max-size and --rotate: what they take, what they go with. */
START_TEST(cli_max_size_errors)
{
	const char *const bad[][8] = {
		{ "trace", "--max-size", "1K", "true", NULL },
		{ "trace", "--max-size", "12X", "true", NULL },
		{ "trace", "--max-size", "-5M", "true", NULL },
		{ "trace", "--max-size", "1M", "--rotate", "1", "true", NULL },
		{ "trace", "--rotate", "3", "true", NULL },
		{ "trace", "--max-size", "1M", "--last", "2", "true", NULL },
		{ "trace", "--max-size", "1M", "--format", "json", "true", NULL },
	};
	static const char *const why[] = { "--max-size takes bytes",
		"--max-size takes bytes", "--max-size takes bytes",
		"--rotate takes the files to keep", "rotates at --max-size",
		"no --max-size with it", "not --format json" };
	char err[4096];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(run_egpu(bad[i], err, sizeof(err)), 2);
		ck_assert_msg(strstr(err, why[i]), "%zu: %s", i, err);
	}
}
END_TEST

/* The size of @dir/@name, -1 when it is not there. */
static long file_size(const char *dir, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) ? -1 : (long)st.st_size;
}

/* --max-size alone: the timeline stops under it, said on stderr; the
 * totals (the summary) still count every launch. */
START_TEST(cli_max_size_stops)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX";
	const char *run[] = { "trace", "-o", dir, "--max-size", "64K",
		FAKE_DRIVER, "many", NULL };
	char err[8192];
	long size;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 5);
	size = file_size(dir, "trace.perfetto-trace");
	ck_assert_msg(size > 60000 && size <= 65536, "%ld bytes: %s", size,
		      err);
	ck_assert_msg(strstr(err, "stopped at --max-size 65536") &&
		      strstr(err, "20012 launches, 20012 kernels (20012 matched"),
		      "stderr: %s", err);
	ck_assert_int_eq(file_size(dir, "trace.1.perfetto-trace"), -1);
	take_outputs(dir, "", err);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* --rotate 3: the newest file and the two before it, each under the
 * size; the older ones are gone. */
START_TEST(cli_rotate_keeps_n_files)
{
	char dir[] = "/tmp/egpu_tracecol_dirXXXXXX";
	const char *run[] = { "trace", "-o", dir, "--max-size", "64K",
		"--rotate", "3", FAKE_DRIVER, "many", NULL };
	static const char *const kept[] = { "trace.1.perfetto-trace",
		"trace.2.perfetto-trace" };
	char err[8192], path[256];
	long size;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(run_egpu(run, err, sizeof(err)), 5);
	for (size_t i = 0; i < 2; i++) {
		size = file_size(dir, kept[i]);
		ck_assert_msg(size > 60000 && size <= 65536, "%s: %ld: %s",
			      kept[i], size, err);
		snprintf(path, sizeof(path), "%s/%s", dir, kept[i]);
		unlink(path);
	}
	ck_assert_int_eq(file_size(dir, "trace.3.perfetto-trace"), -1);
	size = file_size(dir, "trace.perfetto-trace");
	ck_assert_msg(size > 0 && size <= 65536, "%ld: %s", size, err);
	take_outputs(dir, "", err);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tracecol_cli");
	TCase *tc = tcase_create("cli");

	tcase_add_test(tc, cli_usage_errors);
	tcase_add_test(tc, cli_output_not_a_folder);
	tcase_add_test(tc, cli_runs_the_command);
	tcase_add_test(tc, cli_writes_the_trace);
	tcase_add_test(tc, cli_json_timeline);
	tcase_add_test(tc, cli_window);
	tcase_add_test(tc, cli_signal_window);
	tcase_add_test(tc, cli_crash_writes_the_trace);
	tcase_add_test(tc, cli_flight_recorder);
	tcase_add_test(tc, cli_flight_recorder_on_signal);
	tcase_add_test(tc, cli_child_process_files);
	tcase_add_test(tc, cli_max_size_errors);
	tcase_add_test(tc, cli_max_size_stops);
	tcase_add_test(tc, cli_rotate_keeps_n_files);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite(), true);
}
