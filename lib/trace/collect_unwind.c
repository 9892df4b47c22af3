/* SPDX-License-Identifier: MIT */
/*
 * Return addresses of the calling thread, as backtrace() gives them, at a
 * fraction of its cost. backtrace() runs libgcc's unwinder, which for
 * every frame finds the function's FDE in .eh_frame and interprets its
 * CFA program from the function's start, every time. Here each return
 * address's unwind rule (where the caller's stack pointer, return address
 * and frame pointer are) is worked out once from the same .eh_frame data,
 * packed into 8 bytes and cached; a capture is then a hash lookup and two
 * loads per frame.
 *
 * The rule of a return address: CFA = rsp or rbp + offset; the return
 * address and the saved rbp (if saved) at fixed offsets from the CFA.
 * That covers what compilers emit for x86-64 functions, and one DWARF
 * expression form too: gcc's frames realigned through a saved pointer
 * (DRAP: an aligned local beside alloca, as in cuBLAS), where the CFA
 * is loaded from rbp - k and rbp is saved at rbp. Anything else (other
 * expressions, a signal frame, a stack pointer leaving the thread's
 * stack) makes the whole capture fall back to backtrace(), so the result
 * is always what backtrace() would give; egpu trace counts those.
 * Frames end where backtrace()'s do: at code without an FDE, or where the
 * return address is undefined (_start, clone3).
 *
 * The cache is a lock-free open-addressing table shared by the threads
 * of one trace: an entry's key is published (release) after its rule.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>

#include "collect_impl.h"

/* The thread's stack, where every read of the unwinder must land. */
static _Thread_local struct {
	uintptr_t lo, hi;
	bool known, none;
} stack;

static bool stack_bounds(void)
{
	pthread_attr_t attr;
	void *base;
	size_t size;

	if (stack.known)
		return !stack.none;
	stack.known = true;
	stack.none = true;
	if (pthread_getattr_np(pthread_self(), &attr))
		return false;
	if (!pthread_attr_getstack(&attr, &base, &size)) {
		stack.lo = (uintptr_t)base;
		stack.hi = (uintptr_t)base + size;
		stack.none = false;
	}
	pthread_attr_destroy(&attr);
	return !stack.none;
}

bool uw_stack_has(uintptr_t addr, size_t len)
{
	return stack_bounds() && addr >= stack.lo && addr + len <= stack.hi;
}

#if defined(__x86_64__)

/* DWARF register numbers (x86-64 psABI) */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

/* libgcc's FDE lookup: the FDE covering @pc, and the bases its pointer
 * encodings may refer to. Exported by libgcc_s (and LLVM's libunwind). */
struct eh_bases {
	void *tbase, *dbase, *func;
};
typedef const void *find_fde_fn(void *pc, struct eh_bases *bases);

enum rule_kind {
	RULE_NONE,        /* an empty cache slot */
	RULE_STEP,        /* unwind by the offsets */
	RULE_END,         /* the outermost frame: no FDE, or RA undefined */
	RULE_UNKNOWN,     /* not expressible: backtrace() does the capture */
};

/* One return address's rule, 8 bytes. */
struct rule {
	int32_t cfa_off;
	int16_t rbp_off;  /* rbp saved at CFA + rbp_off; 0: unchanged
			     (with RULE_RBP_AT_RBP: at rbp + rbp_off) */
	int8_t ra_off;    /* return address at CFA + ra_off */
	uint8_t kind;     /* enum rule_kind, | RULE_CFA_RBP */
};

_Static_assert(sizeof(struct rule) == sizeof(uint64_t), "a rule is a word");

#define RULE_KIND 3
#define RULE_CFA_RBP 4    /* the CFA is rbp + cfa_off (else rsp +) */
#define RULE_CFA_DEREF 8  /* the CFA is loaded from there */
#define RULE_RBP_AT_RBP 16

#define CACHE_SLOTS (1u << 15)

struct unwinder {
	void *libgcc;
	find_fde_fn *find_fde;
	struct lfmap rules;   /* return address -> struct rule */
	uint64_t id;          /* tells threads' walk logs apart (walk_log) */
	/* captures left to backtrace(), and the first frame that sent one
	 * there (egpu trace reports it: each costs a full DWARF unwind) */
	atomic_uint_fast64_t slow;
	_Atomic uintptr_t slow_pc;
	atomic_uint_fast64_t reused;  /* walks finished from a previous one */
};

