/* SPDX-License-Identifier: MIT */
/*
 * Memory accesses: every load, store, atomic and helper memory argument is
 * proven to stay inside the region its pointer points into, naturally
 * aligned, and (on the stack) to read only bytes written before.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/helpers.h"
#include "egpu/ctx.h"
#include "vstate.h"

/* Name of the helper whose call produced a value, for messages. */
static const char *origin_name(const struct verifier *v, int32_t insn)
{
	const struct helper_info *h;

	if (insn < 0 || (size_t)insn >= v->cnt)
		return "a helper";
	h = helper_lookup(v->insns[insn].imm, v->opts.abi, v->opts.users);
	return h ? h->name : "a helper";
}

int reg_readable(struct verifier *v, int regno)
{
	const struct reg *r = &cur_regs(v)[regno];
	struct strbuf sb;
	int err;

	if (r->type != REG_NOT_INIT)
		return 0;
	if (r->origin < 0)
		return vfail(v, "r%d is not initialised", regno);
	sb_init(&sb);
	disasm_insn(&sb, v, r->origin);
	err = vfail(v, "r%d is not initialised (invalidated by insn %d: %s)",
		    regno, r->origin, sb_ok(&sb) ? sb.buf : "?");
	sb_free(&sb);
	return err;
}

int reg_writable(struct verifier *v, int regno)
{
	if (regno == BPF_REG_COUNT - 1)
		return vfail(v, "r10 is the read-only frame pointer");
	return 0;
}

/* Why the register cannot be dereferenced, or 0 if it can. */
static int check_is_pointer(struct verifier *v, int regno)
{
	const struct reg *r = &cur_regs(v)[regno];
	int err = reg_readable(v, regno);

	if (err)
		return err;
	switch (r->type) {
	case REG_SCALAR:
		return vfail(v, "r%d is not a pointer (%s)", regno,
			     reg_type_name(r));
	case REG_MAP_HANDLE:
		return vfail(v, "r%d is a map handle, which cannot be "
			     "dereferenced", regno);
	case REG_PTR_MAP_VALUE_OR_NULL:
	case REG_PTR_RECORD_OR_NULL:
		return vfail(v, "r%d may be NULL (result of %s at insn %d not "
			     "checked)", regno, origin_name(v, r->origin),
			     r->origin);
	default:
		return 0;
	}
}

/* The bytes a pointer may reach: [lo, hi) relative to its base. */
struct region {
	const char *what;
	int64_t lo, hi;
	bool writable;
	bool aligned;      /* accesses must be naturally aligned */
	bool fixed_offset; /* no variable offset allowed */
};

static int pointer_region(struct verifier *v, int regno, enum access acc,
			  struct region *rg)
{
	const struct reg *r = &cur_regs(v)[regno];
	const struct map_spec *m;

