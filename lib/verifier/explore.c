/* SPDX-License-Identifier: MIT */
/*
 * The exploration: follow one path at a time, depth first, queueing the
 * other side of each undecided branch. At prune points the state is
 * compared with the states stored there: one already proven safe that
 * covers it ends the path; one still being explored that equals it is a
 * loop that makes no progress. The number of instructions processed is
 * capped, so verification itself always ends.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egpu/ctx.h"
#include "vstate.h"

/* execute(): the path ended at an exit. */
#define PATH_END -1000

static int falls_off(struct verifier *v)
{
	return vfail(v, "execution falls off the end of the function (the "
		     "last instruction must be exit or a jump)");
}

static int check_jmp(struct verifier *v, const struct bpf_insn *insn,
		     int idx)
{
	uint8_t op = BPF_OP(insn->code);
	int err;

	switch (op) {
	case BPF_JA:
		if (BPF_CLASS(insn->code) == BPF_JMP32)
			return idx + 1 + insn->imm;
		return idx + 1 + insn->off;
	case BPF_EXIT:
		err = check_exit(v);
		return err < 0 ? err : err ? PATH_END : v->cur->insn;
	case BPF_CALL:
		break;
	default:
		return check_cond_jmp(v, insn);
	}
	if (BPF_CLASS(insn->code) == BPF_JMP32)
		return vfail(v, "invalid call instruction");
	if (BPF_SRC(insn->code) == BPF_X) {
		uint64_t id;

		/* src_reg is reserved: 1 would read as a local call elsewhere */
		if (insn->src_reg)
			return vfail(v, "invalid call instruction");
		err = reg_readable(v, insn->dst_reg);
		if (err)
			return err;
		if (!reg_const_value(&cur_regs(v)[insn->dst_reg], &id) ||
		    id > INT32_MAX)
			return vfail(v, "callx needs a constant helper number "
				     "in r%d", insn->dst_reg);
		err = check_helper_call(v, (int32_t)id);
		return err ? err : idx + 1;
	}
	if (insn->src_reg == BPF_PSEUDO_CALL) {
		err = check_local_call(v, insn);
		return err ? err : v->cur->insn;
	}
	if (insn->src_reg != 0)
		return vfail(v, "kernel function calls are not supported");
	err = check_helper_call(v, insn->imm);
	return err ? err : idx + 1;
}

static bool alu_known(const struct bpf_insn *insn)
{
	uint8_t op = BPF_OP(insn->code);

	if (op > BPF_END)
		return false;
	/* the 64-bit byte swap has no source variant */
	return !(op == BPF_END && BPF_CLASS(insn->code) == BPF_ALU64 &&
		 BPF_SRC(insn->code) == BPF_X);
}

static bool jmp_known(const struct bpf_insn *insn)
{
	uint8_t op = BPF_OP(insn->code);

	if (op > BPF_JSLE)
		return false;
	return BPF_CLASS(insn->code) == BPF_JMP ||
	       (op != BPF_CALL && op != BPF_EXIT);
}

/*
 * The structural pass normally refuses unknown opcodes first; checked here
 * too so that no instruction is given a meaning the ISA does not define.
 */
static int check_opcode(struct verifier *v, const struct bpf_insn *insn)
{
	bool known;

	if (!cfg_regs_valid(insn))
		return vfail(v, "invalid register r%d",
			     insn->dst_reg >= BPF_REG_COUNT ? insn->dst_reg :
			     insn->src_reg);
	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		known = alu_known(insn);
		break;
	case BPF_JMP:
	case BPF_JMP32:
		known = jmp_known(insn);
		break;
	default:
		known = true; /* the load and store checks know their modes */
		break;
	}
	return known ? 0 : vfail(v, "unknown opcode %#x", insn->code);
}