/* ---- reading .eh_frame ---- */

struct reader {
	const uint8_t *p, *end;
	bool bad;
};

/* A LEB128 number, sign-extended when @sign. */
static uint64_t read_leb(struct reader *r, bool sign)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

static uint64_t read_uleb(struct reader *r)
{
	return read_leb(r, false);
}

static int64_t read_sleb(struct reader *r)
{
	return (int64_t)read_leb(r, true);
}

/* @n bytes, little-endian, sign-extended when @sign. */
static uint64_t read_fixed(struct reader *r, size_t n, bool sign)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, n);    /* x86-64 is little-endian */
	r->p += n;
	if (sign && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * n);
	return v;
}

#define DW_EH_PE_omit 0xff

/* A pointer in DWARF EH encoding @enc (DW_EH_PE_*). */
static uint64_t read_encoded(struct reader *r, uint8_t enc,
			     const struct eh_bases *b)
{
	const uint8_t *at = r->p;
	uint64_t v;

	switch (enc & 0x0f) {
	case 0x00: v = read_fixed(r, 8, false); break;   /* absptr */
	case 0x01: v = read_uleb(r); break;
	case 0x02: v = read_fixed(r, 2, false); break;
	case 0x03: v = read_fixed(r, 4, false); break;
	case 0x04: v = read_fixed(r, 8, false); break;
	case 0x09: v = (uint64_t)read_sleb(r); break;
	case 0x0a: v = read_fixed(r, 2, true); break;
	case 0x0b: v = read_fixed(r, 4, true); break;
	case 0x0c: v = read_fixed(r, 8, true); break;
	default: r->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += (uintptr_t)at; break;             /* pcrel */
	case 0x20: v += (uintptr_t)b->tbase; break;       /* textrel */
	case 0x30: v += (uintptr_t)b->dbase; break;       /* datarel */
	case 0x40: v += (uintptr_t)b->func; break;        /* funcrel */
	default: r->bad = true;
	}
	return v;     /* DW_EH_PE_indirect only occurs for personalities */
}

/* An entry (CIE or FDE) at @p: its content after the length field. */
static bool entry_at(const uint8_t *p, struct reader *r)
{
	uint32_t len32;
	uint64_t len;

	memcpy(&len32, p, 4);
	p += 4;
	len = len32;
	if (len32 == 0xffffffffu) {
		memcpy(&len, p, 8);
		p += 8;
	}
	if (!len || len > (1u << 30))
		return false;
	*r = (struct reader){ p, p + len, false };
	return true;
}

/* ---- the CFA program ---- */

/* A register's rule; HOW_AT_RBP: saved at rbp + off (a DWARF expression) */
enum how { HOW_SAME, HOW_UNDEF, HOW_OFFSET, HOW_AT_RBP, HOW_OTHER };

/* CFA = reg + off, CFA = *(reg + off), or an expression beyond these */
enum cfa_how { CFA_REG, CFA_DEREF, CFA_OTHER };

struct reg_rule {
	uint8_t how;      /* enum how */
	int64_t off;
};

struct cfa_state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	uint8_t cfa_how;  /* enum cfa_how */
	struct reg_rule rbp, ra;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool signal, has_aug_len;
	struct reader init;   /* initial instructions */
};

#define STATE_STACK 8

/* The rule register @reg gets, or NULL when it is neither rbp nor RA. */
static struct reg_rule *tracked(struct cfa_state *s, const struct cie *c,
				uint64_t reg)
{
	if (reg == c->ra_reg)
		return &s->ra;
	return reg == REG_RBP ? &s->rbp : NULL;
}

static void set_rule(struct cfa_state *s, const struct cie *c, uint64_t reg,
		     uint8_t how, int64_t off)
{
	struct reg_rule *t = tracked(s, c, reg);

	if (t)
		*t = (struct reg_rule){ how, off };
}

/* DW_CFA_restore: register @reg's rule back to @init's. */
static void restore(struct cfa_state *s, const struct cie *c, uint64_t reg,
		    const struct cfa_state *init)
{
	struct cfa_state copy = *init;
	struct reg_rule *from = tracked(&copy, c, reg);

	if (from)
		*tracked(s, c, reg) = *from;
}

