/* SPDX-License-Identifier: MIT */
/*
 * The names a kernel can be attached by: mangled, demangled signature,
 * qualified name with and without template arguments, and base name.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/instr.h"

/* libstdc++'s demangler (the Itanium C++ ABI's entry point). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static char *dup_range(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* Index of the bracket opening the one that closes at @end - 1. */
static size_t match_back(const char *s, size_t end, char open, char close)
{
	size_t i = end;
	int depth = 0;

	while (i-- > 0) {
		if (s[i] == close)
			depth++;
		else if (s[i] == open && --depth == 0)
			return i;
	}
	return end;
}

/* Start of the name after a leading return type ("void f<int>"). */
static size_t skip_return_type(const char *s, size_t end)
{
	size_t i, start = 0;
	int depth = 0;

	for (i = 0; i < end; i++) {
		if (s[i] == '<' || s[i] == '(')
			depth++;
		else if (s[i] == '>' || s[i] == ')')
			depth--;
		else if (s[i] == ' ' && depth == 0)
			start = i + 1;
	}
	return start;
}

/* Start of the last "::"-separated component outside brackets. */
static size_t last_component(const char *s, size_t end)
{
	size_t i, start = 0;
	int depth = 0;

	for (i = 0; i + 1 < end; i++) {
		if (s[i] == '<' || s[i] == '(')
			depth++;
		else if (s[i] == '>' || s[i] == ')')
			depth--;
		else if (s[i] == ':' && s[i + 1] == ':' && depth == 0)
			start = i + 2;
	}
	return start;
}

static int derive_forms(struct kernel_names *kn)
{
	const char *d = kn->demangled;
	size_t end = strlen(d), start, plain_end;

	if (end && d[end - 1] == ')')
		end = match_back(d, end, '(', ')');
	start = skip_return_type(d, end);
	plain_end = end;
	if (plain_end > start && d[plain_end - 1] == '>')
		plain_end = match_back(d, plain_end, '<', '>');
	kn->qualified = dup_range(d + start, end - start);
	kn->plain = dup_range(d + start, plain_end - start);
	start += last_component(d + start, plain_end - start);
	kn->base = dup_range(d + start, plain_end - start);
	return kn->qualified && kn->plain && kn->base ? 0 : EGPU_ENOMEM;
}

int kernel_names_init(struct kernel_names *kn, const char *name, size_t len)
{
	int status = -1;

	memset(kn, 0, sizeof(*kn));
	kn->mangled = dup_range(name, len);
	if (!kn->mangled)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	if (len > 2 && !memcmp(name, "_Z", 2))
		kn->demangled = __cxa_demangle(kn->mangled, NULL, NULL, &status);
	if (status)
		kn->demangled = dup_range(name, len);
	if (!kn->demangled || derive_forms(kn)) {
		kernel_names_free(kn);
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	}
	return 0;
}

void kernel_names_free(struct kernel_names *kn)
{
	free(kn->mangled);
	free(kn->demangled);
	free(kn->qualified);
	free(kn->plain);
	free(kn->base);
	memset(kn, 0, sizeof(*kn));
}

bool kernel_names_match(const struct kernel_names *kn, const char *pattern)
{
	const char *forms[] = {
		kn->mangled, kn->demangled, kn->qualified, kn->plain, kn->base,
	};
	bool glob = strpbrk(pattern, "*?[") != NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(forms); i++) {
		if (!strcmp(pattern, forms[i]))
			return true;
		if (glob && !fnmatch(pattern, forms[i], 0))
			return true;
	}
	return false;
}

int ptx_kernel_matches(const char *mangled, const char *pattern, bool *match)
{
	struct kernel_names kn;
	int err = kernel_names_init(&kn, mangled, strlen(mangled));

	if (err)
		return err;
	*match = kernel_names_match(&kn, pattern);
	kernel_names_free(&kn);
	return 0;
}
