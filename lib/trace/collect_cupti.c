/* SPDX-License-Identifier: MIT */
/*
 * libcupti opened with dlopen, so that libegpu loads where CUPTI is not
 * installed and tracing then fails with a message instead.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "collect_impl.h"

#define CUPTI_ENV "EGPU_CUPTI_LIB"

static struct cupti_lib lib;
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;

static int resolve(void *h)
{
	const char *missing = NULL;

#define CUPTI_SYM(name)                                                       \
	if (!(lib.name = (__typeof__(lib.name))dlsym(h, #name)) && !missing)  \
		missing = #name;
	CUPTI_FUNCS(CUPTI_SYM)
#undef CUPTI_SYM
	if (missing)
		return err_set(EGPU_ENODEV, "libcupti lacks %s", missing);
	return 0;
}

/* dlopen @name, or add it to @tried and keep dlerror()'s reason. */
static void *try_open(const char *name, struct strbuf *tried,
		      char *why, size_t why_len)
{
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		sb_printf(tried, "%s%s", tried->len ? ", " : "", name);
		snprintf(why, why_len, "%s", dlerror());
	}
	return h;
}

static const char *const lib_names[] = { "libcupti.so",
	"libcupti.so." EGPU_CUDA_MAJOR };

/* The loader's search path, then where CUDA toolkits keep libcupti. */
static void *open_default(struct strbuf *tried, char *why, size_t why_len)
{
	static const char *const dirs[] = { "extras/CUPTI/lib64", "lib64" };
	const char *roots[] = { getenv("CUDA_HOME"), "/usr/local/cuda" };
	char path[4096];
	void *h;

	for (size_t n = 0; n < ARRAY_SIZE(lib_names); n++)
		if ((h = try_open(lib_names[n], tried, why, why_len)))
			return h;
	for (size_t r = 0; r < ARRAY_SIZE(roots); r++) {
		for (size_t d = 0; roots[r] && d < ARRAY_SIZE(dirs); d++) {
			for (size_t n = 0; n < ARRAY_SIZE(lib_names); n++) {
				snprintf(path, sizeof(path), "%s/%s/%s",
					 roots[r], dirs[d], lib_names[n]);
				if ((h = try_open(path, tried, why, why_len)))
					return h;
			}
		}
	}
	return NULL;
}

const struct cupti_lib *cupti_lib(void)
{
	const char *env = getenv(CUPTI_ENV);
	struct strbuf tried;
	char why[512] = "";
	void *h;

	pthread_mutex_lock(&lib_lock);
	if (lib.handle)
		goto out;
	sb_init(&tried);
	if (env && *env)
		h = try_open(env, &tried, why, sizeof(why));
	else
		h = open_default(&tried, why, sizeof(why));
	if (!h)
		err_set(EGPU_ENODEV, "libcupti not found (tried %s; last: %s); "
			"set %s to its path", sb_ok(&tried) ? tried.buf : "?",
			why, CUPTI_ENV);
	else if (resolve(h))
		dlclose(h);
	else
		lib.handle = h;
	sb_free(&tried);
out:
	pthread_mutex_unlock(&lib_lock);
	return lib.handle ? &lib : NULL;
}

int cupti_check(CUptiResult res, int code, const char *what)
{
	const char *s = NULL;

	if (res == CUPTI_SUCCESS)
		return 0;
	if (lib.cuptiGetResultString(res, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	return err_set(code, "%s: %s (%d)", what, s, (int)res);
}
