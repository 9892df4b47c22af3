// SPDX-License-Identifier: MIT
/*
 * Plays the CUDA driver for `egpu trace` without a GPU: loads the library
 * CUDA_INJECTION64_PATH names and calls its InitializeInjection(), as
 * cuInit does, then launches through the stand-in libcupti and exits
 * with status 5, so that the exit handlers write the trace. With
 * "child", a forked child does all that (another process of the command);
 * with "bursts", it launches 3, 4 and 5 times, 0.8 s apart (a window of
 * `egpu trace --delay --duration` takes the middle burst only); with
 * "signals", it sends itself SIGUSR1 around the middle burst too; with
 * "crash", it dies of SIGSEGV after its launches (no core file); with
 * "many", it launches MANY times more, its records flushed every 2048
 * (as CUPTI's thread hands buffers over), for a timeline of about a MB;
 * with "paced", PACED bursts of PACED_EACH launches 1 s apart, flushed
 * after each, and exits with 6 instead of 5 if the streamed timeline
 * ($EGPU_TRACE_DIR/trace.perfetto-trace) was still empty before exit.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MANY 20000
#define FLUSH_EVERY 2048
#define PACED 4
#define PACED_EACH 1500

static void (*fake_launch)(const char *kernel, bool split);
static int (*flush_all)(uint32_t flag);

static __attribute__((noinline)) void train_step(void)
{
	fake_launch("_Z6updatePfi", true);
	__asm__ volatile("");
}

/* Bursts a second apart; whether the timeline had bytes before exit. */
static bool paced(void)
{
	const char *dir = getenv("EGPU_TRACE_DIR");
	char path[4096];
	struct stat st;

	for (int b = 0; b < PACED; b++) {
		if (b)
			sleep(1);
		for (int i = 0; i < PACED_EACH; i++)
			train_step();
		flush_all(0);
	}
	snprintf(path, sizeof(path), "%s/trace.perfetto-trace",
		 dir ? dir : "egpu-trace");
	return !stat(path, &st) && st.st_size > 0;
}

/* @mode: NULL, "bursts", "signals", "crash", "many" or "paced" */
static int play(const char *mode)
{
	const char *inject = getenv("CUDA_INJECTION64_PATH");
	void *h, *cupti;
	int (*init)(void);

	setenv("EGPU_CUPTI_LIB", FAKE_CUPTI, 1);
	h = inject ? dlopen(inject, RTLD_NOW) : NULL;
	init = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
	cupti = dlopen(FAKE_CUPTI, RTLD_NOW);
	fake_launch = cupti ? (void (*)(const char *, bool))dlsym(cupti,
							     "fake_launch")
			    : NULL;
	flush_all = cupti ? (int (*)(uint32_t))dlsym(cupti,
						     "cuptiActivityFlushAll")
			  : NULL;
	if (!init || !fake_launch || !flush_all || init() != 1) {
		fprintf(stderr, "fake_driver: %s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < 3; i++)
		train_step();
	for (int i = 0; mode && !strcmp(mode, "many") && i < MANY; i++) {
		train_step();
		if (i % FLUSH_EVERY == FLUSH_EVERY - 1)
			flush_all(0);
	}
	if (mode && !strcmp(mode, "paced") && !paced())
		return 6;
	if (mode && !strcmp(mode, "crash")) {
		setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
		raise(SIGSEGV);
	}
	for (int b = 4; mode && b <= 5; b++) {
		if (!strcmp(mode, "signals"))
			raise(SIGUSR1);
		usleep(800 * 1000);
		for (int i = 0; i < b; i++)
			train_step();
	}
	return 5;
}

int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc < 2 || strcmp(argv[1], "child"))
		return play(argc > 1 && (!strcmp(argv[1], "bursts") ||
					 !strcmp(argv[1], "signals") ||
					 !strcmp(argv[1], "crash") ||
					 !strcmp(argv[1], "many") ||
					 !strcmp(argv[1], "paced")) ?
			    argv[1] : NULL);
	pid = fork();
	if (!pid)
		exit(play(NULL));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