#define DW_OP_deref 0x06
#define DW_OP_breg0 0x70
#define DW_OP_breg31 0x8f

/*
 * A DWARF expression of @len bytes that is "breg(N) off" or "breg(N) off;
 * deref", the forms gcc's realigned frames use; false for any other.
 */
static bool breg_expr(struct reader *r, uint64_t len, uint64_t *reg,
		      int64_t *off, bool *deref)
{
	const uint8_t *end = r->p + len;
	uint8_t op;

	if (!len || len > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return false;
	}
	op = *r->p++;
	if (op < DW_OP_breg0 || op > DW_OP_breg31) {
		r->p = end;
		return false;
	}
	*reg = op - DW_OP_breg0;
	*off = read_sleb(r);
	*deref = r->p < end && *r->p == DW_OP_deref;
	r->p += *deref;
	if (r->p != end) {
		r->p = end;
		return false;
	}
	return true;
}

/* def_cfa_register and _offset change a CFA of register + offset only. */
static void only_reg_cfa(struct cfa_state *s)
{
	if (s->cfa_how != CFA_REG)
		s->cfa_how = CFA_OTHER;
}

/* DW_CFA_def_cfa_expression: CFA = *(reg + off) is the form we keep. */
static void cfa_expression(struct reader *r, struct cfa_state *s)
{
	bool deref;

	s->cfa_how = breg_expr(r, read_uleb(r), &s->cfa_reg, &s->cfa_off,
			       &deref) && deref ? CFA_DEREF : CFA_OTHER;
}

/* DW_CFA_expression: a register saved at rbp + off is the form we keep. */
static void reg_expression(struct reader *r, struct cfa_state *s,
			   const struct cie *c)
{
	uint64_t reg = read_uleb(r), base;
	int64_t off;
	bool deref;

	if (breg_expr(r, read_uleb(r), &base, &off, &deref) && !deref &&
	    base == REG_RBP)
		set_rule(s, c, reg, HOW_AT_RBP, off);
	else
		set_rule(s, c, reg, HOW_OTHER, 0);
}

/*
 * Run the CFA instructions in @r from location @loc until past @target
 * (the call instruction). @init: the state after the CIE's instructions,
 * for DW_CFA_restore. False on instructions this reader does not know.
 */
static bool run_cfa(struct reader *r, const struct cie *c,
		    const struct eh_bases *b, uint64_t loc, uint64_t target,
		    struct cfa_state *s, const struct cfa_state *init)
{
	struct cfa_state saved[STATE_STACK];
	unsigned depth = 0;
	uint64_t reg;
	int64_t off;

	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++, low = op & 0x3f;

