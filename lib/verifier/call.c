/* SPDX-License-Identifier: MIT */
/*
 * Helper calls (arguments checked against their prototypes in
 * lib/core/helpers.c), bpf-to-bpf calls (a new frame, at most
 * BPF_MAX_CALL_DEPTH deep), and exits.
 */
#include <inttypes.h>
#include <string.h>

#include "core/helpers.h"
#include "core/map_types.h"
#include "vstate.h"

static const char *const attach_names[] = {
	"direct runs", "entry probes", "exit probes", "memory probes",
	"uprobes (host probes)", "uretprobes (host probes)",
};

/* What the arguments told about the call. */
struct call_meta {
	const char *name;
	int map;           /* ARG_MAP's map, -1 if none */
	uint64_t alloc;    /* ARG_ALLOC_SIZE */
	uint32_t release;  /* ARG_RECORD's reservation */
	bool key_known;    /* the thread-local key below is a constant */
	uint64_t key;
};

static int check_map_arg(struct verifier *v, const struct helper_info *p,
			 int regno, struct call_meta *m)
{
	const struct reg *r = &cur_regs(v)[regno];
	const struct map_spec *spec;

	if (r->type != REG_MAP_HANDLE)
		return vfail(v, "r%d must be a map for %s, got %s", regno,
			     m->name, reg_type_name(r));
	spec = &v->maps[r->map];
	if (!map_type_has(spec->type, p->maps))
		return vfail(v, "map '%s' (%s, type %" PRIu32 ") cannot be "
			     "used with %s", spec->name ? spec->name : "?",
			     map_type_name(spec->type), spec->type, m->name);
	if (spec->type == EGPU_MAP_THREAD_LOCAL && p->id != HELPER_MAP_LOOKUP)
		return vfail(v, "thread-local map '%s' can only be looked up with a constant key (%s needs memory; its values are registers)",
			     spec->name ? spec->name : "?", m->name);
	m->map = (int)r->map;
	return 0;
}

/* A thread-local key must be a constant: registers cannot be indexed. */
static int check_thread_local_key(struct verifier *v, int regno,
				  const struct map_spec *spec,
				  struct call_meta *m)
{
	m->key_known = stack_const(v, regno, spec->key_size, &m->key);
	if (!m->key_known)
		return vfail(v, "thread-local map '%s': the key in r%d must be a constant on the stack (values are registers, which cannot be indexed)",
			     spec->name ? spec->name : "?", regno);
	return 0;
}

static int check_map_mem_arg(struct verifier *v, int regno, bool key,
			     struct call_meta *m)
{
	struct scalar size;
	const struct map_spec *spec;
	int err;

	if (m->map < 0)
		return vfail(v, "%s: map argument missing", m->name);
	spec = &v->maps[m->map];
	sc_const(&size, key ? spec->key_size : spec->value_size);
	err = check_mem_arg(v, regno, &size, ACCESS_READ, false);
	if (!err && key && spec->type == EGPU_MAP_THREAD_LOCAL)
		err = check_thread_local_key(v, regno, spec, m);
	return err;
}

/* A thread-local value is a register: no helper can take its address. */
static int check_no_thread_local(struct verifier *v, int regno,
				 const struct call_meta *m)
{
	const struct reg *r = &cur_regs(v)[regno];
	const struct map_spec *spec;

	if (r->type != REG_PTR_MAP_VALUE && r->type != REG_PTR_MAP_VALUE_OR_NULL)
		return 0;
	spec = &v->maps[r->map];
	if (spec->type != EGPU_MAP_THREAD_LOCAL)
		return 0;
	return vfail(v, "r%d points into thread-local map '%s', whose values are registers: it cannot be passed to %s (copy the value to the stack first)",
		     regno, spec->name ? spec->name : "?", m->name);
}

