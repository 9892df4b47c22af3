/* SPDX-License-Identifier: MIT */
/*
 * Helper lowerings shared by every back end, chosen by the helper table's
 * lower field (core/helpers.h): the conformance suite's "unwind" helper,
 * and map lookups in array maps, which need no call: the value of key k
 * sits at value_addr + k * value_size (an SM array's copy of
 * SM s at value_addr + (s * max_entries + k) * value_size; a thread-local
 * map's value address is a placeholder naming registers, core/tlocal.h);
 * and the bounded reads of the probed code's memory. Everything else is
 * the back end's (lift_backend.helper).
 */
#include <stddef.h>

#include "core/mem_ctx.h"
#include "egpu/ctx.h"
#include "lift.h"

/* Linux's EFAULT, which bpf_probe_read returns for memory it cannot read. */
#define READ_FAULT (-14)

bool lift_helper_may_abort(const struct lift *l, int32_t id)
{
	const struct helper_info *h = helper_find(id, l->in->helpers);

	if (h && h->lower == LOWER_UNWIND)
		return true;
	return l->in->helpers == EGPU_HELPERS_GPU && l->be->abort_helper &&
	       id == l->be->abort_helper;
}

bool lift_helper_exists(const struct lift *l, const struct helper_info *h)
{
	return l->in->helpers == EGPU_HELPERS_CONFORMANCE || !l->be->has_helper ||
	       h->lower == LOWER_READ_WINDOW || l->be->has_helper(h->id);
}

/* Conformance helper 5 returns r1; like uBPF's unwind, 0 ends the program. */
static void lift_unwind(struct lift *l, LLVMValueRef *args, LLVMValueRef *r0)
{
	lift_abort_if(l, LLVMBuildICmp(l->b, LLVMIntEQ, args[0],
				       lift_const(l->i64, 0), ""));
	*r0 = args[0];
}

static bool inline_lookup(const struct jit_map *m)
{
	return (m->type == EGPU_MAP_ARRAY || m->type == EGPU_MAP_GPU_ARRAY ||
		m->type == EGPU_MAP_THREAD_LOCAL || m->type == EGPU_MAP_SM_ARRAY) &&
	       m->value_addr && m->key_size == 4 && m->value_size;
}

/* Whether map @i is the first inlinable map with its address. */
static bool first_inline(const struct jit_input *in, size_t i)
{
	if (!inline_lookup(&in->maps[i]))
		return false;
	for (size_t j = 0; j < i; j++)
		if (inline_lookup(&in->maps[j]) &&
		    in->maps[j].addr == in->maps[i].addr)
			return false;
	return true;
}

/* &value[*r2] or NULL when the key is out of range. */
static LLVMValueRef array_value(struct lift *l, const struct jit_map *m)
{
	LLVMBuilderRef b = l->b;
	LLVMValueRef key, in, addr, copy = lift_const(l->i64, 0);
	unsigned align;

	key = lift_addr(l, 2, 0, sizeof(uint32_t), &align);
	key = lift_load(l, key, align, l->i32);
	key = LLVMBuildZExt(b, key, l->i64, "");
	in = LLVMBuildICmp(b, LLVMIntULT, key,
			   lift_const(l->i64, m->max_entries), "");
	if (m->type == EGPU_MAP_SM_ARRAY && m->slots > 1 && l->be->sm_id) {
		LLVMValueRef sm = LLVMBuildAnd(b, l->be->sm_id(l),
					       lift_const(l->i64, m->slots - 1), "");

		copy = LLVMBuildMul(b, sm, lift_const(l->i64, m->copy_stride), "");
	}
	addr = LLVMBuildMul(b, key, lift_const(l->i64, m->value_size), "");
	addr = LLVMBuildAdd(b, addr, copy, "");
	addr = LLVMBuildAdd(b, addr, lift_const(l->i64, m->value_addr), "");
	return LLVMBuildSelect(b, in, addr, lift_const(l->i64, 0), "");
}

/*
 * A switch on r1 over the array maps' addresses: when r1 is a constant
 * (the usual lddw right before the call) LLVM keeps only the matching arm.
 */
