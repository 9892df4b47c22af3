/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "egpu/ctx.h"
#include "ref_interp.h"
#include "ref_isa.h"
#include "verifier/verifier.h"

#define MAX_STEPS 20000000ULL
#define MAX_RECORDS 16
#define MAP_HANDLE(i) (0xa5a5000000000000ULL | (uint64_t)(i))
#define CTX_KERNEL sizeof(struct egpu_kernel_ctx)
#define CTX_MEM sizeof(struct egpu_mem_ctx)

struct ref_map {
	const struct map_spec *spec;
	uint32_t stride;   /* value_size rounded up to 8 */
	uint8_t *values;   /* max_entries slots */
	uint8_t *keys;     /* hash maps */
	uint8_t *used;
};

struct frame {
	uint64_t regs[BPF_REG_COUNT];
	uint16_t init;     /* bit per initialised register */
	size_t ret;        /* instruction after the call */
	uint32_t depth;    /* bytes used below r10 */
	uint8_t *stack;    /* 512 bytes, r10 = stack + 512 */
	uint8_t *shadow;   /* 1: written */
};

struct record {
	uint8_t *mem;
	uint32_t size;
};

struct ref_env {
	uint64_t max_steps;
	const struct map_spec *specs;
	size_t map_cnt;
	struct ref_map *maps;
	int attach, abi;
	uint32_t ctx_size;
	bool ctx_writable;
	uint8_t *ctx;
	uint8_t *initial_ctx;
	/* entry/exit probes: the kernel's parameters at ctx->params, as
	 * many bytes as the verifier allows (the instrumenter's per-kernel
	 * check is not modelled) */
	uint8_t *params;
	uint64_t rng;
	struct frame frames[BPF_MAX_CALL_DEPTH];
	uint8_t stacks[BPF_MAX_CALL_DEPTH][BPF_STACK_SIZE];
	uint8_t shadows[BPF_MAX_CALL_DEPTH][BPF_STACK_SIZE];
	int depth;
	struct record records[MAX_RECORDS];
	int nrecords;
	bool random;
	unsigned int input_mode;
	char violation[256];
};

static uint64_t rnd(struct ref_env *e)
{
	e->rng ^= e->rng << 13;
	e->rng ^= e->rng >> 7;
	e->rng ^= e->rng << 17;
	return e->rng;
}

/*
 * Inputs that reach both sides of equality tests: runs alternate between
 * all zeros, mostly zeros, small numbers and anything.
 */
static void fill_random(struct ref_env *e, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (e->input_mode) {
		case 0:
			p[i] = 0;
			break;
		case 1:
			p[i] = (uint8_t)(rnd(e) % 4 ? 0 : rnd(e) % 8);
			break;
		case 2:
			p[i] = (uint8_t)(rnd(e) % 4 ? rnd(e) % 40 : rnd(e));
			break;
		default:
			p[i] = (uint8_t)rnd(e);
			break;
		}
	}
}

static int violate(struct ref_env *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->violation, sizeof(e->violation), fmt, ap);
	va_end(ap);
	return -1;
}

struct ref_env *ref_env_new(const struct map_spec *maps, size_t map_cnt,
			    int attach, uint32_t ctx_size, bool ctx_writable,
			    int abi, uint64_t seed)
{
	struct ref_env *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->max_steps = MAX_STEPS;
	e->specs = maps;
	e->map_cnt = map_cnt;
	e->attach = attach;
	e->abi = abi;
	e->ctx_size = attach == EGPU_ATTACH_NONE ? ctx_size :
		      attach == EGPU_ATTACH_MEM ? CTX_MEM : CTX_KERNEL;
	e->ctx_writable = attach == EGPU_ATTACH_NONE && ctx_writable;
	e->rng = seed | 1;
	e->ctx = e->ctx_size ? aligned_alloc(8, (e->ctx_size + 7) & ~7u) : NULL;
	e->initial_ctx = e->ctx_size ? malloc(e->ctx_size) : NULL;
	if (attach == EGPU_ATTACH_ENTRY || attach == EGPU_ATTACH_EXIT)
		e->params = aligned_alloc(8, VERIFIER_PARAMS_MAX + 4);
	e->maps = calloc(map_cnt ? map_cnt : 1, sizeof(*e->maps));
	for (size_t i = 0; i < map_cnt; i++) {
		struct ref_map *m = &e->maps[i];
		uint32_t n = maps[i].max_entries ? maps[i].max_entries : 1;

		m->spec = &maps[i];
		m->stride = (maps[i].value_size + 7) & ~7u;
		m->values = aligned_alloc(8, (size_t)n * m->stride + 8);
		m->keys = calloc(n, maps[i].key_size + 1);
		m->used = calloc(n, 1);
	}
	return e;
}

