/* SPDX-License-Identifier: MIT */
/*
 * ptx_instrument(): parse every module, match attach requests to kernels,
 * plan the probe calls, link the modules in after the application's header
 * and splice it all into the application's text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem_ctx.h"
#include "egpu/ctx.h"
#include "ptx/memplan.h"

/* cvta.param on kernel parameters needs PTX ISA 7.7. */
#define PARAM_CVTA_MAJOR 7
#define PARAM_CVTA_MINOR 7

/* Memory probes' copies a module may receive by default, at least. */
#define MEM_INLINE_MIN ((size_t)16 << 20)

struct kernel {
	struct kernel_names names;
	struct kernel_plan plan;
};

struct session {
	struct ptx_module *app;
	struct ptx_module **mods;
	size_t nmod;
	char (*mod_names)[48];
	struct kernel *kernels;
	size_t nkernels;
	struct inline_func **bodies; /* per request, NULL where called */
	struct inline_func *mc_find, *mc_window; /* memcheck's copies */
	size_t nreq;
	struct mem_req *mem;         /* EGPU_ATTACH_MEM requests */
	size_t nmem;
	struct mem_plan *mem_plan;
	char **warnings;             /* unmatched patterns, kernels skipped */
	size_t nwarnings;
	struct edits edits;
	struct link_result link;
	char prefix[16];
	const struct ptx_numbering *num; /* NULL: ids are indices */
	uint32_t site_base;
};

static int check_args(const char *app_ptx, const struct ptx_attach *reqs,
		      size_t nreq, const struct ptx_text *modules, size_t nmod)
{
	size_t i;

	if (!app_ptx || (nreq && !reqs) || (nmod && !modules))
		return err_set(EGPU_EINVAL, "ptx_instrument: missing input");
	for (i = 0; i < nreq; i++) {
		if (!reqs[i].kernel ||
		    (!reqs[i].func && !reqs[i].memcheck && !reqs[i].trace))
			return err_set(EGPU_EINVAL,
				       "attach request %zu: no kernel or function",
				       i);
		if (reqs[i].point != EGPU_ATTACH_ENTRY &&
		    reqs[i].point != EGPU_ATTACH_EXIT &&
		    reqs[i].point != EGPU_ATTACH_MEM)
			return err_set(EGPU_EINVAL,
				       "attach request %zu (%s): attach point %d is not entry, exit or mem",
				       i, reqs[i].func, reqs[i].point);
	}
	for (i = 0; i < nmod; i++)
		if (!modules[i].text)
			return err_set(EGPU_EINVAL, "module %zu: no text", i);
	return 0;
}

static int parse_modules(struct session *s, const char *app_ptx, size_t len,
			 const struct ptx_text *modules)
{
	size_t i;
	int err;

	s->mods = calloc(s->nmod + 1, sizeof(*s->mods));
	s->mod_names = calloc(s->nmod + 1, sizeof(*s->mod_names));
	if (!s->mods || !s->mod_names)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	err = ptx_parse("application", app_ptx, len, &s->app);
	for (i = 0; !err && i < s->nmod; i++) {
		if (modules[i].name)
			snprintf(s->mod_names[i], sizeof(s->mod_names[i]),
				 "module '%s'", modules[i].name);
		else
			snprintf(s->mod_names[i], sizeof(s->mod_names[i]),
				 "module %zu", i);
		err = ptx_parse(s->mod_names[i], modules[i].text,
				modules[i].len, &s->mods[i]);
	}
	return err;
}

static int collect_kernels(struct session *s)
{
	const struct ptx_module *m = s->app;
	uint32_t i;
	int err = 0;

	s->kernels = calloc(m->nitems + 1, sizeof(*s->kernels));
	if (!s->kernels)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (i = 0; i < m->nitems && !err; i++) {
		const struct ptx_item *it = &m->items[i];
		struct kernel *k = &s->kernels[s->nkernels];

		if (it->kind != IT_FUNC || !it->func->entry || !it->func->defined)
			continue;
		err = kernel_names_init(&k->names, tok_text(m, it->name),
					m->toks[it->name].len);
		k->plan.item = i;
		k->plan.id = (uint32_t)s->nkernels;
		if (!err && s->num)
			err = s->num->kernel_id(s->num->user, (uint32_t)s->nkernels,
						k->names.mangled,
						k->names.demangled, &k->plan.id);
		if (!err)
			s->nkernels++;
		else
			kernel_names_free(&k->names);
	}
	return err;
}

