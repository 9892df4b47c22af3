/* SPDX-License-Identifier: MIT */
/* What many tests need: files, ptxas, the Check runner. */
#ifndef EGPU_TEST_UTIL_H
#define EGPU_TEST_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Check's assertions, the typed ones included, without the mark of each
 * one that passes: in a forked test that mark is a write to the parent, a
 * system call a check (4.3 million in test_ring_dev, most of the span
 * model's time). A failure still names its line; a crash is named by the
 * sanitizers or a core, not by the last assertion passed.
 */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...)                                             \
	((expr) ? (void)0 :                                                  \
		  _ck_assert_failed(__FILE__, __LINE__,                      \
				    "Assertion '" #expr "' failed", ##__VA_ARGS__))

/* Whether this test is built with AddressSanitizer (gcc or clang). */
#if defined(__SANITIZE_ADDRESS__)
#define TU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_SANITIZED 1
#endif
#endif
#ifndef TU_SANITIZED
#define TU_SANITIZED 0
#endif

/*
 * Under the sanitizers a test looks for memory errors, which one round or
 * table row in TU_SHARE finds as well; rare interleavings and every row's
 * verdict are the plain build's job, which runs them all. TU_ROUNDS: the
 * rounds of a stress test of @n; TU_SAMPLED: whether row @i is run.
 */
#define TU_SHARE 4
#define TU_ROUNDS(n) (TU_SANITIZED ? ((n) + TU_SHARE - 1) / TU_SHARE : (n))
#define TU_SAMPLED(i) (!TU_SANITIZED || (i) % TU_SHARE == 0)

/*
 * GPU tests call this first: without a usable GPU it prints why and exits
 * 77, which ctest reports as skipped (never as passed).
 */
void tu_require_gpu(void);

/* A CUDA driver call that must succeed, its error named (where the test
 * includes cuda/cu.h and egpu.h). */
#define CK_CU(e) ck_assert_msg(cu_check((e), #e) == 0, "%s", egpu_errmsg())
/* Whether ptxas (EGPU_PTXAS) can be run here. */
bool tu_have_ptxas(void);
/*
 * Assemble @ptx (@len bytes) with `ptxas -arch=@arch [-c]`; true if ptxas
 * accepts it. @log (may be NULL) receives what ptxas printed.
 */
bool tu_ptxas(const char *ptx, size_t len, const char *arch, bool compile_only,
	      char *log, size_t log_len);
/* A whole file, NUL-terminated, or NULL if it cannot be read. */
char *tu_try_read_file(const char *path, size_t *len);
/* The same, failing the test if the file cannot be read. */
char *tu_read_file(const char *path, size_t *len);
/* The 1-based line of file @path where @marker first occurs; fails the
 * test if it does not. */
unsigned tu_marked_line(const char *path, const char *marker);
/* The text of kernel (.entry) @name in @ptx, malloc'ed; fails the test if none. */
char *tu_kernel_text(const char *ptx, const char *name);
/* How often @what occurs in @s. */
int tu_count(const char *s, const char *what);
/* The text of @out from the last @marker before @insn up to @insn,
 * malloc'ed; fails the test if either is missing. */
char *tu_text_before(const char *out, const char *marker, const char *insn);
/* @ptx (NUL-terminated) accepted by ptxas -arch=sm_90 -c where ptxas
 * is found; else the test fails, naming @what. Not under the sanitizers:
 * ptxas's verdict is the plain build's, and its time is not ours. */
void tu_assemble_sm90(const char *ptx, const char *what);
/* @ptx written to the file @path (for ptxas -v by hand). */
void tu_save(const char *ptx, const char *path);
struct egpu_ctx;
struct egpu_report;
/* @ptx instrumented by @ctx, malloc'ed; the report in *@rep. */
char *tu_instrument(struct egpu_ctx *ctx, const char *ptx,
		    struct egpu_report *rep);
struct strbuf;
struct prog_spec;
struct map_spec;
/* A listing of the whole program, one "IDX: insn" line each. */
void tu_verifier_dump(struct strbuf *sb, const struct prog_spec *prog,
		      const struct map_spec *maps, size_t map_cnt, int abi);
/* The process's peak resident memory so far, in MB. */
long tu_peak_rss_mb(void);
/*
 * Run @s, print its results, free it; 0 if every test passed. @fork: each
 * test in a child of its own. Suites of table rows run without: a row is a
 * pure check, and under AddressSanitizer a fork (and its leak check at
 * exit) costs ten times the row.
 */
int tu_run_suite(Suite *s, bool fork);

#endif
