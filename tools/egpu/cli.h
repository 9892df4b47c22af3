/* SPDX-License-Identifier: MIT */
/* The egpu command-line tool: one file per subcommand. */
#ifndef EGPU_CLI_H
#define EGPU_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egpu.h"

int cmd_run(int argc, char **argv);
int cmd_jit(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_instrument(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_memcheck(int argc, char **argv);

/* A program chosen from an object, with what owns it. */
struct cli_prog {
	egpu_ctx *ctx;
	egpu_obj *obj;
	egpu_prog *prog;
};

/*
 * Load from @path, or from hex on stdin when @path is NULL (@elf: the hex
 * is an ELF image, else raw instructions), and pick program @name (NULL:
 * the first), in a context made with @co. Prints the error and returns
 * non-zero on failure.
 */
int cli_load(struct cli_prog *cp, const char *path, bool elf,
	     const char *name, enum egpu_helper_abi abi,
	     const struct egpu_ctx_opts *co);
void cli_unload(struct cli_prog *cp);
/*
 * Without a program named, @cp's object must hold one: picking the first
 * of several silently is a trap. 0, or 2 with the names on stderr
 * ("@cmd: @path holds several programs; choose one with --prog NAME@or_else").
 */
int cli_one_prog(const struct cli_prog *cp, const char *cmd,
		 const char *path, const char *or_else);

/* Print "egpu: WHAT: <egpu_errmsg()>" to stderr and return 1. */
int cli_fail(const char *what);
/* Print a usage error to stderr and return 2. */
int cli_usage(const char *fmt, ...);
/* The value of option argv[*i] (argv[*i + 1], *i advanced), or NULL when
 * it is missing or empty (the caller prints the usage). */
const char *cli_value(int argc, char **argv, int *i);

/*
 * Decode hex digits, whitespace allowed anywhere between bytes, into a
 * malloc'ed buffer. Returns 0, or -1 with a message on stderr.
 */
int hex_decode(const char *text, uint8_t **out, size_t *len);
/* Read all of stdin into a NUL-terminated malloc'ed string. */
char *read_stdin(void);
/* Whole file as malloc'ed bytes, or NULL with a message on stderr. */
uint8_t *read_path(const char *path, size_t *len);

/*
 * Path of library @name for `egpu @tool`: $@env_var, else next to this
 * program (build tree), else in the library folder beside its bin folder.
 * Returns 0, or -1 with a message on stderr.
 */
int child_find_lib(const char *tool, const char *name, const char *env_var,
		   char *out, size_t len);
/* child_find_lib of the attach agent, libegpu_attach.so ($EGPU_ATTACH_LIB),
 * which egpu attach and egpu memcheck preload. */
int child_find_agent(const char *tool, char *out, size_t len);
/* In the child: put @lib first in LD_PRELOAD, before what was there. */
int child_preload(const char *lib);
/*
 * Run @cmd in a child that first calls @setup(@arg) (to set its
 * environment; non-zero: fail), passing it ^C; returns its exit status
 * (128 + signal when killed, 127 when it could not run).
 */
int child_run(char **cmd, const char *tool, int (*setup)(void *), void *arg);
/*
 * Put libegpu's stand-in ptxas first on PATH and the real one in
 * EGPU_PTXAS_REAL, where both exist (XLA assembles with a ptxas of its
 * own). 0, also when there is nothing to stand in for; -1 out of memory.
 */
int ptxas_standin_env(void);

#endif