		switch (op >> 6) {
		case 1:    /* DW_CFA_advance_loc */
			loc += low * c->code_align;
			if (loc > target)
				return true;
			continue;
		case 2:    /* DW_CFA_offset */
			off = (int64_t)read_uleb(r) * c->data_align;
			set_rule(s, c, low, HOW_OFFSET, off);
			continue;
		case 3:    /* DW_CFA_restore */
			restore(s, c, low, init);
			continue;
		}
		switch (op) {
		case 0x00: break;                                /* nop */
		case 0x01:                                       /* set_loc */
			loc = read_encoded(r, c->fde_enc, b);
			if (loc > target)
				return true;
			break;
		case 0x02: case 0x03: case 0x04:                 /* advance_locN */
			loc += read_fixed(r, op == 0x02 ? 1 : op == 0x03 ? 2 : 4,
					  false) * c->code_align;
			if (loc > target)
				return true;
			break;
		case 0x05:                                       /* offset_extended */
			reg = read_uleb(r);
			off = (int64_t)read_uleb(r) * c->data_align;
			set_rule(s, c, reg, HOW_OFFSET, off);
			break;
		case 0x11:                                       /* offset_extended_sf */
			reg = read_uleb(r);
			off = read_sleb(r) * c->data_align;
			set_rule(s, c, reg, HOW_OFFSET, off);
			break;
		case 0x06:                                       /* restore_extended */
			restore(s, c, read_uleb(r), init);
			break;
		case 0x07:                                       /* undefined */
			set_rule(s, c, read_uleb(r), HOW_UNDEF, 0);
			break;
		case 0x08:                                       /* same_value */
			set_rule(s, c, read_uleb(r), HOW_SAME, 0);
			break;
		case 0x09:                                       /* register */
			reg = read_uleb(r);
			read_uleb(r);
			set_rule(s, c, reg, HOW_OTHER, 0);
			break;
		case 0x0a:                                       /* remember_state */
			if (depth == STATE_STACK)
				return false;
			saved[depth++] = *s;
			break;
		case 0x0b:                                       /* restore_state */
			if (!depth)
				return false;
			*s = saved[--depth];
			break;
		case 0x0c:                                       /* def_cfa */
			s->cfa_reg = read_uleb(r);
			s->cfa_off = (int64_t)read_uleb(r);
			s->cfa_how = CFA_REG;
			break;
		case 0x12:                                       /* def_cfa_sf */
			s->cfa_reg = read_uleb(r);
			s->cfa_off = read_sleb(r) * c->data_align;
			s->cfa_how = CFA_REG;
			break;
		case 0x0d:                                       /* def_cfa_register */
			s->cfa_reg = read_uleb(r);
			only_reg_cfa(s);
			break;
		case 0x0e:                                       /* def_cfa_offset */
			s->cfa_off = (int64_t)read_uleb(r);
			only_reg_cfa(s);
			break;
		case 0x13:                                       /* def_cfa_offset_sf */
			s->cfa_off = read_sleb(r) * c->data_align;
			only_reg_cfa(s);
			break;
		case 0x0f:                                       /* def_cfa_expression */
			cfa_expression(r, s);
			break;
		case 0x10:                                       /* expression */
			reg_expression(r, s, c);
			break;
		case 0x16:                                       /* val_expression */
			reg = read_uleb(r);
			r->p += read_uleb(r);
			set_rule(s, c, reg, HOW_OTHER, 0);
			break;
		case 0x14:                                       /* val_offset */
			reg = read_uleb(r);
			read_uleb(r);
			set_rule(s, c, reg, HOW_OTHER, 0);
			break;
		case 0x15:                                       /* val_offset_sf */
			reg = read_uleb(r);
			read_sleb(r);
			set_rule(s, c, reg, HOW_OTHER, 0);
			break;
		case 0x2e:                                       /* GNU_args_size */
			read_uleb(r);
			break;
		case 0x2f:                              /* GNU_negative_offset_extended */
			reg = read_uleb(r);
			off = -(int64_t)read_uleb(r) * c->data_align;
			set_rule(s, c, reg, HOW_OFFSET, off);
			break;
		default:
			return false;
		}
	}
	return !r->bad && r->p == r->end;
}

/* The CIE at @p: alignment factors, RA column, FDE pointer encoding. */
static bool parse_cie(const uint8_t *p, const struct eh_bases *b,
		      struct cie *c)
{
	struct reader r;
	const char *aug;
	uint8_t version;
	uint64_t aug_len = 0;
	const uint8_t *aug_end = NULL;

	memset(c, 0, sizeof(*c));
	if (!entry_at(p, &r) || read_fixed(&r, 4, false) != 0)
		return false;               /* CIE id 0 in .eh_frame */
	version = (uint8_t)read_fixed(&r, 1, false);
	aug = (const char *)r.p;
	r.p += strnlen(aug, (size_t)(r.end - r.p)) + 1;
	if (strstr(aug, "eh"))
		r.p += 8;
	c->code_align = read_uleb(&r);
	c->data_align = read_sleb(&r);
	c->ra_reg = version == 1 ? read_fixed(&r, 1, false) : read_uleb(&r);
	c->fde_enc = 0;                 /* absptr */
	if (aug[0] == 'z') {
		c->has_aug_len = true;
		aug_len = read_uleb(&r);
		aug_end = r.p + aug_len;
		for (const char *a = aug + 1; *a && !r.bad; a++) {
			if (*a == 'R')
				c->fde_enc = (uint8_t)read_fixed(&r, 1, false);
			else if (*a == 'L')
				read_fixed(&r, 1, false);
			else if (*a == 'P')
				read_encoded(&r, (uint8_t)read_fixed(&r, 1,
					false) & 0x7f, b);
			else if (*a == 'S')
				c->signal = true;
			else
				break;      /* the length skips the rest */
		}
		r.p = aug_end;
	} else if (aug[0]) {
		return false;
	}
	if (r.bad || r.p > r.end)
		return false;
	c->init = r;
	return true;
}