	*rg = (struct region){ .aligned = true, .writable = true };
	switch (r->type) {
	case REG_PTR_CTX:
		rg->what = "ctx";
		rg->hi = v->ctx_size;
		rg->writable = v->ctx_writable;
		/* Direct runs get plain memory; attach points a struct. */
		rg->aligned = rg->fixed_offset =
			v->opts.attach != EGPU_ATTACH_NONE;
		if (acc == ACCESS_ATOMIC)
			return vfail(v, "atomic operation on ctx (only stack "
				     "and map values allow atomics)");
		if (!rg->writable && acc != ACCESS_READ)
			return vfail(v, "write into read-only ctx through r%d",
				     regno);
		return 0;
	case REG_PTR_STACK:
		if (r->frameno >= v->cur->depth)
			return vfail(v, "r%d points into the stack of a "
				     "function that returned", regno);
		rg->what = "stack";
		rg->lo = -BPF_STACK_SIZE;
		return 0;
	case REG_PTR_MAP_VALUE:
		m = &v->maps[r->map];
		rg->what = "map value";
		rg->hi = m->value_size;
		/* Registers can be neither indexed nor reached by atomics. */
		if (m->type == EGPU_MAP_THREAD_LOCAL) {
			rg->what = "thread-local map value (kept in registers)";
			rg->fixed_offset = true;
			if (acc == ACCESS_ATOMIC)
				return vfail(v, "atomic operation on thread-local map '%s': its values are registers of one thread, use plain loads and stores",
					     m->name ? m->name : "?");
		}
		if (m->readonly && acc != ACCESS_READ)
			return vfail(v, "write into read-only map '%s'",
				     m->name ? m->name : "?");
		return 0;
	case REG_PTR_PARAMS:
		rg->what = "kernel parameters";
		rg->hi = VERIFIER_PARAMS_MAX;
		if (acc != ACCESS_READ)
			return vfail(v, "write into the kernel's parameters "
				     "through r%d (read-only)", regno);
		return 0;
	case REG_PTR_RECORD:
		rg->what = "ring buffer record";
		rg->hi = r->size;
		if (acc == ACCESS_ATOMIC)
			return vfail(v, "atomic operation on a ring buffer "
				     "record (only stack and map values "
				     "allow atomics)");
		return 0;
	default:
		return check_is_pointer(v, regno);
	}
}

/*
 * Bytes [*lo, *hi) that @size bytes at insn offset @off from the pointer may
 * touch, checked against the region. @size_min < @size covers helper
 * arguments of variable size.
 */
static int check_bounds(struct verifier *v, int regno, const struct region *rg,
			int32_t off, uint64_t size, int64_t *lo, int64_t *hi)
{
	const struct reg *r = &cur_regs(v)[regno];
	int64_t fixed = (int64_t)r->off + off;
	char what[96];

	if (rg->fixed_offset && !sc_is_const(&r->v))
		return vfail(v, "variable offset access to %s through r%d",
			     rg->what, regno);
	if (r->v.smin < -MAX_OFFSET || r->v.smax > MAX_OFFSET ||
	    size > (uint64_t)MAX_OFFSET)
		return vfail(v, "r%d: %s access with unbounded offset or size",
			     regno, rg->what);
	*lo = fixed + r->v.smin;
	*hi = fixed + r->v.smax + (int64_t)size;
	if (*lo >= rg->lo && *hi <= rg->hi)
		return 0;
	if (r->type == REG_PTR_MAP_VALUE)
		snprintf(what, sizeof(what), "map value of '%s'",
			 v->maps[r->map].name ? v->maps[r->map].name : "?");
	else
		snprintf(what, sizeof(what), "%s", rg->what);
	if (*lo + (int64_t)size == *hi)
		return vfail(v, "out-of-bounds access to %s: off %" PRId64
			     " size %" PRIu64 " (%s is %" PRId64 " bytes)",
			     what, *lo, size, rg->what, rg->hi - rg->lo);
	return vfail(v, "out-of-bounds access to %s: off %" PRId64 "..%"
		     PRId64 " size %" PRIu64 " (%s is %" PRId64 " bytes)",
		     what, *lo, *hi - (int64_t)size, size, rg->what,
		     rg->hi - rg->lo);
}

static int check_alignment(struct verifier *v, int regno,
			   const struct region *rg, int32_t off, uint32_t size)
{
	const struct reg *r = &cur_regs(v)[regno];
	uint64_t fixed = (uint64_t)((int64_t)r->off + off);

	if (!rg->aligned || size <= 1)
		return 0;
	/* The sum, not each part: off 4 plus a multiple of 8 plus 4 is
	 * aligned to 8. */
	if (!tnum_is_aligned(tnum_add(tnum_const(fixed), r->v.t), size))
		return vfail(v, "misaligned %s access: off %" PRId64 " size %"
			     PRIu32 " (GPU memory accesses must be naturally "
			     "aligned)", rg->what, (int64_t)fixed, size);
	return 0;
}

