/* SPDX-License-Identifier: MIT */
/*
 * The signature string of egpu_helper_register(): "RET (ARG, ...)" with
 * RET "u64" or "void", ARGs "u64", "u8[N]" or "const u8[N]" (at most five;
 * "()" or "(void)" for none). Messages quote the signature and say where
 * it went wrong.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "maps/ring_layout.h"

#define SIG_STR_(x) #x
#define SIG_STR(x) SIG_STR_(x)

struct sig_parser {
	const char *sig;
	const char *p;
};

static void skip_space(struct sig_parser *s)
{
	while (isspace((unsigned char)*s->p))
		s->p++;
}

/* Consume @word (a whole word when it ends in a letter or digit). */
static bool take(struct sig_parser *s, const char *word)
{
	size_t n = strlen(word);

	skip_space(s);
	if (strncmp(s->p, word, n) ||
	    (isalnum((unsigned char)word[n - 1]) &&
	     (isalnum((unsigned char)s->p[n]) || s->p[n] == '_')))
		return false;
	s->p += n;
	return true;
}

static int sig_err(const struct sig_parser *s, const char *what)
{
	return err_set(EGPU_EINVAL, "signature \"%s\": %s at offset %d", s->sig,
		       what, (int)(s->p - s->sig));
}

/* "[N]" after "u8", 1 <= N <= EGPU_HELPER_BUF_MAX. */
static int parse_size(struct sig_parser *s, uint32_t *size)
{
	unsigned long n;
	char *end;

	if (!take(s, "["))
		return sig_err(s, "expected '[' after u8 (buffers are u8[N])");
	skip_space(s);
	if (!isdigit((unsigned char)*s->p))
		return sig_err(s, "expected a buffer size");
	n = strtoul(s->p, &end, 10);
	if (n < 1 || n > EGPU_HELPER_BUF_MAX)
		return sig_err(s, "buffer size must be between 1 and "
			       SIG_STR(EGPU_HELPER_BUF_MAX));
	s->p = end;
	if (!take(s, "]"))
		return sig_err(s, "expected ']'");
	*size = (uint32_t)n;
	return 0;
}

static int parse_arg(struct sig_parser *s, struct user_helper *u, unsigned i)
{
	bool is_const = take(s, "const");

	if (!is_const && take(s, "u64")) {
		u->info.args[i] = ARG_SCALAR;
		return 0;
	}
	if (!take(s, "u8"))
		return sig_err(s, is_const ? "expected u8[N] after const" :
			       "expected u64, u8[N] or const u8[N]");
	u->info.args[i] = is_const ? ARG_USER_CONST_BUF : ARG_USER_BUF;
	return parse_size(s, &u->size[i]);
}

static int parse_args(struct sig_parser *s, struct user_helper *u)
{
	const char *save = s->p;
	int err;

	if (take(s, "void") && take(s, ")"))
		return 0;
	s->p = save;
	if (take(s, ")"))
		return 0;
	for (unsigned i = 0;; i++) {
		if (i == CALL_MAX_ARGS)
			return sig_err(s, "more than 5 arguments");
		err = parse_arg(s, u, i);
		if (err)
			return err;
		u->info.nargs = (uint8_t)(i + 1);
		if (take(s, ")"))
			return 0;
		if (!take(s, ","))
			return sig_err(s, "expected ',' or ')'");
	}
}

int helper_sig_parse(const char *sig, struct user_helper *u)
{
	struct sig_parser s = { sig, sig };
	int err;

	u->info.attach = ATTACH_ALL;
	u->info.lower = LOWER_USER;
	if (take(&s, "void"))
		u->info.ret = RET_VOID;
	else if (!take(&s, "u64"))
		return sig_err(&s, "expected the return type, u64 or void");
	if (!take(&s, "("))
		return sig_err(&s, "expected '('");
	err = parse_args(&s, u);
	if (err)
		return err;
	skip_space(&s);
	return *s.p ? sig_err(&s, "unexpected text after ')'") : 0;
}

int egpu_helper_sig_parse(const char *signature, struct egpu_helper_sig *out)
{
	struct user_helper u = { 0 };
	struct egpu_helper_sig sig = { .sz = sizeof(sig) };
	int err;

	if (!signature || !out || out->sz < sizeof(size_t))
		return err_set(EGPU_EINVAL, "egpu_helper_sig_parse: %s",
			       signature ? "NULL out or its sz not set" :
					   "NULL signature");
	err = helper_sig_parse(signature, &u);
	if (err)
		return err;
	sig.nargs = u.info.nargs;
	sig.ret_void = u.info.ret == RET_VOID;
	for (unsigned i = 0; i < u.info.nargs; i++) {
		bool scalar = u.info.args[i] == ARG_SCALAR;

		sig.kind[i] = scalar ? EGPU_HELPER_ARG_U64 :
			      u.info.args[i] == ARG_USER_BUF ?
			      EGPU_HELPER_ARG_BUF : EGPU_HELPER_ARG_CONST_BUF;
		sig.size[i] = scalar ? 0 : u.size[i];
	}
	/* An older caller's struct gets the fields it knows. */
	sig.sz = out->sz < sizeof(sig) ? out->sz : sizeof(sig);
	memcpy(out, &sig, sig.sz);
	return 0;
}
