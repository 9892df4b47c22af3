/* SPDX-License-Identifier: MIT */
/*
 * User helpers: registration (egpu_helper_register) and calls through
 * libffi. Each helper gets an ffi_cif of its signature when registered;
 * the GPU's calls are made with it (call_ring.c), and a helper registered
 * with a generic body gets a libffi closure of that signature, which the
 * CPU back end calls directly like any C function.
 */
#include <ffi.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "maps/ring_layout.h"

/* How to call one user helper (struct user_helper.call). */
struct user_call {
	ffi_cif cif;
	ffi_type *types[CALL_MAX_ARGS];
	ffi_closure *closure;   /* generic helpers: the function itself */
	egpu_helper_generic_fn generic;
	void *user;
	uint32_t id;
	uint8_t nargs;
	bool ret_void;
};

static int prep_cif(struct user_call *c, const struct user_helper *u)
{
	for (unsigned i = 0; i < u->info.nargs; i++)
		c->types[i] = u->info.args[i] == ARG_SCALAR ? &ffi_type_uint64 :
			      &ffi_type_pointer;
	if (ffi_prep_cif(&c->cif, FFI_DEFAULT_ABI, u->info.nargs,
			 u->info.ret == RET_VOID ? &ffi_type_void :
						   &ffi_type_uint64,
			 c->types) != FFI_OK)
		return err_set(EGPU_EINVAL, "libffi cannot describe this "
			       "signature");
	return 0;
}

/* The closure's body: the arguments as 64-bit words, to the generic fn. */
static void generic_body(ffi_cif *cif, void *ret, void **args, void *arg)
{
	const struct user_call *c = arg;
	uint64_t words[CALL_MAX_ARGS] = { 0 };
	uint64_t r;

	for (unsigned i = 0; i < c->nargs; i++)
		words[i] = cif->arg_types[i] == &ffi_type_pointer ?
			   (uintptr_t)*(void **)args[i] : *(uint64_t *)args[i];
	r = c->generic(c->user, c->id, words, c->nargs);
	if (!c->ret_void)
		*(ffi_arg *)ret = (ffi_arg)r;
}

static int make_closure(struct user_call *c, struct user_helper *u)
{
	void *code = NULL;

	c->closure = ffi_closure_alloc(sizeof(ffi_closure), &code);
	if (!c->closure)
		return err_set(EGPU_ENOMEM, "libffi: no closure memory");
	if (ffi_prep_closure_loc(c->closure, &c->cif, generic_body, c, code) !=
	    FFI_OK)
		return err_set(EGPU_EINVAL, "libffi cannot make a closure of "
			       "this signature");
	u->fn = (void (*)(void))code;
	return 0;
}

static void user_helper_free(struct user_helper *u)
{
	struct user_call *c = u ? u->call : NULL;

	if (c && c->closure)
		ffi_closure_free(c->closure);
	free(c);
	if (u)
		free((char *)u->info.name);
	free(u);
}

void helpers_ctx_free(struct egpu_ctx *ctx)
{
	const struct user_helper *u = ctx->helpers, *next;

	for (; u; u = next) {
		next = u->next;
		user_helper_free((struct user_helper *)u);
	}
	ctx->helpers = NULL;
}

uint64_t helper_call(const struct user_helper *u, const uint64_t *args)
{
	const struct user_call *c = u->call;
	void *values[CALL_MAX_ARGS], *ptrs[CALL_MAX_ARGS];
	ffi_arg ret = 0;

	for (unsigned i = 0; i < u->info.nargs; i++) {
		ptrs[i] = (void *)(uintptr_t)args[i];
		values[i] = u->info.args[i] == ARG_SCALAR ? (void *)&args[i] :
			    (void *)&ptrs[i];
	}
	ffi_call((ffi_cif *)&c->cif, FFI_FN(u->fn),
		 u->info.ret == RET_VOID ? NULL : &ret,
		 values);
	return (uint64_t)ret;
}

static int check_name(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > 64)
		return err_set(EGPU_EINVAL, "helper name must be 1 to 64 "
			       "characters");
	for (size_t i = 0; i < n; i++)
		if (!(name[i] == '_' || (name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (i && name[i] >= '0' && name[i] <= '9')))
			return err_set(EGPU_EINVAL, "helper name '%s' is not "
				       "an identifier", name);
	return 0;
}

static int check_registration(egpu_ctx *ctx, uint32_t id, const char *name,
			      void *fn, const char *sig,
			      const struct egpu_helper_opts *opts)
{
	if (!ctx || !sig)
		return err_set(EGPU_EINVAL, "NULL %s",
			       ctx ? "signature" : "context");
	if (OPTS_VALID(opts, egpu_helper_opts, "egpu_helper_register"))
		return EGPU_EINVAL;
	if (!helper_id_is_user(id))
		return err_set(EGPU_EINVAL, "number %u (0x%x) is outside the "
			       "user helper range 0x%x-0x%x", id, id,
			       EGPU_HELPER_USER_MIN, EGPU_HELPER_USER_MAX);
	if (user_helper_find(ctx->helpers, (int32_t)id))
		return err_set(EGPU_EINVAL, "number 0x%x is already registered "
			       "(as '%s')", id,
			       user_helper_find(ctx->helpers, (int32_t)id)->info.name);
	if (!fn == !OPTS_GET(opts, generic, NULL))
		return err_set(EGPU_EINVAL, "give either a function or "
			       "opts->generic, not %s", fn ? "both" : "neither");
	return check_name(name);
}

int egpu_helper_register(egpu_ctx *ctx, uint32_t id, const char *name,
			 void *fn, const char *signature,
			 const struct egpu_helper_opts *opts)
{
	struct user_helper *u = NULL;
	struct user_call *c = NULL;
	int err = check_registration(ctx, id, name, fn, signature, opts);

	if (!err && (!(u = calloc(1, sizeof(*u))) ||
		     !(c = calloc(1, sizeof(*c))) ||
		     !(u->info.name = strdup(name))))
		err = err_set(EGPU_ENOMEM, "out of memory");
	if (!err) {
		u->call = c;
		u->info.id = (int32_t)id;
		u->fn = (void (*)(void))fn;
		err = helper_sig_parse(signature, u);
	}
	if (!err) {
		*c = (struct user_call){ .generic = OPTS_GET(opts, generic, NULL),
					 .user = OPTS_GET(opts, user, NULL),
					 .id = id, .nargs = u->info.nargs,
					 .ret_void = u->info.ret == RET_VOID };
		err = prep_cif(c, u);
	}
	if (!err && !fn)
		err = make_closure(c, u);
	if (err) {
		if (u && !u->call)
			free(c);
		user_helper_free(u);
		err_prefix("egpu_helper_register(%s, 0x%x)",
			   name ? name : "NULL", id);
		return err;
	}
	u->next = ctx->helpers;
	/* Loads on other threads take the head with acquire (obj.c). */
	__atomic_store_n(&ctx->helpers, u, __ATOMIC_RELEASE);
	return 0;
}
