/* SPDX-License-Identifier: MIT */
/* Internal essentials shared by every stage: errors, logging, growable text. */
#ifndef EGPU_CORE_H
#define EGPU_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egpu.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Options structs grow at their end: a field past the caller's opts->sz is
 * absent and reads as @def (libbpf's OPTS_GET).
 */
#define offsetofend(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))
#define OPTS_HAS(o, f) ((o) && (o)->sz >= offsetofend(__typeof__(*(o)), f))
#define OPTS_GET(o, f, def) (OPTS_HAS(o, f) ? (o)->f : (def))
#define OPTS_SET(o, f, v)                                                     \
	do {                                                                  \
		if (OPTS_HAS(o, f))                                           \
			(o)->f = (v);                                         \
	} while (0)
/*
 * Validate options struct @o of type struct @T for function @fn: bytes
 * past the end of its last field (T__last_field in egpu.h) must be zero,
 * trailing padding included, so a field a newer caller put in our padding
 * is refused rather than ignored (libbpf's OPTS_VALID).
 */
#define OPTS_VALID(o, T, fn)                                                  \
	opts_valid((o), (o) ? (o)->sz : 0,                                    \
		   offsetofend(struct T, T##__last_field), fn)

/*
 * Check an options struct: NULL is fine; sz must cover at least the first
 * field, and bytes from @known (the end of the last field this build
 * knows) to @sz must be zero.
 */
int opts_valid(const void *opts, size_t sz, size_t known, const char *fn);

#if defined(__GNUC__)
#define EGPU_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define EGPU_PRINTF(f, a)
#endif

/*
 * Record a message for egpu_errmsg() on this thread and return @code, so a
 * failing path reads `return err_set(EGPU_EFORMAT, "...", ...);`.
 */
int err_set(int code, const char *fmt, ...) EGPU_PRINTF(2, 3);
int err_vset(int code, const char *fmt, va_list ap);
/* Put @prefix and ": " in front of the current message (adds context). */
void err_prefix(const char *fmt, ...) EGPU_PRINTF(1, 2);
/* No error: what a thread that reports a later failure starts from. */
void err_clear(void);

/* A growable NUL-terminated string. Out of memory is sticky: check sb_ok(). */
struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
	int oom;
};

void sb_init(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_addn(struct strbuf *sb, const char *s, size_t n);
void sb_adds(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) EGPU_PRINTF(2, 3);
int sb_ok(const struct strbuf *sb);
/* Hand the buffer to the caller (NULL if out of memory) and reset @sb. */
char *sb_detach(struct strbuf *sb, size_t *len);

/* Logging through a context's callback (or stderr when there is none). */
struct egpu_logger {
	egpu_log_fn fn;
	void *user;
	enum egpu_log_level level;
};

void log_msg(const struct egpu_logger *lg, enum egpu_log_level level,
	     const char *fmt, ...) EGPU_PRINTF(3, 4);

/*
 * Room for element @n of the array *@v (*@cap elements of @size bytes):
 * when it is full the capacity doubles (starting at @first). false: out of
 * memory, *@v and *@cap unchanged. ARRAY_GROW() passes the element size.
 */
bool array_grow(void **v, size_t *cap, size_t n, size_t first, size_t size);
#define ARRAY_GROW(v, cap, n, first)                                         \
	array_grow((void **)&(v), &(cap), (n), (first), sizeof(*(v)))

/*
 * The state at *@slot (a pointer read and published atomically), made at
 * the first call: @size zeroed bytes prepared by @init. When threads race,
 * one copy is published and the others are undone by @fini and freed.
 * NULL: out of memory, with a message naming @what.
 */
void *lazy_make(void **slot, size_t size, void (*init)(void *),
		void (*fini)(void *), const char *what);

/* Monotonic clock in nanoseconds, for the timings the API reports. */
uint64_t now_ns(void);

/*
 * Sleep-poll until @ready(@arg) (true) or @timeout_ms passed (false; < 0:
 * no limit), looking at first every 10 us, then less often, at least every
 * millisecond (poll.c).
 */
bool poll_wait(bool (*ready)(void *), void *arg, int timeout_ms);

#endif