/* Record how deep below its frame pointer a function's stack reaches. */
void track_stack_depth(struct verifier *v, const struct reg *ptr, int64_t low)
{
	struct subprog *sp;

	sp = &v->subprogs[v->cur->frames[ptr->frameno]->subprog];
	if (-low > (int64_t)sp->stack_depth)
		sp->stack_depth = (uint32_t)-low;
}

static struct frame *ptr_frame(struct verifier *v, const struct reg *ptr)
{
	return v->cur->frames[ptr->frameno];
}

/* Slot and byte of the stack byte at @fpoff (< 0); NULL if never grown. */
static struct slot *byte_slot(struct frame *f, int64_t fpoff, int *byte,
			      bool grow)
{
	uint32_t index = (uint32_t)((-fpoff - 1) / 8);

	*byte = (int)(fpoff + 8 * (int64_t)(index + 1));
	if (index >= f->nslots && !grow)
		return NULL;
	return stack_slot(f, index);
}

/* The spill starting at byte @b is gone; its bytes stay written. */
static void forget_spill(struct slot *s, int b)
{
	for (int o = b; o < b + s->spill_size[b]; o++)
		s->kind[o] = SB_MISC;
	s->spill_size[b] = 0;
	reg_not_init(&s->spill[b]);
}

/* Forget every spill with a byte in [lo, hi). */
static int forget_spills(struct frame *f, int64_t lo, int64_t hi)
{
	for (int64_t o = lo; o < hi; o++) {
		int b, start;
		struct slot *s = byte_slot(f, o, &b, false);

		if (s && (start = slot_spill_start(s, b)) >= 0)
			forget_spill(s, start);
	}
	return 0;
}

/* A value kept whole in a slot: 8 bytes, or the low 1, 2 or 4 of a
 * scalar, naturally aligned. */
static bool spillable(const struct reg *val, int64_t lo, uint32_t size)
{
	if (!val || !size || (lo & (size - 1)))
		return false;
	return size == 8 || val->type == REG_SCALAR;
}

static int stack_write(struct verifier *v, struct frame *f, int64_t lo,
		       int64_t hi, uint32_t size, bool exact,
		       struct reg *val)
{
	bool spill = spillable(val, lo, size);
	struct slot *s;
	int b;

	forget_spills(f, lo, hi);
	if (!exact)
		return 0; /* bytes may or may not have been written */
	s = byte_slot(f, lo, &b, true);
	if (!s)
		return vnomem();
	if (spill) {
		if (val->type == REG_SCALAR && !val->id &&
		    !sc_is_const(&val->v) && size == 8)
			val->id = new_id(v); /* the fill is a copy */
		s->spill[b] = *val;
		if (size < 8) {
			sc_trunc(&s->spill[b].v, size * 8);
			if (!sc_equal(&s->spill[b].v, &val->v))
				s->spill[b].id = 0;
		}
		s->spill_size[b] = (uint8_t)size;
	}
	for (int64_t o = lo; o < hi; o++) {
		s = byte_slot(f, o, &b, true);
		if (!s)
			return vnomem();
		s->kind[b] = spill ? SB_SPILL : SB_MISC;
	}
	return 0;
}

static int uninit_stack(struct verifier *v, int64_t lo, int64_t hi,
			int64_t first)
{
	if (hi - lo == 1)
		return vfail(v, "reading uninitialised stack byte fp%" PRId64,
			     lo);
	return vfail(v, "reading uninitialised stack bytes fp%" PRId64
		     "..fp%" PRId64 " (fp%" PRId64 " never written)", lo,
		     hi - 1, first);
}