/* The rule for the return address @ra (its call at @ra - 1). */
static struct rule compute_rule(const struct unwinder *u, uintptr_t ra)
{
	struct rule unknown = { .kind = RULE_UNKNOWN }, end = { .kind = RULE_END };
	struct eh_bases b;
	const uint8_t *fde = u->find_fde((void *)(ra - 1), &b), *cie_ptr;
	struct cfa_state s = { 0 }, init;
	struct reader r;
	struct cie c;
	uint64_t begin;
	int32_t cie_off;

	if (!fde)
		return end;
	if (!entry_at(fde, &r))
		return unknown;
	cie_ptr = r.p;
	memcpy(&cie_off, r.p, 4);
	r.p += 4;
	cie_ptr -= cie_off;
	if (!parse_cie(cie_ptr, &b, &c) || c.signal)
		return unknown;
	begin = read_encoded(&r, c.fde_enc, &b);
	read_encoded(&r, c.fde_enc & 0x0f, &b);            /* range */
	if (c.has_aug_len)
		r.p += read_uleb(&r);
	if (r.bad || r.p > r.end ||
	    !run_cfa(&c.init, &c, &b, begin, ra - 1, &s, &s))
		return unknown;
	init = s;
	if (!run_cfa(&r, &c, &b, begin, ra - 1, &s, &init) ||
	    s.cfa_how == CFA_OTHER ||
	    (s.cfa_reg != REG_RSP && s.cfa_reg != REG_RBP))
		return unknown;
	if (s.ra.how == HOW_UNDEF)
		return end;
	if (s.ra.how != HOW_OFFSET || s.ra.off < -128 || s.ra.off > 127 ||
	    s.cfa_off < INT32_MIN || s.cfa_off > INT32_MAX ||
	    s.rbp.how == HOW_OTHER ||
	    (s.rbp.how == HOW_OFFSET && !s.rbp.off) ||
	    s.rbp.off < INT16_MIN || s.rbp.off > INT16_MAX)
		return unknown;
	return (struct rule){
		.cfa_off = (int32_t)s.cfa_off,
		.rbp_off = s.rbp.how == HOW_OFFSET || s.rbp.how == HOW_AT_RBP ?
			(int16_t)s.rbp.off : 0,
		.ra_off = (int8_t)s.ra.off,
		.kind = RULE_STEP | (s.cfa_reg == REG_RBP ? RULE_CFA_RBP : 0) |
			(s.cfa_how == CFA_DEREF ? RULE_CFA_DEREF : 0) |
			(s.rbp.how == HOW_AT_RBP ? RULE_RBP_AT_RBP : 0),
	};
}

/* ---- the cache ---- */

static struct rule rule_of(struct unwinder *u, uintptr_t ra)
{
	struct rule rule;
	uint64_t v;

	if (lfmap_get(&u->rules, ra, &v)) {
		memcpy(&rule, &v, sizeof(rule));
		return rule;
	}
	rule = compute_rule(u, ra);
	memcpy(&v, &rule, sizeof(rule));
	lfmap_put(&u->rules, ra, v);
	return rule;
}

/* ---- the capture ---- */

struct regs {
	uintptr_t pc, sp, bp;
};

/* The caller's state as after this call returns: pc = the return
 * address, sp above it, rbp as it is. */
void egpu_unwind_regs(struct regs *r);
__asm__(".text\n"
	".globl egpu_unwind_regs\n"
	".hidden egpu_unwind_regs\n"
	".type egpu_unwind_regs, @function\n"
	"egpu_unwind_regs:\n"
	".cfi_startproc\n"
	"\tmovq (%rsp), %rax\n"
	"\tmovq %rax, 0(%rdi)\n"
	"\tleaq 8(%rsp), %rax\n"
	"\tmovq %rax, 8(%rdi)\n"
	"\tmovq %rbp, 16(%rdi)\n"
	"\tret\n"
	".cfi_endproc\n"
	".size egpu_unwind_regs, .-egpu_unwind_regs\n");