/* The probe function must be linked in and have the JIT's signature. */
static int check_probe(const struct session *s, const struct ptx_attach *r)
{
	const struct ptx_module *owner;
	const struct ptx_item *it =
		link_find_func(s->mods, s->nmod, r->func, &owner);

	if (!it)
		return err_set(EGPU_ENOENT,
			       "probe function '%s' is not defined by any linked module",
			       r->func);
	if (it->func->nret != 1 || it->func->nparams != 2)
		return err_set(EGPU_EINVAL,
			       "probe function '%s' (%s line %u) must take (ctx, ctx_len) and return one value",
			       r->func, owner->name,
			       owner->toks[it->first].line);
	/* A module-local function may be renamed by the linker. */
	if (it->linkage != LINK_VISIBLE)
		return err_set(EGPU_EINVAL,
			       "probe function '%s' (%s line %u) must be .visible",
			       r->func, owner->name,
			       owner->toks[it->first].line);
	return 0;
}

/* "no kernel matches 'P'; kernels: a, b, ..." with @r's program name. */
static void no_match_text(const struct session *s, const struct ptx_attach *r,
			  char *buf, size_t size)
{
	char list[600] = "";
	size_t i, used = 0;

	for (i = 0; i < s->nkernels; i++) {
		const char *name = s->kernels[i].names.qualified;
		int n = snprintf(list + used, sizeof(list) - used, "%s%s",
				 i ? ", " : "", name);

		if (n < 0 || (size_t)n >= sizeof(list) - used) {
			list[used] = '\0';
			snprintf(list + used, sizeof(list) - used,
				 " ... (%zu more)", s->nkernels - i);
			break;
		}
		used += (size_t)n;
	}
	snprintf(buf, size, "prog '%s': no kernel matches '%s'; kernels: %s",
		 r->label ? r->label : r->func, r->kernel,
		 s->nkernels ? list : "(none)");
}

/* An error @err for a strict request, else a warning in the report. */
static int warn(struct session *s, const struct ptx_attach *r, int err,
		const char *text)
{
	char **v;

	if (r->strict_match)
		return err_set(err, "%s", text);
	v = realloc(s->warnings, (s->nwarnings + 1) * sizeof(*v));
	if (!v)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	s->warnings = v;
	v[s->nwarnings] = strdup(text);
	if (!v[s->nwarnings])
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	s->nwarnings++;
	return 0;
}

static int no_match(struct session *s, const struct ptx_attach *r)
{
	char text[800];

	no_match_text(s, r, text, sizeof(text));
	return warn(s, r, EGPU_ENOENT, text);
}

/*
 * Whether kernel @k has the parameter bytes entry/exit probe @r reads
 * through ctx->params; if not, the probe is not put there (a warning).
 */
static int params_fit(struct session *s, const struct ptx_attach *r,
		      const struct kernel *k, bool *fits)
{
	const struct ptx_func *f = s->app->items[k->plan.item].func;
	char text[400];

	*fits = r->point == EGPU_ATTACH_MEM || !f->params_known ||
		r->params_reach <= f->param_bytes;
	if (*fits)
		return 0;
	snprintf(text, sizeof(text),
		 "prog '%s' reads ctx->params up to byte %u; kernel '%s' has %u bytes of parameters: not attached to it",
		 r->label ? r->label : r->func, r->params_reach,
		 k->names.qualified, f->param_bytes);
	return warn(s, r, EGPU_EINVAL, text);
}

/* Index of @m among the linked modules. */
static size_t owner_index(const struct session *s, const struct ptx_module *m)
{
	size_t i = 0;

	while (s->mods[i] != m)
		i++;
	return i;
}