/* Every byte in [lo, hi) written before; pointer bytes reported too. */
static int stack_initialised(struct verifier *v, struct frame *f, int64_t lo,
			     int64_t hi, bool *has_ptr)
{
	*has_ptr = false;
	for (int64_t o = lo; o < hi; o++) {
		int b;
		struct slot *s = byte_slot(f, o, &b, false);

		if (!s || s->kind[b] == SB_INVALID)
			return uninit_stack(v, lo, hi, o);
		/* The parameters' address is no secret: a number to helpers.
		 * Pointers are spilled whole, at byte 0. */
		if (s->kind[b] == SB_SPILL && s->spill_size[0] == 8 &&
		    s->spill[0].type != REG_SCALAR &&
		    s->spill[0].type != REG_PTR_PARAMS)
			*has_ptr = true;
	}
	return 0;
}

/* The value a load of @size bytes at @lo gets, if a spill gives it whole. */
static bool fill_from_spill(struct frame *f, int64_t lo, uint32_t size,
			    struct reg *out)
{
	int b;
	struct slot *s = byte_slot(f, lo, &b, false);

	if (!s || !s->spill_size[b] || size > s->spill_size[b])
		return false;
	if (size == s->spill_size[b]) {
		*out = s->spill[b];
		return true;
	}
	if (s->spill[b].type != REG_SCALAR)
		return false;
	/* little-endian: the low bytes of the value */
	*out = s->spill[b];
	out->id = 0;
	sc_trunc(&out->v, size * 8);
	return true;
}

static void loaded_scalar(struct reg *out, uint32_t size)
{
	struct scalar s;

	sc_unknown_bits(&s, size * 8);
	reg_scalar(out, &s);
}

static void extend(struct reg *out, uint32_t size, bool sext)
{
	if (out->type != REG_SCALAR || size == 8)
		return;
	if (sext) {
		sc_sext(&out->v, size * 8);
		out->id = 0;
	}
}

static int stack_read(struct verifier *v, struct frame *f, int64_t lo,
		      int64_t hi, uint32_t size, bool exact, struct reg *out)
{
	bool has_ptr;
	int err = stack_initialised(v, f, lo, hi, &has_ptr);

	if (err)
		return err;
	if (exact && fill_from_spill(f, lo, size, out))
		return 0;
	/* Part of a spilled pointer reads as a number. */
	loaded_scalar(out, size);
	return 0;
}

static int stack_atomic(struct verifier *v, struct frame *f, int64_t lo,
			int64_t hi)
{
	bool has_ptr;
	int err = stack_initialised(v, f, lo, hi, &has_ptr);

	if (err)
		return err;
	if (has_ptr)
		return vfail(v, "atomic operation on a spilled pointer");
	return forget_spills(f, lo, hi);
}

bool stack_const(struct verifier *v, int regno, uint32_t size, uint64_t *val)
{
	const struct reg *r = &cur_regs(v)[regno];
	struct reg out;

	if (r->type != REG_PTR_STACK || !sc_is_const(&r->v) ||
	    r->frameno >= v->cur->depth ||
	    !fill_from_spill(ptr_frame(v, r),
			     (int64_t)r->off + (int64_t)r->v.t.value, size, &out))
		return false;
	return out.type == REG_SCALAR && reg_const_value(&out, val);
}

/*
 * A load of ctx->params in an entry or exit probe gives the pointer to the
 * kernel's parameters; every other ctx load a number.
 */
static bool loads_params(const struct verifier *v, const struct reg *ptr,
			 int64_t lo, uint32_t size)
{
	return ptr->type == REG_PTR_CTX && size == 8 &&
	       lo == offsetof(struct egpu_kernel_ctx, params) &&
	       (v->opts.attach == EGPU_ATTACH_ENTRY ||
		v->opts.attach == EGPU_ATTACH_EXIT);
}

/* Parameter bytes below @hi may be read: every kernel must have them. */
static void track_params_reach(struct verifier *v, const struct reg *ptr,
			       int64_t hi)
{
	if (ptr->type == REG_PTR_PARAMS && hi > (int64_t)v->stats.params_reach)
		v->stats.params_reach = (uint32_t)hi;
}