static int check_size_arg(struct verifier *v, const struct helper_info *p,
			  int regno, bool zero_ok, const struct call_meta *m)
{
	enum access acc = p->args[regno - 2] == ARG_MEM_OUT ? ACCESS_WRITE :
							      ACCESS_READ;
	const struct reg *r = &cur_regs(v)[regno];

	if (r->type != REG_SCALAR)
		return vfail(v, "r%d must be a size for %s, got %s", regno,
			     m->name, reg_type_name(r));
	if (!zero_ok && r->v.umin == 0)
		return vfail(v, "r%d: size for %s may be 0", regno, m->name);
	if (r->v.umax > (uint64_t)MAX_OFFSET)
		return vfail(v, "r%d: size for %s is not bounded (umax %"
			     PRIu64 ")", regno, m->name, r->v.umax);
	return check_mem_arg(v, regno - 1, &r->v, acc, false);
}

static int check_record_arg(struct verifier *v, int regno,
			    struct call_meta *m)
{
	const struct reg *r = &cur_regs(v)[regno];

	if (r->type == REG_PTR_RECORD_OR_NULL)
		return vfail(v, "r%d may be NULL (result of ringbuf_reserve at "
			     "insn %d not checked)", regno, r->origin);
	if (r->type != REG_PTR_RECORD)
		return vfail(v, "r%d must be a ring buffer record for %s, got "
			     "%s", regno, m->name, reg_type_name(r));
	if (r->off || !sc_is_const(&r->v) || r->v.t.value)
		return vfail(v, "r%d must point to the start of the record",
			     regno);
	m->release = r->ref;
	return 0;
}

/* Whether a NUL follows byte @off of the first @len bytes of @s. */
static bool nul_after(const char *s, size_t len, int64_t off)
{
	return off >= 0 && (size_t)off < len &&
	       memchr(s + off, '\0', len - (size_t)off);
}

/*
 * A NUL after every offset the pointer may have, within the map's initial
 * bytes, which programs cannot change. A bounded variable offset (a string
 * picked from a table) is checked offset by offset.
 */
static int check_str_arg(struct verifier *v, int regno)
{
	const struct reg *r = &cur_regs(v)[regno];
	const struct map_spec *spec;
	size_t len;

	if (r->type != REG_PTR_MAP_VALUE || !v->maps[r->map].readonly ||
	    !v->maps[r->map].init || r->v.smax - r->v.smin > 4096)
		return vfail(v, "r%d must point to a constant string in "
			     "read-only data, got %s", regno,
			     reg_type_name(r));
	spec = &v->maps[r->map];
	len = spec->init_len < spec->value_size ? spec->init_len :
	      spec->value_size;
	for (int64_t k = r->v.smin; k <= r->v.smax; k++)
		if (tnum_in(r->v.t, (uint64_t)k) &&
		    !nul_after(spec->init, len, r->off + k))
			return vfail(v, "r%d: string at offset %" PRId64
				     " is not NUL-terminated inside map '%s'",
				     regno, r->off + k,
				     spec->name ? spec->name : "?");
	return 0;
}

static int check_ctx_arg(struct verifier *v, int regno)
{
	const struct reg *r = &cur_regs(v)[regno];

	if (r->type != REG_PTR_CTX || r->off || !sc_is_const(&r->v) ||
	    r->v.t.value)
		return vfail(v, "r%d must be the ctx pointer, got %s", regno,
			     reg_type_name(r));
	return 0;
}

/*
 * warp_add's counter: atomics need memory other threads can reach (a map
 * value, not the private stack), writable and naturally aligned.
 */
static int check_shared_u64_arg(struct verifier *v, int regno,
				const struct call_meta *m)
{
	const struct reg *r = &cur_regs(v)[regno];
	struct scalar eight;

	if (r->type != REG_PTR_MAP_VALUE)
		return vfail(v, "r%d must point into a map value for %s, got %s",
			     regno, m->name, reg_type_name(r));
	sc_const(&eight, 8);
	return check_mem_arg(v, regno, &eight, ACCESS_WRITE, true);
}

/*
 * A user helper's buffer: @size bytes of the stack or of a map value,
 * initialised (on the GPU the call gets a copy of them); writable too
 * unless const. Named after the registered signature in messages.
 */