static int lift_map_lookup(struct lift *l, const struct helper_info *h,
			   LLVMValueRef *args, LLVMValueRef *r0)
{
	const struct jit_input *in = l->in;
	LLVMBasicBlockRef other, join, bb;
	LLVMValueRef sw, phi, v;
	size_t n = 0;
	int err;

	for (size_t i = 0; i < in->map_cnt; i++)
		n += first_inline(in, i);
	if (!n)
		return l->be->helper(l, h, args, r0);
	other = lift_block(l, "");
	join = lift_block(l, "");
	sw = LLVMBuildSwitch(l->b, args[0], other, n);
	LLVMPositionBuilderAtEnd(l->b, join);
	phi = LLVMBuildPhi(l->b, l->i64, "");
	for (size_t i = 0; i < in->map_cnt; i++) {
		if (!first_inline(in, i))
			continue;
		bb = lift_block(l, "");
		LLVMAddCase(sw, lift_const(l->i64, in->maps[i].addr), bb);
		LLVMPositionBuilderAtEnd(l->b, bb);
		v = array_value(l, &in->maps[i]);
		bb = LLVMGetInsertBlock(l->b);
		LLVMBuildBr(l->b, join);
		LLVMAddIncoming(phi, &v, &bb, 1);
	}
	LLVMPositionBuilderAtEnd(l->b, other);
	err = l->be->helper(l, h, args, &v);
	if (err)
		return err;
	bb = LLVMGetInsertBlock(l->b);
	LLVMBuildBr(l->b, join);
	LLVMAddIncoming(phi, &v, &bb, 1);
	LLVMPositionBuilderAtEnd(l->b, join);
	*r0 = phi;
	return 0;
}

/* The @size-byte field at @off of the ctx @ctx points to, as i64. */
static LLVMValueRef ctx_field(struct lift *l, LLVMValueRef ctx, unsigned off,
			      unsigned size)
{
	LLVMTypeRef t = size == 8 ? l->i64 : l->i32;
	unsigned align = l->be->ctx_align < size ? l->be->ctx_align : size;
	LLVMValueRef a = LLVMBuildAdd(l->b, ctx, lift_const(l->i64, off), "");
	LLVMValueRef v;

	a = LLVMBuildIntToPtr(l->b, a, l->ptr, "");
	v = lift_load(l, a, align ? align : 1, t);
	return size == 8 ? v : LLVMBuildZExt(l->b, v, l->i64, "");
}

/* Where each reading helper's window lies in its ctx: base, length. */
static void window_fields(int32_t id, unsigned *base, unsigned *len)
{
	*base = id == HELPER_READ_PARAM ? offsetof(struct egpu_kernel_ctx, params) :
		id == HELPER_READ_MEM ? offsetof(struct egpu_mem_ctx, addr) :
					offsetof(struct egpu_mem_ctx, value);
	*len = id == HELPER_READ_PARAM ?
		       offsetof(struct egpu_kernel_ctx, params_size) :
		       offsetof(struct egpu_mem_ctx, size);
}

/*
 * @dst of a reading helper: the frame itself where r2 is known to point
 * into it, which lets LLVM keep the bytes in registers.
 */
static LLVMValueRef read_dst(struct lift *l, LLVMValueRef r2)
{
	unsigned align;

	if (lift_on_frame(l, 2, 0, 1))
		return lift_addr(l, 2, 0, 1, &align);
	return LLVMBuildIntToPtr(l->b, r2, l->ptr, "");
}

/*
 * Copy @size (args[2]) bytes from @off (args[3]) bytes into the @len-byte
 * window at @src to @dst: 0; when they are not all inside it (or @ok is
 * false), zero @dst and return READ_FAULT, as bpf_probe_read does. The
 * verifier proved @dst writable for @size bytes.
 */
static LLVMValueRef copy_window(struct lift *l, LLVMValueRef *args,
				LLVMValueRef dst, LLVMValueRef src,
				LLVMValueRef len, LLVMValueRef ok)
{
	LLVMBuilderRef b = l->b;
	LLVMValueRef phi, vals[2], in;
	LLVMBasicBlockRef copy = lift_block(l, ""), fault = lift_block(l, ""),
			  join = lift_block(l, ""), from[2] = { copy, fault };

	in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntULE, args[3], len, ""),
			  LLVMBuildICmp(b, LLVMIntULE, args[2],
					LLVMBuildSub(b, len, args[3], ""), ""), "");
	LLVMBuildCondBr(b, ok ? LLVMBuildAnd(b, in, ok, "") : in, copy, fault);
	LLVMPositionBuilderAtEnd(b, copy);
	LLVMBuildMemCpy(b, dst, 1,
			LLVMBuildGEP2(b, l->i8, src, &args[3], 1, ""), 1,
			args[2]);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, fault);
	LLVMBuildMemSet(b, dst, lift_const(l->i8, 0), args[2], 1);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
	phi = LLVMBuildPhi(b, l->i64, "");
	vals[0] = lift_const(l->i64, 0);
	vals[1] = lift_const(l->i64, (uint64_t)(int64_t)READ_FAULT);
	LLVMAddIncoming(phi, vals, from, 2);
	return phi;
}