void ref_env_set_step_limit(struct ref_env *e, uint64_t steps)
{
	e->max_steps = steps;
}

void ref_env_free(struct ref_env *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->map_cnt; i++) {
		free(e->maps[i].values);
		free(e->maps[i].keys);
		free(e->maps[i].used);
	}
	for (int i = 0; i < e->nrecords; i++)
		free(e->records[i].mem);
	free(e->maps);
	free(e->ctx);
	free(e->initial_ctx);
	free(e->params);
	free(e);
}

const char *ref_env_violation(const struct ref_env *e)
{
	return e->violation;
}

bool ref_env_random(const struct ref_env *e)
{
	return e->random;
}

const uint8_t *ref_env_initial_ctx(const struct ref_env *e)
{
	return e->initial_ctx;
}

static bool is_array(uint32_t type)
{
	return type != EGPU_MAP_HASH;
}

/* Fresh inputs for one run: ctx bytes, map contents. */
static void reset_inputs(struct ref_env *e)
{
	e->input_mode = (e->input_mode + 1) % 4;
	if (e->ctx) {
		fill_random(e, e->ctx, e->ctx_size);
		if (e->params) {
			uint64_t p = (uint64_t)(uintptr_t)e->params;

			fill_random(e, e->params, VERIFIER_PARAMS_MAX);
			memcpy(e->ctx + offsetof(struct egpu_kernel_ctx, params), &p, sizeof(p));
		}
		memcpy(e->initial_ctx, e->ctx, e->ctx_size);
	}
	for (size_t i = 0; i < e->map_cnt; i++) {
		struct ref_map *m = &e->maps[i];
		uint32_t n = m->spec->max_entries ? m->spec->max_entries : 1;
		uint32_t ks = m->spec->key_size;

		if (m->spec->init)
			memcpy(m->values, m->spec->init,
			       m->spec->init_len < m->spec->value_size ?
			       m->spec->init_len : m->spec->value_size);
		else
			fill_random(e, m->values, (size_t)n * m->stride);
		memset(m->used, 0, n);
		for (uint32_t k = 0; ks && k < n && k < 4; k++) {
			m->used[k] = 1;
			memset(m->keys + (size_t)k * (ks + 1), 0, ks);
			memcpy(m->keys + (size_t)k * (ks + 1), &k,
			       ks < 4 ? ks : 4);
		}
	}
	for (int i = 0; i < e->nrecords; i++)
		free(e->records[i].mem);
	e->nrecords = 0;
	e->random = false;
}

/* Where an access lands: 0 inside a region that allows it, else -1. */
struct region {
	uint8_t *base;
	uint64_t size;
	bool writable, aligned;
	struct frame *frame; /* stack */
};

static bool find_map_region(struct ref_env *e, uint64_t addr,
			    struct region *r)
{
	for (size_t i = 0; i < e->map_cnt; i++) {
		struct ref_map *m = &e->maps[i];
		uint32_t n = m->spec->max_entries ? m->spec->max_entries : 1;
		uint64_t base = (uint64_t)(uintptr_t)m->values;

		if (addr < base || addr >= base + (uint64_t)n * m->stride)
			continue;
		r->base = m->values + (addr - base) / m->stride * m->stride;
		r->size = m->spec->value_size;
		r->writable = !m->spec->readonly;
		r->aligned = true;
		return true;
	}
	return false;
}

