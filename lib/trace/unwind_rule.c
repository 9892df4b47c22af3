/* SPDX-License-Identifier: MIT */
/*
 * The unwind rule of a return address (unwind_rule.h), from the .eh_frame
 * data libgcc's unwinder reads: the FDE covering the call (found with
 * libgcc's _Unwind_Find_FDE), its CIE, and their CFA programs run up to
 * the call. What compilers emit for x86-64 functions packs into 8 bytes:
 * CFA = rsp or rbp + offset, the return address and the saved rbp (if
 * saved) at fixed offsets from it; and one DWARF expression form, gcc's
 * frames realigned through a saved pointer (DRAP: an aligned local beside
 * alloca, as in cuBLAS), where the CFA is loaded from rbp - k and rbp is
 * saved at rbp. Anything else is RULE_UNKNOWN.
 *
 * The cache is a lock-free open-addressing table shared by the threads
 * of one trace: an entry's key is published (release) after its rule.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_rule.h"

#if defined(__x86_64__)

#define CACHE_SLOTS (1u << 15)

/* DWARF register numbers (x86-64 psABI) */
#define REG_RBP 6
#define REG_RSP 7

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
static struct rule compute_rule(const struct rule_table *t, uintptr_t ra)
{
	struct rule unknown = { .kind = RULE_UNKNOWN }, end = { .kind = RULE_END };
	struct eh_bases b;
	const uint8_t *fde = t->find_fde((void *)(ra - 1), &b), *cie_ptr;
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

struct rule rule_of(struct rule_table *t, uintptr_t ra)
{
	struct rule rule;
	uint64_t v;

	if (lfmap_get(&t->rules, ra, &v)) {
		memcpy(&rule, &v, sizeof(rule));
		return rule;
	}
	rule = compute_rule(t, ra);
	memcpy(&v, &rule, sizeof(rule));
	lfmap_put(&t->rules, ra, v);
	return rule;
}

int rule_table_init(struct rule_table *t)
{
	*t = (struct rule_table){ 0 };
	if (lfmap_init(&t->rules, CACHE_SLOTS))
		return -1;
	t->libgcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	t->find_fde = t->libgcc ? (find_fde_fn *)dlsym(t->libgcc,
						       "_Unwind_Find_FDE") : NULL;
	if (!t->find_fde) {
		rule_table_free(t);
		return -1;
	}
	return 0;
}

void rule_table_free(struct rule_table *t)
{
	if (t->libgcc)
		dlclose(t->libgcc);
	lfmap_free(&t->rules);
	*t = (struct rule_table){ 0 };
}

#endif