static int check_user_buf_arg(struct verifier *v, const struct helper_info *p,
			      int regno, const struct call_meta *m)
{
	const struct reg *r = &cur_regs(v)[regno];
	const struct user_helper *u = user_helper_find(v->opts.users, p->id);
	uint32_t bytes = u->size[regno - 1];
	bool is_const = p->args[regno - 1] == ARG_USER_CONST_BUF;
	struct scalar size;
	int err;

	sc_const(&size, bytes);
	if (r->type != REG_PTR_STACK && r->type != REG_PTR_MAP_VALUE)
		return vfail(v, "r%d must point to %" PRIu32 " bytes of the "
			     "stack or a map value for %s (argument %d is "
			     "%su8[%" PRIu32 "]), got %s", regno, bytes,
			     m->name, regno, is_const ? "const " : "", bytes,
			     reg_type_name(r));
	err = check_mem_arg(v, regno, &size, ACCESS_READ, false);
	if (!err && !is_const)
		err = check_mem_arg(v, regno, &size, ACCESS_WRITE, false);
	return err;
}

static int check_arg(struct verifier *v, const struct helper_info *p,
		     int regno, struct call_meta *m)
{
	const struct reg *r = &cur_regs(v)[regno];
	struct scalar eight;
	uint8_t type = p->args[regno - 1];
	int err;

	if (type == ARG_ANY_OR_UNINIT)
		return 0;
	err = reg_readable(v, regno);
	if (!err)
		err = check_no_thread_local(v, regno, m);
	if (err)
		return err;
	switch (type) {
	case ARG_SCALAR:
		/* the parameters' address is also a number (alu.c) */
		if (r->type != REG_SCALAR && r->type != REG_PTR_PARAMS)
			return vfail(v, "r%d must be a scalar for %s, got %s",
				     regno, m->name, reg_type_name(r));
		return 0;
	case ARG_MAP:
		return check_map_arg(v, p, regno, m);
	case ARG_MAP_KEY:
	case ARG_MAP_VALUE:
		return check_map_mem_arg(v, regno, type == ARG_MAP_KEY, m);
	case ARG_MEM:
	case ARG_MEM_OUT:
		return 0; /* checked with its size */
	case ARG_SIZE:
	case ARG_SIZE_OR_ZERO:
		return check_size_arg(v, p, regno, type == ARG_SIZE_OR_ZERO, m);
	case ARG_ALLOC_SIZE:
		if (!reg_const_value(r, &m->alloc) || !m->alloc ||
		    m->alloc > (uint64_t)MAX_OFFSET)
			return vfail(v, "r%d: size for %s must be a constant "
				     "between 1 and %lld", regno, m->name,
				     MAX_OFFSET);
		return 0;
	case ARG_U64_OUT:
		sc_const(&eight, 8);
		return check_mem_arg(v, regno, &eight, ACCESS_WRITE, true);
	case ARG_RECORD:
		return check_record_arg(v, regno, m);
	case ARG_CTX:
		return check_ctx_arg(v, regno);
	case ARG_SHARED_U64:
		return check_shared_u64_arg(v, regno, m);
	case ARG_USER_BUF:
	case ARG_USER_CONST_BUF:
		return check_user_buf_arg(v, p, regno, m);
	default:
		return check_str_arg(v, regno);
	}
}

static int leaked_ref(struct verifier *v, const char *where)
{
	return vfail(v, "ring buffer record reserved at insn %d is neither "
		     "submitted nor discarded %s", v->cur->refs[0].insn, where);
}

struct release {
	uint32_t ref;
	int insn;
};

static void release_one(struct reg *r, void *arg)
{
	const struct release *rel = arg;

	if ((r->type == REG_PTR_RECORD || r->type == REG_PTR_RECORD_OR_NULL) &&
	    r->ref == rel->ref) {
		reg_not_init(r);
		r->origin = rel->insn;
	}
}