static bool find_region(struct ref_env *e, uint64_t addr, struct region *r)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < e->depth; i++) {
		uint64_t base = (uint64_t)(uintptr_t)e->frames[i].stack;

		if (addr >= base && addr < base + BPF_STACK_SIZE) {
			*r = (struct region){ e->frames[i].stack, BPF_STACK_SIZE,
					      true, true, &e->frames[i] };
			return true;
		}
	}
	if (e->ctx && addr >= (uint64_t)(uintptr_t)e->ctx &&
	    addr < (uint64_t)(uintptr_t)e->ctx + e->ctx_size) {
		*r = (struct region){ e->ctx, e->ctx_size, e->ctx_writable,
				      e->attach != EGPU_ATTACH_NONE, NULL };
		return true;
	}
	if (e->params && addr >= (uint64_t)(uintptr_t)e->params &&
	    addr < (uint64_t)(uintptr_t)e->params + VERIFIER_PARAMS_MAX) {
		*r = (struct region){ e->params, VERIFIER_PARAMS_MAX, false,
				      true, NULL };
		return true;
	}
	for (int i = 0; i < e->nrecords; i++) {
		uint64_t base = (uint64_t)(uintptr_t)e->records[i].mem;

		if (addr >= base && addr < base + e->records[i].size) {
			*r = (struct region){ e->records[i].mem,
					      e->records[i].size, true, true,
					      NULL };
			return true;
		}
	}
	return find_map_region(e, addr, r);
}

bool ref_env_is_address(struct ref_env *e, uint64_t value)
{
	struct region r;

	if (find_region(e, value, &r))
		return true;
	/* a frame pointer (r10) points just past its stack */
	for (int i = 0; i < e->depth; i++)
		if (value == (uint64_t)(uintptr_t)e->frames[i].stack + BPF_STACK_SIZE)
			return true;
	return false;
}

/* Check @size bytes at @addr; @read: stack bytes must have been written. */
static int mem_check(struct ref_env *e, uint64_t addr, uint64_t size,
		     bool write, bool read)
{
	struct region r;
	uint64_t off;

	if (!size)
		return 0;
	if (!find_region(e, addr, &r))
		return violate(e, "access to %#llx (%llu bytes) outside every "
			       "region", (unsigned long long)addr,
			       (unsigned long long)size);
	off = addr - (uint64_t)(uintptr_t)r.base;
	if (off + size > r.size)
		return violate(e, "access of %llu bytes at offset %llu of a "
			       "%llu-byte region", (unsigned long long)size,
			       (unsigned long long)off,
			       (unsigned long long)r.size);
	if (write && !r.writable)
		return violate(e, "write into a read-only region");
	if (r.aligned && size <= 8 && (addr & (size - 1)) &&
	    !(size & (size - 1)))
		return violate(e, "misaligned access of %llu bytes at offset "
			       "%llu", (unsigned long long)size,
			       (unsigned long long)off);
	if (!r.frame)
		return 0;
	if (BPF_STACK_SIZE - off > r.frame->depth)
		r.frame->depth = (uint32_t)(BPF_STACK_SIZE - off);
	for (uint64_t i = 0; read && i < size; i++)
		if (!r.frame->shadow[off + i])
			return violate(e, "read of unwritten stack byte "
				       "fp-%llu", (unsigned long long)
				       (BPF_STACK_SIZE - off - i));
	if (write)
		memset(r.frame->shadow + off, 1, size);
	return 0;
}

static struct frame *top(struct ref_env *e)
{
	return &e->frames[e->depth - 1];
}