/* -1, noting @pc as what sent the first slow capture to backtrace(). */
static int give_up(struct unwinder *u, uintptr_t pc)
{
	uintptr_t none = 0;

	atomic_compare_exchange_strong(&u->slow_pc, &none, pc);
	return -1;
}

/* ---- the previous walks ---- */

/*
 * Launches from one thread come from a few call paths (a model's layer
 * alternates a cuBLAS launch and an elementwise one), so most of a stack
 * is one the thread walked recently. Each walk logs its steps: the state
 * it stepped from and the stack words it read; the thread keeps its last
 * few. When a new walk reaches a state a kept walk also stepped from, and
 * every word that walk read from there on still holds what it read, the
 * rest of the walk would read the same words and take the same steps: its
 * frames are copied, a compare per word instead of a rule lookup per
 * frame. A word that changed (another caller further out) makes the walk
 * go on by the rules, and try that log again only past the word's frame.
 */
#define WALK_LOGS 4

struct step {
	uintptr_t pc, sp, bp;   /* the state stepped from */
	uintptr_t ra_at;        /* where the next pc was read */
	uintptr_t bp_at;        /* where the next rbp was read; 0: none */
	uintptr_t cfa_at;       /* where the next sp was read; 0: none */
	bool uses_bp;           /* its rule reads rbp (else rbp is carried) */
};

/* A thread's kept walks, and one buffer (scratch) the walk logs into. */
struct walk_log {
	uint64_t unwinder;      /* the uw_new() they were walked for */
	uint32_t cap;           /* steps each buffer holds */
	unsigned scratch;
	uint64_t clock;         /* for used[]: the least recent goes first */
	uint32_t n[WALK_LOGS + 1];
	bool whole[WALK_LOGS + 1];  /* reached the stack's end, not a max */
	uint64_t used[WALK_LOGS + 1];
	struct step *s[WALK_LOGS + 1];
};

static pthread_key_t log_key;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t unwinders;

static void log_key_make(void)
{
	if (pthread_key_create(&log_key, free))
		log_key = (pthread_key_t)-1;
}

static struct walk_log *log_new(uint32_t max)
{
	struct walk_log *l = malloc(sizeof(*l) + (WALK_LOGS + 1) *
				    (size_t)max * sizeof(struct step));

	if (!l || pthread_setspecific(log_key, l)) {
		free(l);
		return NULL;
	}
	l->cap = max;
	for (unsigned i = 0; i <= WALK_LOGS; i++)
		l->s[i] = (struct step *)(l + 1) + (size_t)i * max;
	l->unwinder = 0;
	return l;
}

/* This thread's logs for @u's walks of up to @max frames; NULL: none. */
static struct walk_log *log_of(struct unwinder *u, uint32_t max)
{
	struct walk_log *l;

	pthread_once(&log_once, log_key_make);
	if (log_key == (pthread_key_t)-1)
		return NULL;
	l = pthread_getspecific(log_key);
	if (l && l->cap < max) {
		free(l);
		l = NULL;
	}
	if (!l && !(l = log_new(max)))
		return NULL;
	if (l->unwinder != u->id) {
		l->unwinder = u->id;
		l->scratch = 0;
		l->clock = 0;
		memset(l->n, 0, sizeof(l->n));
		memset(l->used, 0, sizeof(l->used));
	}
	return l;
}

static uintptr_t word(uintptr_t at)
{
	return *(const uintptr_t *)at;
}

/*
 * Whether a kept walk's @n steps from @k on would be taken again: the
 * index of the first whose words changed, or @n when none did. A walk
 * that ended at a null return address (@whole) read it in its last step;
 * one cut at its max read words its last frame does not depend on.
 */
static uint32_t first_changed(const struct step *s, uint32_t k, uint32_t n,
			      bool whole)
{
	for (; k + 1 < n; k++) {
		const struct step *next = &s[k + 1];

		if (word(s[k].ra_at) != next->pc ||
		    (s[k].bp_at && word(s[k].bp_at) != next->bp) ||
		    (s[k].cfa_at && word(s[k].cfa_at) != next->sp))
			return k;
	}
	if (whole && k < n && s[k].ra_at && word(s[k].ra_at))
		return k;
	return n;
}

