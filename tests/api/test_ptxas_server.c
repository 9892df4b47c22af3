// SPDX-License-Identifier: MIT
/*
 * The stand-in ptxas and its server, without a GPU: a compile for the
 * context's GPU reaches the real ptxas instrumented, anything else
 * unchanged; the stand-in never fails a compile the real ptxas would pass.
 * The "real ptxas" is a script that keeps a copy of what it was given, or
 * the toolkit's ptxas itself.
 */
#include <check.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <unistd.h>

#include "egpu.h"
#include "test_util.h"

#define MEM_OBJ EGPU_TEST_BUILD "/memprobe.bpf.o"
#define MEM_PTX EGPU_TEST_BUILD "/memkernels.ptx"

static egpu_ctx *ctx;
static egpu_obj *obj;
static egpu_ptxas_server *srv;
static char dir[] = "/tmp/egpu-ptxas-test-XXXXXX";
static char fake[256], copy[256];

static void setup(void)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);
	FILE *f;

	ctx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, MEM_OBJ, NULL);
	ck_assert_ptr_nonnull(obj);
	ck_assert_int_eq(egpu_attach_all(obj), 1);
	srv = egpu_ptxas_server_start(ctx, NULL);
	ck_assert_msg(srv != NULL, "%s", egpu_errmsg());
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fake, sizeof(fake), "%s/real-ptxas", dir);
	snprintf(copy, sizeof(copy), "%s/given.ptx", dir);
	f = fopen(fake, "w");
	ck_assert_ptr_nonnull(f);
	/* the input is the first argument in XLA's command lines */
	fprintf(f, "#!/bin/sh\ncp \"$1\" '%s'\n", copy);
	fclose(f);
	ck_assert_int_eq(chmod(fake, 0755), 0);
}

static void teardown(void)
{
	egpu_ptxas_server_stop(srv);
	egpu_obj_close(obj);
	egpu_ctx_free(ctx);
	unlink(fake);
	unlink(copy);
	rmdir(dir);
	strcpy(dir, "/tmp/egpu-ptxas-test-XXXXXX");
}

/* Run the stand-in as XLA does, as a child of this process (the server
 * serves no other's); returns its exit status. */
static int run_standin(const char *real, const char *arch, bool with_socket)
{
	char sock[300], real_env[300], arch_opt[32], out[300];
	char *envp[] = { sock, real_env, NULL };
	char *argv[] = { (char *)EGPU_STANDIN, (char *)MEM_PTX, (char *)"-o", out,
			 arch_opt, (char *)"--warn-on-spills", NULL };
	pid_t pid;
	int status;

	snprintf(sock, sizeof(sock), "EGPU_PTXAS_SOCKET=%s",
		 with_socket ? egpu_ptxas_server_socket(srv) : "");
	snprintf(real_env, sizeof(real_env), "EGPU_PTXAS_REAL=%s", real);
	snprintf(arch_opt, sizeof(arch_opt), "-arch=%s", arch);
	snprintf(out, sizeof(out), "%s/out.cubin", dir);
	ck_assert_int_eq(posix_spawn(&pid, EGPU_STANDIN, NULL, NULL, argv, envp), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static struct egpu_ptxas_stats stats(void)
{
	struct egpu_ptxas_stats st = { .sz = sizeof(st) };

	ck_assert_int_eq(egpu_ptxas_server_stats(srv, &st), 0);
	return st;
}

START_TEST(compile_for_the_context_gets_probes)
{
	char *given, *orig = tu_read_file(MEM_PTX, NULL);
	struct egpu_ptxas_stats st;

	ck_assert_int_eq(run_standin(fake, "sm_90a", true), 0);
	given = tu_read_file(copy, NULL);
	ck_assert_str_ne(given, orig);
	ck_assert_ptr_nonnull(strstr(given, "egpu_dev_")); /* the runtime, linked in */
	st = stats();
	ck_assert_uint_eq(st.requests, 1);
	ck_assert_uint_eq(st.instrumented, 1);
	ck_assert(st.instrument_ms > 0);
	free(given);
	free(orig);
}
END_TEST

START_TEST(other_gpus_and_no_server_compile_unchanged)
{
	char *given, *orig = tu_read_file(MEM_PTX, NULL);

	ck_assert_int_eq(run_standin(fake, "sm_80", true), 0);
	given = tu_read_file(copy, NULL);
	ck_assert_str_eq(given, orig);
	free(given);
	ck_assert_uint_eq(stats().declined, 1);
	ck_assert_int_eq(run_standin(fake, "sm_90", false), 0);
	given = tu_read_file(copy, NULL);
	ck_assert_str_eq(given, orig);
	ck_assert_uint_eq(stats().requests, 1);
	free(given);
	free(orig);
}
END_TEST

/* The toolkit's ptxas assembles what the server gave back. */
START_TEST(real_ptxas_assembles_the_result)
{
	char cubin[300];

	if (!tu_have_ptxas())
		return;
	ck_assert_int_eq(run_standin(EGPU_PTXAS, "sm_90", true), 0);
	snprintf(cubin, sizeof(cubin), "%s/out.cubin", dir);
	ck_assert_int_eq(access(cubin, R_OK), 0);
	unlink(cubin);
	ck_assert_uint_eq(stats().instrumented, 1);
}
END_TEST

/* A compile this process did not start (here: started through a shell)
 * is not served: its PTX is another process's. */
START_TEST(another_process_compile_declined)
{
	char cmd[1024], *given, *orig = tu_read_file(MEM_PTX, NULL);

	snprintf(cmd, sizeof(cmd),
		 "EGPU_PTXAS_SOCKET='%s' EGPU_PTXAS_REAL='%s' '%s' '%s' -arch=sm_90; true",
		 egpu_ptxas_server_socket(srv), fake, EGPU_STANDIN, MEM_PTX);
	ck_assert_int_eq(system(cmd), 0);
	given = tu_read_file(copy, NULL);
	ck_assert_str_eq(given, orig);
	ck_assert_uint_eq(stats().declined, 1);
	free(given);
	free(orig);
}
END_TEST

START_TEST(malformed_request_answered)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	char reply[64] = "";

	strcpy(sa.sun_path, egpu_ptxas_server_socket(srv));
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(write(fd, "HELLO\n", 6), 6);
	ck_assert_int_gt(read(fd, reply, sizeof(reply) - 1), 0);
	ck_assert_str_eq(reply, "ERR malformed request\n");
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ptxas_server");
	TCase *tc = tcase_create("standin");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, compile_for_the_context_gets_probes);
	tcase_add_test(tc, other_gpus_and_no_server_compile_unchanged);
	tcase_add_test(tc, real_ptxas_assembles_the_result);
	tcase_add_test(tc, another_process_compile_declined);
	tcase_add_test(tc, malformed_request_answered);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