/*
 * read_value on the GPU, from the site's ctx tail (core/mem_ctx.h): a
 * small store's bytes from value_bits (a register once the probe is
 * copied into its site), other stores' from value_at.
 */
static LLVMValueRef read_value_gpu(struct lift *l, LLVMValueRef *args,
				   LLVMValueRef dst)
{
	LLVMBuilderRef b = l->b;
	LLVMValueRef ctx = args[0], n, at, v[2];
	LLVMBasicBlockRef bits = lift_block(l, ""), mem = lift_block(l, ""),
			  join = lift_block(l, ""), from[2];

	n = ctx_field(l, ctx, offsetof(struct mem_site_ctx, value_len), 4);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, n, lift_const(l->i64, 0),
					 ""), bits, mem);
	LLVMPositionBuilderAtEnd(b, bits);
	LLVMBuildStore(b, ctx_field(l, ctx, offsetof(struct mem_site_ctx,
						     value_bits), 8),
		       l->fn->value_bits);
	v[0] = copy_window(l, args, dst, l->fn->value_bits, n, NULL);
	from[0] = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, mem);
	at = ctx_field(l, ctx, offsetof(struct mem_site_ctx, value_at), 8);
	v[1] = copy_window(l, args, dst, LLVMBuildIntToPtr(b, at, l->ptr, ""),
			   ctx_field(l, ctx, offsetof(struct egpu_mem_ctx, size), 4),
			   LLVMBuildICmp(b, LLVMIntNE, at, lift_const(l->i64, 0), ""));
	from[1] = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
	n = LLVMBuildPhi(b, l->i64, "");
	LLVMAddIncoming(n, v, from, 2);
	return n;
}

/*
 * read_param(ctx, dst, size, off), read_mem(...) and read_value(...):
 * copy @size bytes from @off bytes into the window the ctx describes (the
 * kernel's parameters, the bytes the access touches, the bytes a store
 * writes) to @dst (copy_window). ctx.value 0 means no store.
 */
static void lift_read_window(struct lift *l, const struct helper_info *h,
			     LLVMValueRef *args, LLVMValueRef *r0)
{
	LLVMValueRef dst = read_dst(l, args[1]), base, len, ok = NULL;
	unsigned base_off, len_off;

	if (h->id == HELPER_READ_VALUE && l->sm) {
		*r0 = read_value_gpu(l, args, dst);
		return;
	}
	window_fields(h->id, &base_off, &len_off);
	base = ctx_field(l, args[0], base_off, 8);
	len = ctx_field(l, args[0], len_off, 4);
	if (h->id == HELPER_READ_VALUE) /* 0: the access writes nothing */
		ok = LLVMBuildICmp(l->b, LLVMIntNE, base, lift_const(l->i64, 0), "");
	*r0 = copy_window(l, args, dst, LLVMBuildIntToPtr(l->b, base, l->ptr, ""),
			  len, ok);
}

int lift_helper(struct lift *l, const struct helper_info *h, LLVMValueRef *r0)
{
	LLVMValueRef args[5];

	for (unsigned r = 1; r <= 5; r++)
		args[r - 1] = lift_reg(l, r);
	switch (h->lower) {
	case LOWER_UNWIND:
		lift_unwind(l, args, r0);
		return 0;
	case LOWER_USER:
		return l->be->user_helper(l, user_helper_find(l->in->users, h->id),
					  args, r0);
	case LOWER_MAP_LOOKUP:
		return lift_map_lookup(l, h, args, r0);
	case LOWER_READ_WINDOW:
		lift_read_window(l, h, args, r0);
		return 0;
	default:
		return l->be->helper(l, h, args, r0);
	}
}
