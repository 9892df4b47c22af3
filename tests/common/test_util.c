/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "egpu.h"
#include "verifier/verifier.h"
#include "test_util.h"

void tu_require_gpu(void)
{
	if (!egpu_gpu_available()) {
		printf("skipped: %s\n", egpu_errmsg());
		exit(77);
	}
}

bool tu_have_ptxas(void)
{
	return access(EGPU_PTXAS, X_OK) == 0;
}

/* A new temporary file named from @tmpl (ending in a 4-char suffix). */
static int temp_file(char *path, const char *tmpl)
{
	strcpy(path, tmpl);
	return mkstemps(path, 4);
}

static bool write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

bool tu_ptxas(const char *ptx, size_t len, const char *arch, bool compile_only,
	      char *log, size_t log_len)
{
	char src[64], out[64], opt[32];
	int fd = temp_file(src, "/tmp/egpu_test_XXXXXX.ptx"), logfd, status = -1;
	const char *argv[8] = { "ptxas", opt };
	int argc = 2;
	pid_t pid;

	ck_assert_int_ge(fd, 0);
	ck_assert(write_all(fd, ptx, len));
	close(fd);
	logfd = temp_file(out, "/tmp/egpu_test_XXXXXX.log");
	ck_assert_int_ge(logfd, 0);
	snprintf(opt, sizeof(opt), "-arch=%s", arch);
	if (compile_only)
		argv[argc++] = "-c";
	argv[argc++] = "-o";
	argv[argc++] = "/dev/null";
	argv[argc] = src;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(logfd, 1);
		dup2(logfd, 2);
		execv(EGPU_PTXAS, (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (log && log_len) {
		ssize_t got = pread(logfd, log, log_len - 1, 0);

		log[got > 0 ? got : 0] = '\0';
	}
	close(logfd);
	unlink(out);
	unlink(src);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

char *tu_try_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
			if (len)
				*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

char *tu_read_file(const char *path, size_t *len)
{
	char *buf = tu_try_read_file(path, len);

	ck_assert_msg(buf, "cannot read %s", path);
	return buf;
}

unsigned tu_marked_line(const char *path, const char *marker)
{
	char *text = tu_read_file(path, NULL), *at = strstr(text, marker);
	unsigned line = 1;

	ck_assert_msg(at, "%s: no '%s'", path, marker);
	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	free(text);
	return line;
}

char *tu_kernel_text(const char *ptx, const char *name)
{
	char head[64];
	const char *s, *e;
	char *out;

	snprintf(head, sizeof(head), ".entry %s(", name);
	s = strstr(ptx, head);
	ck_assert_msg(s, "no kernel %s", name);
	e = strstr(s, "\n}");
	ck_assert_ptr_nonnull(e);
	out = strndup(s, (size_t)(e - s));
	ck_assert_ptr_nonnull(out);
	return out;
}

int tu_count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

char *tu_text_before(const char *out, const char *marker, const char *insn)
{
	const char *at = strstr(out, insn), *b = NULL;

	ck_assert_msg(at, "no '%s' in the output", insn);
	for (const char *p = out; (p = strstr(p, marker)) && p < at; p++)
		b = p;
	ck_assert_msg(b, "no '%s' before '%s'", marker, insn);
	return strndup(b, (size_t)(at - b));
}

void tu_assemble_sm90(const char *ptx, const char *what)
{
	char log[4096] = "";

	if (TU_SANITIZED || !tu_have_ptxas())
		return;
	ck_assert_msg(tu_ptxas(ptx, strlen(ptx), "sm_90", true, log, sizeof(log)),
		      "%s: ptxas: %s", what, log);
}

void tu_save(const char *ptx, const char *path)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f, "%s", path);
	fputs(ptx, f);
	ck_assert_int_eq(fclose(f), 0);
}

char *tu_instrument(struct egpu_ctx *ctx, const char *ptx,
		    struct egpu_report *rep)
{
	char *out = NULL;
	size_t len;

	rep->sz = sizeof(*rep);
	ck_assert_msg(!egpu_instrument_ptx(ctx, ptx, strlen(ptx), &out, &len, rep),
		      "%s", egpu_errmsg());
	return out;
}

long tu_peak_rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

int tu_run_suite(Suite *s, bool fork)
{
	SRunner *sr = srunner_create(s);
	int failed;

	if (!fork)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

void tu_verifier_dump(struct strbuf *sb, const struct prog_spec *prog,
		      const struct map_spec *maps, size_t map_cnt, int abi)
{
	for (size_t i = 0; i < prog->insn_cnt; i++) {
		sb_printf(sb, "%4zu: ", i);
		verifier_disasm(sb, prog->insns, prog->insn_cnt, i, maps,
				map_cnt, abi);
		sb_adds(sb, "\n");
		if (bpf_is_lddw(&prog->insns[i]))
			i++;
	}
}