/*
 * Whether probe @it names its parameters anywhere in its body. The JIT
 * loads no parameter its program leaves unread: a probe that never reads
 * its ctx needs none built.
 */
static bool reads_params(const struct ptx_module *m, const struct ptx_item *it)
{
	const struct ptx_func *f = it->func;

	for (uint32_t t = f->body; t < f->stmts[f->nstmts - 1].last; t++)
		for (uint32_t i = 0; i < f->nparams; i++)
			if (tok_same(m, t, f->params[i].name))
				return true;
	return false;
}

/*
 * Copy the probe's body into its sites unless asked not to or unable;
 * build its ctx unless told or seen not to need one, or its copies read
 * the ctx's values directly.
 */
static int prepare_probe(struct session *s, const struct ptx_attach *r,
			 struct inline_func **body, struct probe_call *call,
			 bool *need_ctx)
{
	const struct ptx_module *owner;
	const struct ptx_item *it =
		link_find_func(s->mods, s->nmod, r->func, &owner);
	int err = 0;

	*body = NULL;
	if (!r->no_inline)
		err = inline_prepare(owner, it,
				     &s->link.renames[owner_index(s, owner)],
				     r->point == EGPU_ATTACH_MEM ? &ctx_layout_mem :
								   &ctx_layout_kernel,
				     body, NULL);
	if (!err && !*body && func_uses_thread_local(owner, it))
		return err_set(EGPU_ENOTSUP,
			       "probe '%s' uses a thread-local map, whose values are registers of the kernel: it must be copied into its sites, not called (%s)",
			       r->func, r->no_inline ? "calls were asked for" :
			       "its body cannot be copied");
	*call = (struct probe_call){
		.func = r->func, .body = *body,
		.fold = *body && !r->no_ctx && inline_folds_ctx(*body),
	};
	*need_ctx = !r->no_ctx && !call->fold && reads_params(owner, it);
	return err;
}

static int add_call(struct kernel_plan *p, const struct ptx_attach *r,
		    const struct probe_call *call, bool need_ctx, size_t nreq)
{
	struct probe_call **list =
		r->point == EGPU_ATTACH_ENTRY ? &p->entry : &p->exit;
	size_t *n = r->point == EGPU_ATTACH_ENTRY ? &p->nentry : &p->nexit;

	if (!*list) {
		*list = calloc(nreq, sizeof(**list));
		if (!*list)
			return err_set(EGPU_ENOMEM, "PTX: out of memory");
	}
	(*list)[(*n)++] = *call;
	if (need_ctx)
		*(r->point == EGPU_ATTACH_ENTRY ? &p->entry_ctx : &p->exit_ctx) = true;
	return 0;
}

size_t ptx_mem_inline_default(size_t len)
{
	return len > MEM_INLINE_MIN ? len : MEM_INLINE_MIN;
}

/* Bytes of one copy of @body at a memory site, measured on a copy with
 * names as long as a big module's. */
static int copy_bytes(const struct inline_func *body, size_t *bytes)
{
	struct inline_site at = { .name = "egpu_m999999_0",
				  .depot = "%egpu_f99999_depot",
				  .ctx = "%egpu_m1", .len = "%egpu_m4" };
	struct strbuf sb;

	sb_init(&sb);
	emit_inlined(&sb, body, &at);
	*bytes = sb.len;
	if (!sb_ok(&sb)) {
		sb_free(&sb);
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	}
	sb_free(&sb);
	return 0;
}

static int add_mem(struct session *s, const struct ptx_attach *r,
		   const struct probe_call *call, bool need_ctx)
{
	const struct ptx_module *owner;
	const struct ptx_item *it = link_find_func(s->mods, s->nmod, r->func,
						   &owner);
	struct mem_req *q = &s->mem[s->nmem++];

	*q = (struct mem_req){
		.r = r, .call = *call, .need_ctx = need_ctx,
		.reads_text = call->fold &&
			      inline_reads_ctx(call->body,
					       offsetof(struct egpu_mem_ctx, text), 8),
		.kernels = calloc(s->nkernels + 1, 1),
		.limit = r->mem_inline_limit ? r->mem_inline_limit :
					       ptx_mem_inline_default(s->app->len),
		.called = { .func = r->func },
		.called_ctx = !r->no_ctx && reads_params(owner, it),
	};
	if (!q->kernels)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	return call->body ? copy_bytes(call->body, &q->copy_bytes) : 0;
}

