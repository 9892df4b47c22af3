/* SPDX-License-Identifier: MIT */
/* Thread-local error text behind egpu_errmsg(). */
#include <stdio.h>
#include <string.h>

#include "core.h"

#define ERRMSG_MAX 1024

static _Thread_local char errmsg[ERRMSG_MAX];
static _Thread_local int errcode;

int err_vset(int code, const char *fmt, va_list ap)
{
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	errcode = code;
	return code;
}

int err_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(code, fmt, ap);
	va_end(ap);
	return code;
}

void err_prefix(const char *fmt, ...)
{
	char old[ERRMSG_MAX];
	va_list ap;
	int n;

	memcpy(old, errmsg, sizeof(old));
	va_start(ap, fmt);
	n = vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(errmsg))
		snprintf(errmsg + n, sizeof(errmsg) - n, ": %.*s",
			 (int)(sizeof(errmsg) - n - 3), old);
}

int egpu_errcode(void)
{
	return errcode;
}

const char *egpu_errmsg(void)
{
	return errmsg;
}

const char *egpu_strerror(int err)
{
	static const char *const names[] = {
		[0] = "success",
		[-EGPU_EINVAL] = "invalid argument",
		[-EGPU_ENOMEM] = "out of memory",
		[-EGPU_EIO] = "input/output error",
		[-EGPU_EFORMAT] = "malformed input",
		[-EGPU_EVERIFY] = "program refused by the verifier",
		[-EGPU_EJIT] = "translation failed",
		[-EGPU_ENODEV] = "no CUDA driver or GPU",
		[-EGPU_ENOENT] = "not found",
		[-EGPU_E2BIG] = "too big or full",
		[-EGPU_ECUDA] = "CUDA driver error",
		[-EGPU_ENOTSUP] = "not supported",
		[-EGPU_EEXIST] = "already exists",
		[-EGPU_EBUSY] = "busy",
	};

	if (err > 0 || (size_t)-err >= ARRAY_SIZE(names))
		return "unknown error";
	return names[-err];
}

int opts_valid(const void *opts, size_t sz, size_t known, const char *fn)
{
	const unsigned char *p = opts;

	if (!opts)
		return 0;
	if (sz < sizeof(size_t))
		return err_set(EGPU_EINVAL, "%s: opts->sz is %zu (use EGPU_OPTS)",
			       fn, sz);
	for (size_t i = known; i < sz; i++)
		if (p[i])
			return err_set(EGPU_ENOTSUP,
				       "%s: opts has non-zero fields this library (%zu bytes) does not know",
				       fn, known);
	return 0;
}