/*
 * One load, store or atomic of @size bytes at @off from the pointer in
 * @regno. Stores give @val (NULL: data of unknown value); loads fill @out.
 */
static int access_mem(struct verifier *v, int regno, int32_t off,
		      uint32_t size, enum access acc, struct reg *val,
		      int valno, struct reg *out, bool sext)
{
	struct reg ptr;
	struct region rg;
	int64_t lo, hi;
	bool exact;
	int err;

	err = pointer_region(v, regno, acc, &rg);
	if (!err)
		err = check_bounds(v, regno, &rg, off, size, &lo, &hi);
	if (!err)
		err = check_alignment(v, regno, &rg, off, size);
	if (err)
		return err;
	ptr = cur_regs(v)[regno];
	exact = sc_is_const(&ptr.v);
	track_params_reach(v, &ptr, hi);
	if (ptr.type == REG_PTR_STACK) {
		struct frame *f = ptr_frame(v, &ptr);

		track_stack_depth(v, &ptr, lo);
		/* Part of the parameters' address is a number (alu.c). */
		if (val && val->type == REG_PTR_PARAMS &&
		    (!exact || size != 8 || (lo & 7)))
			reg_unknown(val);
		if (val && reg_is_ptr(val) && (!exact || size != 8 || (lo & 7)))
			return vfail(v, "r%d: a pointer must be stored whole, "
				     "at a constant 8-byte aligned stack "
				     "offset", valno);
		if (acc == ACCESS_WRITE)
			return stack_write(v, f, lo, hi, size, exact, val);
		if (acc == ACCESS_ATOMIC)
			return stack_atomic(v, f, lo, hi);
		err = stack_read(v, f, lo, hi, size, exact, out);
	} else if (acc == ACCESS_READ && loads_params(v, &ptr, lo, size)) {
		*out = (struct reg){ .type = REG_PTR_PARAMS, .origin = -1 };
		sc_const(&out->v, 0);
	} else if (acc == ACCESS_READ) {
		loaded_scalar(out, size);
	}
	if (!err && acc == ACCESS_READ)
		extend(out, size, sext);
	return err;
}

static uint32_t insn_size(const struct bpf_insn *insn)
{
	static const uint32_t bytes[] = { 4, 2, 1, 8 };

	return bytes[BPF_SIZE(insn->code) >> 3];
}

int check_load(struct verifier *v, const struct bpf_insn *insn)
{
	bool sext = BPF_MODE(insn->code) == BPF_MEMSX;
	uint32_t size = insn_size(insn);
	struct reg out;
	int err;

	if (BPF_MODE(insn->code) != BPF_MEM && !sext)
		return vfail(v, "unsupported load mode %#x",
			     BPF_MODE(insn->code));
	if (sext && size == 8)
		return vfail(v, "sign-extending load of 8 bytes");
	err = reg_writable(v, insn->dst_reg);
	if (!err)
		err = access_mem(v, insn->src_reg, insn->off, size,
				 ACCESS_READ, NULL, 0, &out, sext);
	if (err)
		return err;
	out.origin = v->cur->insn;
	cur_regs(v)[insn->dst_reg] = out;
	return 0;
}

int check_store(struct verifier *v, const struct bpf_insn *insn)
{
	struct reg val;
	int err;

	if (BPF_MODE(insn->code) != BPF_MEM)
		return vfail(v, "unsupported store mode %#x",
			     BPF_MODE(insn->code));
	if (BPF_CLASS(insn->code) == BPF_ST) {
		reg_const(&val, (uint64_t)(int64_t)insn->imm);
	} else {
		err = reg_readable(v, insn->src_reg);
		if (err)
			return err;
		val = cur_regs(v)[insn->src_reg];
	}
	err = access_mem(v, insn->dst_reg, insn->off, insn_size(insn),
			 ACCESS_WRITE, &val, insn->src_reg, NULL, false);
	/* A spill may have linked the stored register to its copy. */
	if (!err && BPF_CLASS(insn->code) == BPF_STX &&
	    val.id != cur_regs(v)[insn->src_reg].id &&
	    val.type == REG_SCALAR)
		cur_regs(v)[insn->src_reg].id = val.id;
	return err;
}