/*
 * Device runtime function @name prepared for copying into memcheck's
 * sites, its ctx folded (struct mc_site_ctx) and its result in a register.
 */
static int prepare_mc(struct session *s, const char *name,
		      struct inline_func **body)
{
	const struct ptx_module *owner;
	const struct ptx_item *it;
	const char *why = NULL;
	uint32_t size, align;
	int err;

	if (*body)
		return 0; /* a second memcheck request: the same copies */
	it = link_find_func(s->mods, s->nmod, name, &owner);
	if (!it)
		return err_set(EGPU_ENOENT,
			       "memcheck: no linked module defines %s (lib/device/memcheck.cu)",
			       name);
	err = inline_prepare(owner, it, &s->link.renames[owner_index(s, owner)],
			     &ctx_layout_mc, body, &why);
	if (err)
		return err;
	if (*body)
		inline_local(*body, &size, &align);
	if (!*body || !inline_folds_ctx(*body) ||
	    !inline_gives_result(*body) || size) {
		inline_free(*body);
		*body = NULL;
		return err_set(EGPU_EINVAL,
			       "memcheck: %s cannot be copied into the sites: %s",
			       name, why ? why :
			       "it reads its ctx other than by loads of whole fields, sets its result in parts, or has a stack");
	}
	return 0;
}

/* egpu memcheck's request: no probe, the device runtime's check copied
 * into each site. */
static int add_memcheck(struct session *s, const struct ptx_attach *r)
{
	struct mem_req *q = &s->mem[s->nmem++];
	int err;

	if (r->point != EGPU_ATTACH_MEM)
		return err_set(EGPU_EINVAL, "memcheck: the check goes at memory sites, not attach point %d",
			       r->point);
	err = prepare_mc(s, MC_FIND_FUNC, &s->mc_find);
	if (!err)
		err = prepare_mc(s, MC_WINDOW_FUNC, &s->mc_window);
	if (err)
		return err;
	*q = (struct mem_req){ .r = r, .call = { .func = MC_FIND_FUNC },
			       .mc_find = s->mc_find,
			       .mc_window = s->mc_window,
			       .kernels = calloc(s->nkernels + 1, 1) };
	return q->kernels ? 0 : err_set(EGPU_ENOMEM, "PTX: out of memory");
}

/* The splicer's trace mode: no probe, records written inline. */
static int add_trace(struct session *s, const struct ptx_attach *r)
{
	static const char *const funcs[] = { TR_SITE_FUNC, TR_CLAIM_FUNC,
					     TR_ALONE_FUNC };
	const struct ptx_module *owner;
	struct mem_req *q = &s->mem[s->nmem++];

	if (r->point != EGPU_ATTACH_MEM)
		return err_set(EGPU_EINVAL, "trace: records go at memory sites, not attach point %d",
			       r->point);
	for (size_t i = 0; i < ARRAY_SIZE(funcs); i++)
		if (!link_find_func(s->mods, s->nmod, funcs[i], &owner))
			return err_set(EGPU_ENOENT,
				       "trace: no linked module defines %s (the device runtime)",
				       funcs[i]);
	*q = (struct mem_req){ .r = r, .call = { .func = TR_SITE_FUNC },
			       .kernels = calloc(s->nkernels + 1, 1) };
	return q->kernels ? 0 : err_set(EGPU_ENOMEM, "PTX: out of memory");
}

/* A probe's request: its function checked and prepared. */
static int plan_probe(struct session *s, const struct ptx_attach *r,
		      size_t i, struct probe_call *call, bool *need_ctx)
{
	int err = check_probe(s, r);

	if (!err)
		err = prepare_probe(s, r, &s->bodies[i], call, need_ctx);
	if (!err && r->point == EGPU_ATTACH_MEM)
		err = add_mem(s, r, call, *need_ctx);
	return err;
}

