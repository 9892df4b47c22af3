/* SPDX-License-Identifier: MIT */
/* Helpers shared by the PTX tests: files, the corpus, independent checks. */
#ifndef PTX_TEST_UTIL_H
#define PTX_TEST_UTIL_H

#include <stddef.h>

#include "ptx/ptx.h"
#include "test_util.h"

/* A probe module written by hand: reads ctx->kernel_id, and the first
 * parameter byte when there is one; defines "probe_ptx". */
extern const char probe_ptx[];

/* sm_80 kernel with a guarded ret, an exit, and a labelled ret. */
extern const char exits_ptx[];
/* sm_90 kernels whose control falls off the closing brace, or not. */
extern const char fall_off_ptx[];

/* An application defining a weak w() and app_helper(), and a probe "p"
 * module with its own weak w() that calls both. */
extern const char weak_app_ptx[];
extern const char weak_probe_ptx[];

/* Sorted paths of the corpus files (*.ptx in PTX_CORPUS_DIR). */
size_t corpus_list(char ***paths);
void free_list(char **paths, size_t n);

/*
 * @out without the blocks ptx_instrument() inserts ("// begin egpu ..."
 * to "// end egpu ..."); counts the probe blocks met. malloc'ed.
 */
char *strip_inserted(const char *out, size_t *len, unsigned *entry_blocks,
		     unsigned *exit_blocks);

/*
 * ret/exit instructions in the body of kernel @name, counted line by line
 * in nvcc's layout (an oracle independent of the parser).
 */
unsigned count_exits(const char *ptx, const char *name);

/* The first name of the .target directive ("sm_90a"), in @buf. */
const char *ptx_target(const char *ptx, char *buf, size_t n);

/* Run ptxas on @ptx for @arch; saves it as EGPU_TEST_BUILD/@tag.ptx. */
int run_ptxas(const char *ptx, size_t len, const char *arch, const char *tag);

/* What ptxas -v says of one function. */
struct ptxas_usage {
	unsigned regs;  /* "Used N registers" */
	unsigned stack; /* "N bytes stack frame" */
};

/*
 * Assemble @ptx for @arch with ptxas -v (saved as EGPU_TEST_BUILD/@tag.ptx)
 * and read the usage of function @func. 0, or -1 if ptxas fails or does
 * not report it.
 */
int ptxas_usage(const char *ptx, size_t len, const char *arch, const char *tag,
		const char *func, struct ptxas_usage *u);

struct ptx_module;
/*
 * The model covers the text: tokens in order with only white space and
 * comments between them, items partitioning the tokens, statements
 * partitioning each body. Returns NULL or what is wrong.
 */
const char *check_coverage(const struct ptx_module *m);

/* Instrument and return the output (NULL on error: see egpu_errmsg()). */
char *instrument(const char *ptx, size_t len, const struct ptx_attach *reqs,
		 size_t nreq, const struct ptx_text *mods, size_t nmod,
		 struct ptx_report *rep, size_t *out_len, int *err);

#endif