static int set_result(struct verifier *v, const struct helper_info *p,
		      const struct call_meta *m, const struct reg *arg1)
{
	struct reg *r0 = &cur_regs(v)[0];
	int insn = v->cur->insn;

	reg_unknown(r0);
	switch (p->ret) {
	case RET_VOID:
		reg_not_init(r0);
		break;
	case RET_ARG1:
		reg_scalar(r0, &arg1->v);
		break;
	case RET_MAP_VALUE_OR_NULL:
		/* A thread-local value of a constant key in range always is. */
		r0->type = m->key_known &&
				   m->key < v->maps[m->map].max_entries ?
			   REG_PTR_MAP_VALUE : REG_PTR_MAP_VALUE_OR_NULL;
		sc_const(&r0->v, 0);
		r0->map = (uint32_t)m->map;
		r0->id = new_id(v);
		break;
	case RET_RECORD_OR_NULL:
		r0->type = REG_PTR_RECORD_OR_NULL;
		sc_const(&r0->v, 0);
		r0->size = (uint32_t)m->alloc;
		r0->id = new_id(v);
		r0->ref = r0->id;
		r0->origin = insn;
		return ref_acquire(v->cur, r0->ref, insn);
	default:
		break;
	}
	r0->origin = insn;
	return 0;
}

int check_helper_call(struct verifier *v, int32_t id)
{
	const struct helper_info *p = helper_lookup(id, v->opts.abi,
						    v->opts.users);
	struct call_meta m = { .name = p ? p->name : "?", .map = -1 };
	struct reg arg1 = cur_regs(v)[1];
	int err;

	if (!p && v->opts.abi == EGPU_HELPERS_GPU && helper_id_is_user(id))
		return vfail(v, "helper %" PRId32 " (0x%" PRIx32 ") is a user "
			     "helper number the context has not registered "
			     "(egpu_helper_register before loading)", id,
			     (uint32_t)id);
	if (!p)
		return vfail(v, "unknown helper %" PRId32, id);
	if (!(p->attach & ATTACH_BIT(v->opts.attach)))
		return vfail(v, "helper %s#%" PRId32 " is not allowed in %s",
			     m.name, id, attach_names[v->opts.attach]);
	for (int i = 0; i < 5 && p->args[i] != ARG_NONE; i++) {
		err = check_arg(v, p, i + 1, &m);
		if (err)
			return err;
	}
	if ((p->flags & HELPER_ENDS_THREAD) && v->cur->nrefs)
		return leaked_ref(v, "before exit_thread");
	if (m.release) {
		struct release rel = { m.release, v->cur->insn };

		if (!ref_release(v->cur, m.release))
			return vfail(v, "record already released");
		state_for_each_reg(v->cur, release_one, &rel);
	}
	for (int r = 1; r <= 5; r++) {
		reg_not_init(&cur_regs(v)[r]);
		cur_regs(v)[r].origin = v->cur->insn;
	}
	return set_result(v, p, &m, &arg1);
}

int check_local_call(struct verifier *v, const struct bpf_insn *insn)
{
	struct vstate *st = v->cur;
	int target = st->insn + 1 + insn->imm;
	int caller = cur_frame(st)->subprog, callee;
	struct frame *f;

	if (st->depth >= BPF_MAX_CALL_DEPTH)
		return vfail(v, "call depth exceeds %d frames",
			     BPF_MAX_CALL_DEPTH);
	callee = insn_subprog(v, target);
	v->subprogs[caller].callees |= 1ULL << callee;
	v->subprogs[caller].callsite[callee] = st->insn;
	f = frame_new(st->insn, callee, st->depth);
	if (!f)
		return vnomem();
	memcpy(&f->regs[1], &cur_frame(st)->regs[1], 5 * sizeof(f->regs[1]));
	st->frames[st->depth++] = f;
	st->insn = target;
	return 0;
}

struct frame_ptr {
	int frameno;
	bool found;
};

static void find_frame_ptr(struct reg *r, void *arg)
{
	struct frame_ptr *fp = arg;

	if (r->type == REG_PTR_STACK && r->frameno == fp->frameno)
		fp->found = true;
}