static int plan_request(struct session *s, const struct ptx_attach *r,
			size_t i)
{
	struct probe_call call = { 0 };
	bool need_ctx = false;
	size_t hits = 0;
	int err = r->memcheck ? add_memcheck(s, r) :
		  r->trace ? add_trace(s, r) :
			     plan_probe(s, r, i, &call, &need_ctx);

	for (size_t k = 0; k < s->nkernels && !err; k++) {
		bool fits;

		if (!kernel_names_match(&s->kernels[k].names, r->kernel))
			continue;
		hits++;
		if ((err = params_fit(s, r, &s->kernels[k], &fits)) || !fits)
			continue;
		if (r->point == EGPU_ATTACH_MEM)
			s->mem[s->nmem - 1].kernels[k] = 1;
		else if (r->point == EGPU_ATTACH_ENTRY && r->may_exit &&
			 (err = check_early_exit(s->app, s->kernels[k].plan.item,
						 r->func)))
			break;
		else
			err = add_call(&s->kernels[k].plan, r, &call, need_ctx,
				       s->nreq);
	}
	if (!err && !hits)
		err = no_match(s, r);
	return err;
}

/* Plan the memory sites and number them. */
static int plan_mem(struct session *s)
{
	uint32_t *items = calloc(2 * s->nkernels + 1, sizeof(*items));
	uint32_t *ids = items + s->nkernels;
	const struct mem_site *sites;
	int err;

	if (!items)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (size_t k = 0; k < s->nkernels; k++) {
		items[k] = s->kernels[k].plan.item;
		ids[k] = s->kernels[k].plan.id;
	}
	err = mem_plan_make(s->app, items, ids, s->nkernels, s->mem, s->nmem,
			    &s->mem_plan);
	free(items);
	if (!err && s->num)
		err = s->num->site_base(s->num->user,
					(uint32_t)mem_plan_sites(s->mem_plan, &sites),
					&s->site_base);
	if (!err)
		mem_plan_set_site_base(s->mem_plan, s->site_base);
	return err;
}

static int plan_requests(struct session *s, const struct ptx_attach *reqs,
			 size_t nreq)
{
	int err = 0;

	s->bodies = calloc(nreq + 1, sizeof(*s->bodies));
	s->mem = calloc(nreq + 1, sizeof(*s->mem));
	if (!s->bodies || !s->mem)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	s->nreq = nreq;
	for (size_t i = 0; i < nreq && !err; i++)
		err = plan_request(s, &reqs[i], i);
	if (!err && s->nmem)
		err = plan_mem(s);
	return err;
}

/* A prefix that starts no %register or $label of the application. */
static int choose_prefix(struct session *s)
{
	const struct ptx_module *m = s->app;
	unsigned n;
	uint32_t i;

	for (n = 0; n < 1000; n++) {
		size_t len;
		bool used = false;

		snprintf(s->prefix, sizeof(s->prefix), n ? "egpu%u" : "egpu", n);
		len = strlen(s->prefix);
		for (i = 0; i < m->ntoks && !used; i++) {
			const char *t = tok_text(m, i);

			used = m->toks[i].kind == TOK_IDENT &&
			       m->toks[i].len > len + 1 &&
			       (t[0] == '%' || t[0] == '$') &&
			       !memcmp(t + 1, s->prefix, len) && t[len + 1] == '_';
		}
		if (!used)
			return 0;
	}
	return err_set(EGPU_ENOTSUP, "PTX: no free prefix for inserted names");
}

static void raise_version(struct link_result *v, unsigned major,
			  unsigned minor)
{
	if (major > v->version_major ||
	    (major == v->version_major && minor > v->version_minor)) {
		v->version_major = major;
		v->version_minor = minor;
	}
}