static int reg_get(struct ref_env *e, int r, uint64_t *v)
{
	if (!(top(e)->init & (1u << r)))
		return violate(e, "read of unwritten register r%d", r);
	*v = top(e)->regs[r];
	return 0;
}

static void reg_set(struct ref_env *e, int r, uint64_t v)
{
	top(e)->regs[r] = v;
	top(e)->init |= (uint16_t)(1u << r);
}

static int push_frame(struct ref_env *e, size_t ret)
{
	struct frame *f;

	if (e->depth == BPF_MAX_CALL_DEPTH)
		return violate(e, "call depth over %d", BPF_MAX_CALL_DEPTH);
	f = &e->frames[e->depth];
	memset(f, 0, sizeof(*f));
	f->stack = e->stacks[e->depth];
	f->shadow = e->shadows[e->depth];
	memset(f->shadow, 0, BPF_STACK_SIZE);
	f->ret = ret;
	f->regs[10] = (uint64_t)(uintptr_t)(f->stack + BPF_STACK_SIZE);
	f->init = 1u << 10;
	e->depth++;
	return 0;
}

/* The stack of the current call chain, in 8-byte units like the JIT's. */
static int check_chain(struct ref_env *e)
{
	uint32_t total = 0;

	for (int i = 0; i < e->depth; i++)
		total += (e->frames[i].depth + 7) & ~7u;
	if (total > BPF_STACK_SIZE)
		return violate(e, "call chain uses %u bytes of stack", total);
	return 0;
}