/* After a function returns, nothing may point into its stack. */
static int check_dangling(struct verifier *v)
{
	struct vstate *st = v->cur;
	struct frame *callee = cur_frame(st);
	struct frame_ptr fp = { st->depth - 1, false };

	if (callee->regs[0].type == REG_PTR_STACK &&
	    callee->regs[0].frameno == fp.frameno)
		return vfail(v, "function returns a pointer to its own stack");
	st->depth--;
	state_for_each_reg(st, find_frame_ptr, &fp);
	st->depth++;
	if (fp.found)
		return vfail(v, "function returns while its caller holds a "
			     "pointer to its stack");
	return 0;
}

int check_exit(struct verifier *v)
{
	struct vstate *st = v->cur;
	struct frame *callee, *caller;
	const struct reg *r0 = &cur_regs(v)[0];
	int err;

	if (st->depth == 1) {
		err = reg_readable(v, 0);
		if (err)
			return err;
		/* A probe's return value is dropped at its site; a direct
		 * run's goes to the host, where an address means nothing. */
		if (reg_is_ptr(r0) && v->opts.attach == EGPU_ATTACH_NONE)
			return vfail(v, "r0 is a pointer (%s): a direct run "
				     "returns it to the host, which cannot use "
				     "an address", reg_type_name(r0));
		return st->nrefs ? leaked_ref(v, "at exit") : 1;
	}
	err = check_dangling(v);
	if (err)
		return err;
	callee = cur_frame(st);
	caller = st->frames[st->depth - 2];
	caller->regs[0] = callee->regs[0];
	for (int r = 1; r <= 5; r++) {
		reg_not_init(&caller->regs[r]);
		caller->regs[r].origin = callee->callsite;
	}
	st->insn = callee->callsite + 1;
	st->depth--;
	frame_free(callee);
	st->frames[st->depth] = NULL;
	return 0;
}

/* Deepest stack, in bytes, of call chains from @s at most @left frames deep. */
static uint32_t chain_depth(const struct verifier *v, int s, int left,
			    int32_t memo[][BPF_MAX_CALL_DEPTH + 1])
{
	uint32_t best = 0;

	if (memo[s][left] >= 0)
		return (uint32_t)memo[s][left];
	for (int c = 0; left > 1 && c < v->nsub; c++) {
		if (v->subprogs[s].callees & (1ULL << c)) {
			uint32_t d = chain_depth(v, c, left - 1, memo);

			best = d > best ? d : best;
		}
	}
	best += (v->subprogs[s].stack_depth + 7) & ~7u;
	memo[s][left] = (int32_t)best;
	return best;
}

int check_stack_chains(struct verifier *v)
{
	int32_t memo[MAX_SUBPROGS][BPF_MAX_CALL_DEPTH + 1];
	int s = 0, left = BPF_MAX_CALL_DEPTH;
	uint32_t total;
	struct strbuf chain;
	int err;

	memset(memo, -1, sizeof(memo));
	total = chain_depth(v, 0, BPF_MAX_CALL_DEPTH, memo);
	v->stats.stack_depth = total;
	if (total <= BPF_STACK_SIZE)
		return 0;
	/* Name the chain, and blame the call that goes over. */
	sb_init(&chain);
	sb_adds(&chain, "main");
	for (;;) {
		int next = -1;
		uint32_t here = (v->subprogs[s].stack_depth + 7) & ~7u;

		for (int c = 0; left > 1 && c < v->nsub; c++)
			if ((v->subprogs[s].callees & (1ULL << c)) &&
			    here + chain_depth(v, c, left - 1, memo) ==
			    (uint32_t)memo[s][left])
				next = c;
		if (next < 0)
			break;
		v->where = v->subprogs[s].callsite[next];
		sb_printf(&chain, " -> func@%d", v->subprogs[next].start);
		s = next;
		left--;
	}
	err = vfail(v, "combined stack of calls %s is %" PRIu32 " bytes "
		    "(limit %d)", sb_ok(&chain) ? chain.buf : "?", total,
		    BPF_STACK_SIZE);
	sb_free(&chain);
	return err;
}