/* The .local variables of function @item's inserted code. */
static int declare_func_locals(struct session *s, uint32_t item,
			       const struct kernel_plan *plan,
			       struct mem_names *nm, char *depot, char *mctx,
			       size_t n)
{
	const struct ptx_module *m = s->app;
	struct func_locals l = { .align = 1 };
	char tag[16];

	if (plan)
		snprintf(tag, sizeof(tag), "%u", plan->id);
	else
		snprintf(tag, sizeof(tag), "f%u", item);
	int err = 0;

	if (plan) {
		err = calls_local(plan->entry, plan->nentry, &l);
		if (!err)
			err = calls_local(plan->exit, plan->nexit, &l);
	}
	if (!err && s->mem_plan)
		err = mem_item_local(s->mem_plan, item, &l);
	if (err)
		return err;
	snprintf(depot, n, "%%%s_%s_depot", s->prefix, tag);
	snprintf(mctx, n, "%%%s_%s_mctx", s->prefix, tag);
	nm->prefix = s->prefix;
	nm->depot = l.depot = l.size ? depot : NULL;
	nm->mctx = l.mctx = s->mem_plan && mem_item_needs_ctx(s->mem_plan, item) ?
				    mctx : NULL;
	l.mctx_size = sizeof(struct mem_site_ctx);
	return declare_locals(m, m->items[item].func, &l, &s->edits);
}

/* A kernel's entry and exit probes, then every function's memory probes. */
static int rewrite_function(struct session *s, uint32_t item,
			    struct kernel_plan *plan)
{
	char depot[48], mctx[48];
	struct mem_names nm;
	int err = declare_func_locals(s, item, plan, &nm, depot, mctx,
				      sizeof(depot));

	if (!err && plan)
		err = rewrite_kernel(s->app, plan, s->prefix, nm.depot,
				     &s->edits);
	if (!err && s->mem_plan)
		err = mem_emit_item(s->mem_plan, s->app, item, &nm, &s->edits);
	return err;
}

static int rewrite_functions(struct session *s)
{
	const struct ptx_module *m = s->app;
	const struct mem_site *sites;
	size_t k = 0;
	int err = 0;

	for (uint32_t i = 0; i < m->nitems && !err; i++) {
		struct kernel_plan *plan = NULL;

		if (m->items[i].kind != IT_FUNC || !m->items[i].func->defined)
			continue;
		if (m->items[i].func->entry)
			plan = &s->kernels[k++].plan;
		err = rewrite_function(s, i, plan);
		if (err)
			err_prefix("%s", m->name);
	}
	if (!err && s->mem_plan)
		err = mem_emit_texts(s->mem_plan, m, s->prefix, m->header_end,
				     &s->edits);
	for (k = 0; k < s->nkernels; k++)
		if (s->kernels[k].plan.nentry || s->kernels[k].plan.nexit)
			raise_version(&s->link, PARAM_CVTA_MAJOR, PARAM_CVTA_MINOR);
	if (mem_plan_sites(s->mem_plan, &sites))
		raise_version(&s->link, PARAM_CVTA_MAJOR, PARAM_CVTA_MINOR);
	return err;
}

static int edit_version(struct session *s)
{
	const struct ptx_module *m = s->app;
	struct strbuf *sb;

	if (s->link.version_major == m->version_major &&
	    s->link.version_minor == m->version_minor)
		return 0;
	sb = edit_at(&s->edits, m->toks[m->version_tok].off,
		     m->toks[m->version_tok].len);
	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	sb_printf(sb, "%u.%u", s->link.version_major, s->link.version_minor);
	return 0;
}

/*
 * The linked block, definitions included, comes before the application's
 * own text: its declarations of what the block defines must go, or ptxas
 * sees a redefinition.
 */
static int drop_linked_declarations(struct session *s)
{
	const struct ptx_module *m = s->app;

	for (uint32_t i = 0; i < m->nitems; i++) {
		const struct ptx_item *it = &m->items[i];
		const struct tok *first = &m->toks[it->first];
		const struct tok *last = &m->toks[it->last - 1];

		if (it->kind != IT_FUNC || it->func->defined ||
		    !link_defined_by(s->mods, s->nmod, m, it))
			continue;
		if (!edit_at(&s->edits, first->off, last->off + last->len - first->off))
			return err_set(EGPU_ENOMEM, "PTX: out of memory");
	}
	return 0;
}