/*
 * Whether the kept walk's steps from @k on depend on the rbp it came with:
 * rbp is often a general register, different at each launch, and it only
 * matters when a step reads it before one reloads it from the stack.
 */
static bool needs_bp(const struct step *s, uint32_t k, uint32_t n)
{
	for (; k < n; k++) {
		if (s[k].uses_bp)
			return true;
		if (s[k].bp_at)
			return false;
	}
	return false;
}

struct walk {
	struct walk_log *log;   /* NULL: no reuse */
	uint32_t k[WALK_LOGS + 1];         /* a step of each kept walk */
	uintptr_t retry_sp[WALK_LOGS + 1]; /* compare no state below it */
	struct step *cur;       /* this walk's steps */
};

/*
 * At state @r, step @n of the walk: kept walk @i's frames from the same
 * state on copied into @out, and the count; -1 where they cannot be
 * used. The log becomes this walk's in place: its new steps, then the
 * kept walk's it shares (usually where they were: no copy).
 */
static int reuse_log(struct walk *w, unsigned i, const struct regs *r,
		     uint32_t n, void **out, uint32_t max)
{
	struct walk_log *l = w->log;
	struct step *p = l->s[i];
	uint32_t k, changed, take, prev_n = l->n[i];
	bool whole = l->whole[i];

	if (r->sp < w->retry_sp[i])
		return -1;
	for (k = w->k[i]; k < prev_n && p[k].sp < r->sp; k++)
		;
	w->k[i] = k;
	if (k == prev_n || p[k].sp != r->sp || p[k].pc != r->pc ||
	    (p[k].bp != r->bp && needs_bp(p, k, prev_n)))
		return -1;
	changed = first_changed(p, k, prev_n, whole);
	if (changed < prev_n) {
		w->retry_sp[i] = p[changed].sp + 1;
		return -1;
	}
	take = prev_n - k;
	if (n + take >= max) {
		take = max - n;
		whole = false;
	} else if (!whole) {
		return -1;  /* it stopped at its max; this one may go further */
	}
	for (uint32_t j = 0; j < take; j++)
		out[n + j] = (void *)p[k + j].pc;
	if (n != k)
		memmove(p + n, p + k, take * sizeof(*p));
	memcpy(p, w->cur, n * sizeof(*p));
	l->n[i] = n + take;
	l->whole[i] = whole;
	l->used[i] = ++l->clock;
	return (int)(n + take);
}

static int reuse(struct walk *w, const struct regs *r, uint32_t n,
		 void **out, uint32_t max)
{
	int got;

	if (!w->log)
		return -1;
	for (unsigned i = 0; i <= WALK_LOGS; i++)
		if (i != w->log->scratch && w->log->n[i] &&
		    (got = reuse_log(w, i, r, n, out, max)) >= 0)
			return got;
	return -1;
}

/*
 * The walk of @n steps (@whole: to the stack's end), logged in full in
 * the scratch buffer, is kept in place of the least recently used one,
 * whose buffer is the scratch now.
 */
static int walk_done(struct walk *w, uint32_t n, bool whole)
{
	struct walk_log *l = w->log;
	unsigned old = 0;

	if (!l)
		return (int)n;
	for (unsigned i = 1; i <= WALK_LOGS; i++)
		if (i != l->scratch &&
		    (old == l->scratch || l->used[i] < l->used[old]))
			old = i;
	l->n[l->scratch] = n;
	l->whole[l->scratch] = whole;
	l->used[l->scratch] = ++l->clock;
	l->scratch = old;
	return (int)n;
}

/* Log step @n's state; the reads fill in as it steps. */
static struct step *log_step(struct walk *w, uint32_t n, const struct regs *r)
{
	static _Thread_local struct step scratch;
	struct step *s = w->log ? &w->cur[n] : &scratch;

	*s = (struct step){ r->pc, r->sp, r->bp, 0, 0, 0, false };
	return s;
}

static void walk_begin(struct walk *w, struct unwinder *u, uint32_t max)
{
	struct walk_log *l = log_of(u, max);

	*w = (struct walk){ .log = l };
	if (l)
		w->cur = l->s[l->scratch];
}

/*
 * The cached walk: the count, or -1 where backtrace() must do it. Every
 * read lands in the thread's stack, above the frame being unwound.
 */