static bool atomic_op_known(int32_t imm)
{
	switch (imm & ~BPF_FETCH) {
	case BPF_ADD:
	case BPF_OR:
	case BPF_AND:
	case BPF_XOR:
		return true;
	default:
		return imm == BPF_XCHG || imm == BPF_CMPXCHG;
	}
}

int check_atomic(struct verifier *v, const struct bpf_insn *insn)
{
	uint32_t size = insn_size(insn);
	int result = insn->imm == BPF_CMPXCHG ? 0 : insn->src_reg;
	struct reg out;
	int err;

	if (size != 4 && size != 8)
		return vfail(v, "atomic operations take 4 or 8 bytes");
	if (!atomic_op_known(insn->imm))
		return vfail(v, "unknown atomic operation %#x", insn->imm);
	err = reg_readable(v, insn->src_reg);
	if (!err && insn->imm == BPF_CMPXCHG)
		err = reg_readable(v, 0);
	if (err)
		return err;
	if (cur_regs(v)[insn->src_reg].type != REG_SCALAR ||
	    (insn->imm == BPF_CMPXCHG && cur_regs(v)[0].type != REG_SCALAR))
		return vfail(v, "atomic operand is a pointer (%s): it would "
			     "leak an address",
			     reg_type_name(&cur_regs(v)[insn->src_reg]));
	if ((insn->imm & BPF_FETCH) && (err = reg_writable(v, result)))
		return err;
	err = access_mem(v, insn->dst_reg, insn->off, size, ACCESS_ATOMIC,
			 NULL, 0, NULL, false);
	if (err || !(insn->imm & BPF_FETCH))
		return err;
	loaded_scalar(&out, size);
	out.origin = v->cur->insn;
	cur_regs(v)[result] = out;
	return 0;
}

/*
 * A helper's memory argument. Stack bytes must be initialised to be read;
 * bytes a helper writes become initialised where the size guarantees it.
 */
int check_mem_arg(struct verifier *v, int regno, const struct scalar *size,
		  enum access acc, bool aligned8)
{
	struct region rg;
	struct reg ptr;
	int64_t lo, hi;
	int err;

	err = pointer_region(v, regno, acc, &rg);
	if (err)
		return err;
	if (size->umax > (uint64_t)MAX_OFFSET)
		return vfail(v, "r%d: size of the memory is not bounded "
			     "(umax %" PRIu64 ")", regno + 1, size->umax);
	if (size->umax == 0)
		return 0;
	err = check_bounds(v, regno, &rg, 0, size->umax, &lo, &hi);
	if (!err && aligned8)
		err = check_alignment(v, regno, &rg, 0, 8);
	if (err)
		return err;
	ptr = cur_regs(v)[regno];
	track_params_reach(v, &ptr, hi);
	if (ptr.type != REG_PTR_STACK)
		return 0;
	track_stack_depth(v, &ptr, lo);
	if (acc == ACCESS_READ) {
		bool has_ptr;

		err = stack_initialised(v, ptr_frame(v, &ptr), lo, hi,
					&has_ptr);
		if (!err && has_ptr)
			return vfail(v, "r%d: memory passed to the helper "
				     "holds a spilled pointer", regno);
		return err;
	}
	/* The helper writes exactly @size bytes: the smallest is certain. */
	err = stack_write(v, ptr_frame(v, &ptr), lo, hi, 0, false, NULL);
	if (err || !sc_is_const(&ptr.v) || !size->umin)
		return err;
	return stack_write(v, ptr_frame(v, &ptr), lo, lo + (int64_t)size->umin,
			   (uint32_t)size->umin, true, NULL);
}