static int edit_link(struct session *s)
{
	struct strbuf *sb;
	int err;

	s->link.version_major = s->app->version_major;
	s->link.version_minor = s->app->version_minor;
	if (!s->nmod)
		return 0;
	sb = edit_at(&s->edits, s->app->header_end, 0);
	if (!sb)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	err = link_modules(s->app, s->mods, s->nmod, sb, &s->link);
	return err ? err : drop_linked_declarations(s);
}

static uint32_t inlined(const struct probe_call *calls, size_t n)
{
	uint32_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += calls[i].body != NULL;
	return k;
}

/* .file names, by number, that the sites point to. */
static int report_files(struct ptx_report *r, const struct ptx_module *m)
{
	for (uint32_t i = 0; i < m->nitems; i++) {
		const struct ptx_item *it = &m->items[i];
		uint32_t t = it->first + 1, n;
		char **v;

		if (it->kind != IT_FILE || m->toks[t].kind != TOK_INT ||
		    m->toks[t + 1].kind != TOK_STRING)
			continue;
		n = (uint32_t)strtoul(tok_text(m, t), NULL, 0);
		if (n > m->nitems)
			continue; /* numbers are small: a sparse table is fine */
		if (n >= r->nfiles) {
			v = realloc(r->files, (n + 1) * sizeof(*v));
			if (!v)
				return err_set(EGPU_ENOMEM, "PTX: out of memory");
			memset(v + r->nfiles, 0, (n + 1 - r->nfiles) * sizeof(*v));
			r->files = v;
			r->nfiles = n + 1;
		}
		free(r->files[n]);
		r->files[n] = strndup(tok_text(m, t + 1) + 1,
				      m->toks[t + 1].len - 2);
		if (!r->files[n])
			return err_set(EGPU_ENOMEM, "PTX: out of memory");
	}
	return 0;
}

static int report_mem_sites(struct session *s, struct ptx_report *r)
{
	const struct ptx_module *m = s->app;
	const struct mem_site *sites;
	size_t n = mem_plan_sites(s->mem_plan, &sites);
	int err = report_files(r, m);

	r->mem_skipped = mem_plan_skipped(s->mem_plan);
	r->mem_called = mem_plan_called(s->mem_plan);
	r->site_base = s->site_base;
	r->mem_sites = calloc(n + 1, sizeof(*r->mem_sites));
	if (!err && !r->mem_sites)
		err = err_set(EGPU_ENOMEM, "PTX: out of memory");
	for (size_t i = 0; i < n && !err; i++) {
		const struct mem_site *ms = &sites[i];
		const struct ptx_item *it = &m->items[ms->item];
		struct ptx_mem_site *o = &r->mem_sites[i];

		*o = (struct ptx_mem_site){
			.kernel_id = ms->kernel_id,
			.ptx_line = m->toks[it->func->stmts[ms->stmt].first].line,
			.line = ms->line, .size = ms->op.size,
			.kind = ms->op.kind, .space = ms->op.space,
			.file = ms->file < r->nfiles ? r->files[ms->file] : NULL,
			.function = strndup(tok_text(m, it->name),
					    m->toks[it->name].len),
		};
		r->nmem_sites++;
		err = o->function ? mem_site_text(s->mem_plan, m, i, &o->text) :
				    err_set(EGPU_ENOMEM, "PTX: out of memory");
	}
	return err;
}