static uint64_t *map_lookup(struct ref_env *e, struct ref_map *m,
			    const uint8_t *key)
{
	uint32_t n = m->spec->max_entries ? m->spec->max_entries : 1;
	uint32_t ks = m->spec->key_size;

	if (is_array(m->spec->type)) {
		uint32_t k;

		memcpy(&k, key, 4);
		return k < n ? (uint64_t *)(m->values + (size_t)k * m->stride) :
		       NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		if (m->used[i] && !memcmp(m->keys + (size_t)i * (ks + 1), key, ks))
			return (uint64_t *)(m->values + (size_t)i * m->stride);
	(void)e;
	return NULL;
}

static struct ref_map *map_arg(struct ref_env *e, uint64_t handle)
{
	uint64_t i = handle & 0xffff;

	if ((handle & ~0xffffULL) != MAP_HANDLE(0) || i >= e->map_cnt)
		return NULL;
	return &e->maps[i];
}

static int helper_map(struct ref_env *e, int32_t id, uint64_t *a,
		      uint64_t *ret)
{
	struct ref_map *m = map_arg(e, a[1]);
	uint8_t *key = (uint8_t *)(uintptr_t)a[2];
	uint64_t *v;

	if (!m)
		return violate(e, "map helper without a map");
	if (mem_check(e, a[2], m->spec->key_size, false, true))
		return -1;
	v = map_lookup(e, m, key);
	if (id == 1) {
		*ret = (uint64_t)(uintptr_t)v;
	} else if (id == 2) {
		if (mem_check(e, a[3], m->spec->value_size, false, true))
			return -1;
		if (v)
			memcpy(v, (void *)(uintptr_t)a[3], m->spec->value_size);
		*ret = v ? 0 : (uint64_t)-7;
	} else {
		*ret = 0;
	}
	return 0;
}

static int helper_ring(struct ref_env *e, int32_t id, uint64_t *a,
		       uint64_t *ret)
{
	*ret = 0;
	if (id == 131) {
		struct record *r;

		if (rnd(e) % 4 == 0 || e->nrecords == MAX_RECORDS)
			return 0;
		r = &e->records[e->nrecords++];
		r->size = (uint32_t)a[2];
		r->mem = aligned_alloc(8, (r->size + 7) & ~7u);
		*ret = (uint64_t)(uintptr_t)r->mem;
		return 0;
	}
	for (int i = 0; i < e->nrecords; i++) {
		if ((uint64_t)(uintptr_t)e->records[i].mem != a[1])
			continue;
		free(e->records[i].mem);
		e->records[i] = e->records[--e->nrecords];
		return 0;
	}
	return violate(e, "submit or discard of %#llx, not a live record",
		       (unsigned long long)a[1]);
}

static int helper_str(struct ref_env *e, uint64_t s)
{
	for (uint64_t p = s;; p++) {
		if (mem_check(e, p, 1, false, true))
			return -1;
		if (!*(uint8_t *)(uintptr_t)p)
			return 0;
	}
}

static int helper(struct ref_env *e, int32_t id, uint64_t *ret)
{
	uint64_t a[6] = { 0 };
	struct frame *f = top(e);

	for (int i = 1; i <= 5; i++)
		a[i] = f->regs[i];
	*ret = 0;
	if (e->abi == EGPU_HELPERS_CONFORMANCE) {
		if (id != 5)
			return violate(e, "unknown helper %d", id);
		return reg_get(e, 1, ret);
	}
	switch (id) {
	case 1:
	case 2:
	case 3:
		return helper_map(e, id, a, ret);
	case 6:
		return mem_check(e, a[1], a[2], false, true);
	case 25:
		return mem_check(e, a[4], a[5], false, true);
	case 130:
		return mem_check(e, a[2], a[3], false, true);
	case 131:
	case 132:
	case 133:
		e->random = true;
		return helper_ring(e, id, a, ret);
	case 501:
		return helper_str(e, a[1]);
	case 503:
	case 504:
	case 505:
	case 508:
		for (int i = 1; i <= 3; i++) {
			if (mem_check(e, a[i], 8, true, false))
				return -1;
			*(uint64_t *)(uintptr_t)a[i] = rnd(e) % 1024;
		}
		return 0;
	case 507:
		if (e->nrecords)
			return violate(e, "exit_thread with a live record");
		return 0;
	default:
		e->random = true;
		*ret = rnd(e) % 3 ? rnd(e) % 4096 * (rnd(e) % 2) : rnd(e);
		return 0;
	}
}

static void clobber_args(struct ref_env *e)
{
	top(e)->init &= (uint16_t)~0x3e;
}

static int exec_call(struct ref_env *e, const struct bpf_insn *insn,
		     size_t *pc, int32_t id)
{
	uint64_t ret;

	if (insn->src_reg == BPF_PSEUDO_CALL) {
		struct frame *caller = top(e);

		if (push_frame(e, *pc + 1))
			return -1;
		for (int r = 1; r <= 5; r++)
			top(e)->regs[r] = caller->regs[r];
		top(e)->init |= caller->init & 0x3e;
		*pc = *pc + 1 + insn->imm;
		return 1;
	}
	if (helper(e, id, &ret))
		return -1;
	clobber_args(e);
	reg_set(e, 0, ret);
	return 0;
}

/* 1: the program ended. */
static int exec_exit(struct ref_env *e, size_t *pc, uint64_t *r0)
{
	struct frame *f = top(e);
	uint64_t v = f->regs[0];
	bool init = f->init & 1;

	if (check_chain(e))
		return -1;
	if (e->depth == 1) {
		if (!init)
			return violate(e, "exit with r0 unwritten");
		if (e->nrecords)
			return violate(e, "exit with a live ring record");
		*r0 = v;
		return 1;
	}
	*pc = f->ret;
	e->depth--;
	f = top(e);
	clobber_args(e);
	f->regs[0] = v;
	f->init = (uint16_t)(init ? f->init | 1 : f->init & ~1u);
	return 0;
}

static uint32_t size_of(uint8_t code)
{
	static const uint32_t bytes[] = { 4, 2, 1, 8 };

	return bytes[BPF_SIZE(code) >> 3];
}

/* Direct runs may access their memory unaligned: go through memcpy. */
static uint64_t load(uint64_t addr, uint32_t size)
{
	uint64_t v = 0;

	memcpy(&v, (void *)(uintptr_t)addr, size); /* little-endian host */
	return v;
}

static void store(uint64_t addr, uint32_t size, uint64_t v)
{
	memcpy((void *)(uintptr_t)addr, &v, size);
}

static int exec_atomic(struct ref_env *e, const struct bpf_insn *insn)
{
	uint32_t size = size_of(insn->code);
	uint64_t base = 0, src = 0, old, r0 = 0, addr, mask;
	uint8_t op = (uint8_t)(insn->imm & 0xf0);

	mask = size == 8 ? UINT64_MAX : 0xffffffffULL;
	if (reg_get(e, insn->dst_reg, &base) || reg_get(e, insn->src_reg, &src))
		return -1;
	if (insn->imm == BPF_CMPXCHG && reg_get(e, 0, &r0))
		return -1;
	addr = base + (int64_t)insn->off;
	if (mem_check(e, addr, size, true, true))
		return -1;
	old = load(addr, size);
	if (insn->imm == BPF_XCHG)
		store(addr, size, src);
	else if (insn->imm == BPF_CMPXCHG) {
		if ((old & mask) == (r0 & mask))
			store(addr, size, src);
	} else
		store(addr, size, ref_alu64(op, old, src, false));
	if (insn->imm == BPF_CMPXCHG)
		reg_set(e, 0, old);
	else if (insn->imm & BPF_FETCH)
		reg_set(e, insn->src_reg, old);
	return 0;
}

static int exec_mem(struct ref_env *e, const struct bpf_insn *insn)
{
	uint32_t size = size_of(insn->code);
	uint64_t base = 0, v = (uint64_t)(int64_t)insn->imm, addr;
	int base_reg = BPF_CLASS(insn->code) == BPF_LDX ? insn->src_reg :
		       insn->dst_reg;

	if (BPF_MODE(insn->code) == BPF_ATOMIC)
		return exec_atomic(e, insn);
	if (reg_get(e, base_reg, &base))
		return -1;
	addr = base + (int64_t)insn->off;
	if (BPF_CLASS(insn->code) == BPF_LDX) {
		if (mem_check(e, addr, size, false, true))
			return -1;
		v = load(addr, size);
		if (BPF_MODE(insn->code) == BPF_MEMSX)
			v = ref_sext(v, size * 8);
		reg_set(e, insn->dst_reg, v);
		return 0;
	}
	if (BPF_CLASS(insn->code) == BPF_STX && reg_get(e, insn->src_reg, &v))
		return -1;
	if (mem_check(e, addr, size, true, false))
		return -1;
	store(addr, size, v);
	return 0;
}

static int exec_alu(struct ref_env *e, const struct bpf_insn *insn)
{
	bool wide = BPF_CLASS(insn->code) == BPF_ALU64;
	uint8_t op = BPF_OP(insn->code);
	uint64_t a = 0, b = (uint64_t)(int64_t)insn->imm, r;

	if (op != BPF_MOV && reg_get(e, insn->dst_reg, &a))
		return -1;
	if (BPF_SRC(insn->code) == BPF_X && op != BPF_END && op != BPF_NEG &&
	    reg_get(e, insn->src_reg, &b))
		return -1;
	if (op == BPF_END) {
		if (!wide && BPF_SRC(insn->code) == BPF_TO_LE)
			r = insn->imm == 64 ? a : a & ((1ULL << insn->imm) - 1);
		else
			r = ref_bswap(a, insn->imm);
	} else if (op == BPF_MOV && insn->off) {
		r = ref_sext(b, (unsigned int)insn->off);
		if (!wide)
			r = (uint32_t)r;
	} else if (op == BPF_NEG) {
		r = wide ? -a : (uint32_t)-a;
	} else if (wide) {
		r = ref_alu64(op, a, b, insn->off == 1);
	} else {
		r = op == BPF_MOV ? (uint32_t)b :
		    ref_alu32(op, a, b, insn->off == 1);
	}
	reg_set(e, insn->dst_reg, r);
	return 0;
}

static bool is_address(struct ref_env *e, uint64_t v)
{
	struct region r;

	/* r10 and pointers one past an object sit at a region's end. */
	return find_region(e, v, &r) || (v && find_region(e, v - 1, &r));
}

/* 1: jump taken. */
static int exec_cond(struct ref_env *e, const struct bpf_insn *insn)
{
	uint64_t a = 0, b = (uint64_t)(int64_t)insn->imm;

	if (reg_get(e, insn->dst_reg, &a))
		return -1;
	if (BPF_SRC(insn->code) == BPF_X && reg_get(e, insn->src_reg, &b))
		return -1;
	/* Comparing addresses depends on where memory happens to be: the
	 * back ends' runs place it elsewhere, so r0 is not comparable. */
	if (BPF_SRC(insn->code) == BPF_X && (is_address(e, a) || is_address(e, b)))
		e->random = true;
	return ref_cond(BPF_OP(insn->code), a, b,
			BPF_CLASS(insn->code) == BPF_JMP32);
}

static int exec_lddw(struct ref_env *e, const struct bpf_insn *insn)
{
	uint64_t v = (uint32_t)insn[0].imm | (uint64_t)(uint32_t)insn[1].imm << 32;

	if (insn->src_reg == BPF_PSEUDO_MAP_IDX)
		v = MAP_HANDLE(insn->imm);
	else if (insn->src_reg == BPF_PSEUDO_MAP_IDX_VALUE)
		v = (uint64_t)(uintptr_t)e->maps[insn->imm].values +
		    (int64_t)insn[1].imm;
	reg_set(e, insn->dst_reg, v);
	return 0;
}

/* One instruction; 1 when the program ended. */
static int step(struct ref_env *e, const struct bpf_insn *insns, size_t *pc,
		uint64_t *r0)
{
	const struct bpf_insn *insn = &insns[*pc];
	uint8_t op = BPF_OP(insn->code);
	int r;

	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		r = exec_alu(e, insn);
		break;
	case BPF_LDX:
	case BPF_ST:
	case BPF_STX:
		r = exec_mem(e, insn);
		break;
	case BPF_LD:
		r = exec_lddw(e, insn);
		*pc += 1;
		break;
	default:
		if (op == BPF_JA) {
			*pc += 1 + (BPF_CLASS(insn->code) == BPF_JMP32 ?
				    insn->imm : insn->off);
			return 0;
		}
		if (op == BPF_EXIT)
			return exec_exit(e, pc, r0);
		if (op == BPF_CALL) {
			uint64_t id = (uint64_t)insn->imm;

			if (BPF_SRC(insn->code) == BPF_X &&
			    reg_get(e, insn->dst_reg, &id))
				return -1;
			r = exec_call(e, insn, pc, (int32_t)id);
			if (r)
				return r < 0 ? r : 0;
			break;
		}
		r = exec_cond(e, insn);
		if (r < 0)
			return r;
		if (r)
			*pc += (size_t)(int64_t)insn->off;
		r = 0;
		break;
	}
	if (r)
		return r;
	*pc += 1;
	return 0;
}

int ref_run(struct ref_env *e, const struct bpf_insn *insns, size_t cnt,
	    uint64_t *r0)
{
	size_t pc = 0;

	reset_inputs(e);
	e->depth = 0;
	e->violation[0] = '\0';
	push_frame(e, 0);
	reg_set(e, 1, (uint64_t)(uintptr_t)e->ctx);
	if (e->attach == EGPU_ATTACH_NONE)
		reg_set(e, 2, e->ctx_size);
	for (uint64_t steps = 0; steps < e->max_steps; steps++) {
		int r;

		if (pc >= cnt)
			return violate(e, "ran past the end (pc %zu)", pc);
		r = step(e, insns, &pc, r0);
		if (r)
			return r < 0 ? r : 0;
	}
	return violate(e, "no exit after %llu steps",
		       (unsigned long long)e->max_steps);
}