/* Execute one instruction: the next index, or PATH_END. */
static int execute(struct verifier *v, const struct bpf_insn *insn, int idx)
{
	int err = check_opcode(v, insn);

	if (err)
		return err;
	switch (BPF_CLASS(insn->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		err = check_alu(v, insn);
		break;
	case BPF_LDX:
		err = check_load(v, insn);
		break;
	case BPF_ST:
		err = check_store(v, insn);
		break;
	case BPF_STX:
		err = BPF_MODE(insn->code) == BPF_ATOMIC ?
		      check_atomic(v, insn) : check_store(v, insn);
		break;
	case BPF_LD:
		if (!bpf_is_lddw(insn))
			return vfail(v, "legacy packet access (ld_abs, ld_ind) "
				     "is not supported");
		err = check_lddw(v, insn);
		return err ? err : idx + 2;
	default:
		return check_jmp(v, insn, idx);
	}
	return err ? err : idx + 1;
}

/* 0: continue; 1: the path ended; < 0: refused. */
static int step(struct verifier *v)
{
	struct vstate *cur = v->cur;
	int idx = cur->insn, next, err;

	if (v->stats.insns_processed >= v->max_insns)
		return too_complex(v, "insns");
	v->stats.insns_processed++;
	cur->path_len++;
	v->aux[idx].visits++;
	if (v->aux[idx].prune_point && !v->replaying) {
		err = prune(v);
		if (err)
			return err;
	}
	next = execute(v, &v->insns[idx], idx);
	if (next == PATH_END) {
		log_step(v, idx);
		return 1;
	}
	if (next < 0)
		return next;
	if ((size_t)next >= v->cnt ||
	    v->aux[next].subprog != cur_frame(cur)->subprog)
		return falls_off(v);
	if (next <= idx && v->aux[idx].subprog == v->aux[next].subprog)
		cur->back_step = cur->path_len; /* not a return from a call */
	cur->insn = next;
	log_step(v, idx);
	return 0;
}

static struct vstate *pop_pending(struct verifier *v)
{
	return v->npending ? v->pending[--v->npending] : NULL;
}

static int explore(struct verifier *v)
{
	for (;;) {
		int r = step(v);

		if (r < 0)
			return r;
		if (v->replaying && v->cur->path_len >= v->replay_len_steps)
			return 0;
		if (r == 0)
			continue;
		path_done(v, v->cur->parent);
		state_drop(v, v->cur);
		v->cur = pop_pending(v);
		if (!v->cur)
			return 0;
	}
}

/* r1 = ctx, r2 = its size in direct runs, r10 = frame pointer. */
static int initial_state(struct verifier *v)
{
	struct vstate *st = state_new();
	struct frame *f = frame_new(-1, 0, 0);

	if (!st || !f) {
		free(st);
		frame_free(f);
		return vnomem();
	}
	st->frames[0] = f;
	st->depth = 1;
	f->regs[1].type = REG_PTR_CTX;
	if (v->opts.attach == EGPU_ATTACH_NONE)
		reg_const(&f->regs[2], v->ctx_size);
	v->cur = st;
	return 0;
}

static void free_all(struct verifier *v)
{
	state_drop(v, v->cur);
	v->cur = NULL;
	while (v->npending)
		state_drop(v, v->pending[--v->npending]);
	checkpoints_free(v);
}

/* Steps of the failing path a log gets without verbose: its end. */
#define FAIL_TAIL 8
/* At most this many with verbose (very long paths). */
#define FAIL_STEPS_MAX 2000

/* The sides @st's path took, first to last (NULL: out of memory). */
static uint8_t *fork_sides(const struct verifier *v, const struct vstate *st,
			   uint32_t *len)
{
	uint32_t n = 0;
	uint8_t *sides;

	for (uint32_t f = st->fork; f; f = v->forks[f - 1].prev)
		n++;
	sides = malloc(n ? n : 1);
	if (!sides)
		return NULL;
	*len = n;
	for (uint32_t f = st->fork; f; f = v->forks[f - 1].prev)
		sides[--n] = v->forks[f - 1].taken;
	return sides;
}

/* Follow the failing path again, logging its steps (the last few only
 * unless verbose). Its instructions are counted afresh: the budget the
 * exploration spent would stop the replay at its first step. */
static void replay(struct verifier *v)
{
	struct verifier_stats saved_stats = v->stats;
	char *msg = strdup(egpu_errmsg());
	uint32_t len = 0;
	uint8_t *hist = fork_sides(v, v->cur, &len);
	uint64_t steps = v->cur->path_len, back = v->cur->back_step, keep;

	free_all(v);
	if (!msg || !hist || initial_state(v)) {
		free(msg);
		free(hist);
		return;
	}
	v->replaying = true;
	v->replay_hist = hist;
	v->replay_len = len;
	v->replay_len_steps = steps;
	v->stats.insns_processed = 0;
	/* The last step, the failing one, is in the message, not logged;
	 * the steps from the last backward jump on (a loop's last pass) are,
	 * up to FAIL_STEPS_MAX. */
	keep = v->opts.verbose ? FAIL_STEPS_MAX : FAIL_TAIL;
	if (back && steps - back + 1 > keep)
		keep = steps - back + 1 < FAIL_STEPS_MAX ? steps - back + 1 :
			FAIL_STEPS_MAX;
	keep++;
	v->replay_skip = steps > keep ? steps - keep : 0;
	vlog(v, "failing path, %" PRIu64 " steps:\n", steps);
	if (v->replay_skip)
		vlog(v, "... first %" PRIu64 " steps omitted\n",
		     v->replay_skip);
	explore(v);
	vlog(v, "%s\n", msg);
	err_set(EGPU_EVERIFY, "%s", msg);
	free(msg);
	free(hist);
	v->replay_hist = NULL;
	v->replaying = false;
	v->stats = saved_stats;
}

/* Bytes of r1: the structs of include/egpu/ctx.h at attach points. */
static uint32_t ctx_size(const struct verifier_opts *o)
{
	switch (o->attach) {
	case EGPU_ATTACH_ENTRY:
	case EGPU_ATTACH_EXIT:
		return sizeof(struct egpu_kernel_ctx);
	case EGPU_ATTACH_MEM:
		return sizeof(struct egpu_mem_ctx);
	case EGPU_ATTACH_UPROBE:
	case EGPU_ATTACH_URETPROBE:
		return sizeof(struct egpu_pt_regs);
	default:
		return o->ctx_size;
	}
}

static int check_args(const struct prog_spec *prog,
		      const struct map_spec *maps, size_t map_cnt,
		      const struct verifier_opts *o)
{
	if (!prog || !prog->insns || !prog->insn_cnt)
		return err_set(EGPU_EINVAL, "verifier: empty program");
	if (prog->insn_cnt > INT32_MAX / 2)
		return err_set(EGPU_EINVAL, "verifier: program too large");
	if (map_cnt && !maps)
		return err_set(EGPU_EINVAL, "verifier: %zu maps but no specs",
			       map_cnt);
	if (o->attach < EGPU_ATTACH_NONE || o->attach > EGPU_ATTACH_URETPROBE)
		return err_set(EGPU_EINVAL, "verifier: unknown attach point %d",
			       o->attach);
	return 0;
}

static int run(struct verifier *v)
{
	int err = initial_state(v);

	if (!err)
		err = cfg_build(v);
	if (!err)
		err = demand_build(v);
	if (err)
		return err;
	err = explore(v);
	if (err == EGPU_EVERIFY && v->opts.log)
		replay(v);
	if (!err)
		err = check_stack_chains(v);
	if (!err && v->opts.never_stack)
		err = mark_never_stack(v, v->opts.never_stack);
	return err;
}

int verifier_run(const struct prog_spec *prog,
		 const struct map_spec *maps, size_t map_cnt,
		 const struct verifier_opts *opts,
		 struct verifier_stats *stats)
{
	static const struct verifier_opts defaults;
	uint64_t t0 = now_ns();
	struct verifier *v;
	int err;

	if (!opts)
		opts = &defaults;
	err = check_args(prog, maps, map_cnt, opts);
	if (err)
		return err;
	v = calloc(1, sizeof(*v));
	if (!v)
		return vnomem();
	v->prog = prog;
	v->insns = prog->insns;
	v->cnt = prog->insn_cnt;
	v->maps = maps;
	v->map_cnt = map_cnt;
	v->opts = *opts;
	v->opts.verbose = opts->log ? opts->verbose : 0;
	v->ctx_size = ctx_size(opts);
	v->ctx_writable = opts->attach == EGPU_ATTACH_NONE &&
			  opts->ctx_writable;
	v->max_insns = opts->max_insns ? opts->max_insns : VERIFIER_MAX_INSNS;
	err = run(v);
	free_all(v);
	v->stats.ms = (double)(now_ns() - t0) / 1e6;
	if (stats)
		*stats = v->stats;
	for (size_t i = 0; v->aux && i < v->cnt; i++)
		free(v->aux[i].loop);
	free(v->aux);
	free(v->pending);
	free(v->forks);
	free(v);
	return err;
}