static int fill_report(struct session *s, struct ptx_report *r)
{
	size_t i;

	r->kernels = calloc(s->nkernels + 1, sizeof(*r->kernels));
	if (!r->kernels)
		return err_set(EGPU_ENOMEM, "PTX: out of memory");
	r->nkernels = s->nkernels;
	r->version_major = s->link.version_major;
	r->version_minor = s->link.version_minor;
	r->linked_funcs = s->link.funcs;
	for (i = 0; i < s->nkernels; i++) {
		struct kernel *k = &s->kernels[i];
		struct ptx_kernel_info *ki = &r->kernels[i];

		ki->name = k->names.mangled;
		ki->demangled = k->names.demangled;
		k->names.mangled = k->names.demangled = NULL;
		ki->id = k->plan.id;
		ki->entry_points = k->plan.entry_points;
		ki->exit_points = k->plan.exit_points;
		ki->programs = (uint32_t)(k->plan.nentry + k->plan.nexit);
		ki->inlined = ki->entry_points * inlined(k->plan.entry, k->plan.nentry) +
			      ki->exit_points * inlined(k->plan.exit, k->plan.nexit);
		ki->mem_points = mem_plan_points(s->mem_plan, i);
		for (size_t q = 0; q < s->nmem; q++)
			ki->programs += s->mem[q].kernels[i];
	}
	r->warnings = s->warnings;
	r->nwarnings = s->nwarnings;
	s->warnings = NULL;
	s->nwarnings = 0;
	return report_mem_sites(s, r);
}

static void session_free(struct session *s)
{
	size_t i;

	for (i = 0; s->kernels && i < s->nkernels; i++) {
		kernel_names_free(&s->kernels[i].names);
		free(s->kernels[i].plan.entry);
		free(s->kernels[i].plan.exit);
	}
	free(s->kernels);
	for (i = 0; s->bodies && i < s->nreq; i++)
		inline_free(s->bodies[i]);
	inline_free(s->mc_find);
	inline_free(s->mc_window);
	free(s->bodies);
	for (i = 0; i < s->nmem; i++)
		free(s->mem[i].kernels);
	free(s->mem);
	mem_plan_free(s->mem_plan);
	for (i = 0; i < s->nwarnings; i++)
		free(s->warnings[i]);
	free(s->warnings);
	link_result_free(&s->link);
	for (i = 0; s->mods && i < s->nmod; i++)
		ptx_module_free(s->mods[i]);
	free(s->mods);
	free(s->mod_names);
	ptx_module_free(s->app);
	edits_free(&s->edits);
}

int ptx_instrument(const char *app_ptx, size_t len,
		   const struct ptx_attach *reqs, size_t nreq,
		   const struct ptx_text *modules, size_t nmod,
		   struct strbuf *out, struct ptx_report *report)
{
	return ptx_instrument_num(app_ptx, len, reqs, nreq, modules, nmod,
				  NULL, out, report);
}

int ptx_instrument_num(const char *app_ptx, size_t len,
		       const struct ptx_attach *reqs, size_t nreq,
		       const struct ptx_text *modules, size_t nmod,
		       const struct ptx_numbering *num, struct strbuf *out,
		       struct ptx_report *report)
{
	struct session s = { .nmod = nmod, .num = num };
	int err;

	if (report)
		memset(report, 0, sizeof(*report));
	err = check_args(app_ptx, reqs, nreq, modules, nmod);
	if (err)
		return err;
	edits_init(&s.edits);
	err = parse_modules(&s, app_ptx, len, modules);
	if (!err)
		err = collect_kernels(&s);
	if (!err)
		err = edit_link(&s);
	if (!err)
		err = plan_requests(&s, reqs, nreq);
	if (!err)
		err = choose_prefix(&s);
	if (!err)
		err = rewrite_functions(&s);
	if (!err)
		err = edit_version(&s);
	if (!err)
		err = edits_apply(&s.edits, app_ptx, len, out);
	if (!err && report)
		err = fill_report(&s, report);
	session_free(&s);
	return err;
}

void ptx_report_free(struct ptx_report *report)
{
	size_t i;

	if (!report)
		return;
	for (i = 0; i < report->nkernels; i++) {
		free(report->kernels[i].name);
		free(report->kernels[i].demangled);
	}
	free(report->kernels);
	for (i = 0; i < report->nmem_sites; i++) {
		free(report->mem_sites[i].function);
		free(report->mem_sites[i].text);
	}
	free(report->mem_sites);
	for (i = 0; i < report->nfiles; i++)
		free(report->files[i]);
	free(report->files);
	for (i = 0; i < report->nwarnings; i++)
		free(report->warnings[i]);
	free(report->warnings);
	memset(report, 0, sizeof(*report));
}