static int fast_walk(struct unwinder *u, void **out, uint32_t max)
{
	const uintptr_t hi = stack.hi;
	uintptr_t cfa, at;
	struct regs r;
	struct rule rule;
	struct step *s;
	struct walk w;
	uint32_t n = 0;
	int reused;

	egpu_unwind_regs(&r);
	if (r.sp < stack.lo || r.sp >= hi)
		return give_up(u, r.pc);
	walk_begin(&w, u, max);
	while (n < max) {
		if ((reused = reuse(&w, &r, n, out, max)) >= 0) {
			atomic_fetch_add_explicit(&u->reused, 1,
						  memory_order_relaxed);
			return reused;
		}
		s = log_step(&w, n, &r);
		out[n++] = (void *)r.pc;
		rule = rule_of(u, r.pc);
		if ((rule.kind & RULE_KIND) != RULE_STEP)
			return (rule.kind & RULE_KIND) == RULE_END ?
				walk_done(&w, n, true) : give_up(u, r.pc);
		s->uses_bp = rule.kind & (RULE_CFA_RBP | RULE_RBP_AT_RBP);
		cfa = (rule.kind & RULE_CFA_RBP ? r.bp : r.sp) +
			(uintptr_t)(intptr_t)rule.cfa_off;
		if (rule.kind & RULE_CFA_DEREF) {
			if (cfa < r.sp || cfa + 8 > hi)
				return give_up(u, r.pc);
			s->cfa_at = cfa;
			cfa = *(const uintptr_t *)cfa;
		}
		if (cfa <= r.sp || cfa > hi || (cfa & 7))
			return give_up(u, r.pc);
		if (rule.rbp_off || (rule.kind & RULE_RBP_AT_RBP)) {
			at = (rule.kind & RULE_RBP_AT_RBP ? r.bp : cfa) +
				(uintptr_t)(intptr_t)rule.rbp_off;
			if (at < r.sp || at + 8 > hi)
				return give_up(u, r.pc);
			s->bp_at = at;
			r.bp = *(const uintptr_t *)at;
		}
		at = cfa + (uintptr_t)(intptr_t)rule.ra_off;
		if (at < r.sp || at + 8 > hi)
			return give_up(u, r.pc);
		s->ra_at = at;
		r.pc = *(const uintptr_t *)at;
		r.sp = cfa;
		if (!r.pc)
			return walk_done(&w, n, true);  /* backtrace() leaves
							   out a null one too */
	}
	return walk_done(&w, n, false);
}

struct unwinder *uw_new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u || lfmap_init(&u->rules, CACHE_SLOTS)) {
		free(u);
		return NULL;
	}
	u->id = atomic_fetch_add(&unwinders, 1) + 1;
	u->libgcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	u->find_fde = u->libgcc ? (find_fde_fn *)dlsym(u->libgcc,
						       "_Unwind_Find_FDE") : NULL;
	if (!u->find_fde) {
		uw_free(u);
		return NULL;
	}
	return u;
}

void uw_free(struct unwinder *u)
{
	if (!u)
		return;
	if (u->libgcc)
		dlclose(u->libgcc);
	lfmap_free(&u->rules);
	free(u);
}

int uw_walk(struct unwinder *u, void **out, uint32_t max)
{
	return u && stack_bounds() ? fast_walk(u, out, max) : -1;
}

#else   /* other architectures: backtrace() */

struct unwinder *uw_new(void)
{
	return NULL;
}

void uw_free(struct unwinder *u)
{
	(void)u;
}

int uw_walk(struct unwinder *u, void **out, uint32_t max)
{
	(void)u;
	(void)out;
	(void)max;
	return -1;
}

#endif

uint32_t uw_capture(struct unwinder *u, void **out, uint32_t max)
{
	int n = uw_walk(u, out, max);

	if (n >= 0)
		return (uint32_t)n;
	if (u)
		atomic_fetch_add_explicit(&u->slow, 1, memory_order_relaxed);
	return (uint32_t)backtrace(out, (int)max);
}

void uw_counts(struct unwinder *u, struct uw_counts *out)
{
	*out = (struct uw_counts){ UINT64_MAX, 0, 0 };
	if (u)
		*out = (struct uw_counts){ atomic_load(&u->slow),
			atomic_load(&u->reused), atomic_load(&u->slow_pc) };
}
