/* SPDX-License-Identifier: MIT */
/*
 * Internal model of the verifier: what a register may hold, what the stack
 * holds, the state of one path, and the verifier's own bookkeeping.
 */
#ifndef EGPU_VSTATE_H
#define EGPU_VSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bpf.h"
#include "core/core.h"
#include "scalar.h"
#include "verifier.h"

enum reg_type {
	REG_NOT_INIT,
	REG_SCALAR,
	REG_PTR_CTX,
	REG_PTR_STACK,
	REG_PTR_MAP_VALUE,
	REG_PTR_MAP_VALUE_OR_NULL,
	REG_PTR_RECORD,          /* ring buffer record from ringbuf_reserve */
	REG_PTR_RECORD_OR_NULL,
	REG_MAP_HANDLE,
	/* the kernel's parameter bytes (ctx->params of entry/exit probes),
	 * read-only; accesses are bounded by v->stats.params_reach */
	REG_PTR_PARAMS,
};

/*
 * For a pointer, the address is base + @off + v, with @v the variable part
 * of the offset (a constant 0 when there is none).
 */
struct reg {
	uint8_t type;
	uint8_t frameno;   /* REG_PTR_STACK: whose frame */
	int32_t off;
	uint32_t map;      /* map index: map values and handles */
	uint32_t id;       /* copies of one scalar, or of one lookup result */
	uint32_t ref;      /* records: the reservation it belongs to */
	uint32_t size;     /* records: reserved bytes */
	int32_t origin;    /* insn that produced the value (or released it), -1 */
	struct scalar v;
};

/* What each stack byte holds. */
enum stack_byte {
	SB_INVALID, /* never written on this path */
	SB_MISC,    /* data of unknown value */
	SB_SPILL,   /* part of the register kept in the slot */
};

/*
 * A spill is kept at the byte where it starts: an 8-byte aligned register
 * (pointer or scalar) at byte 0, or a scalar's low 1, 2 or 4 bytes at a
 * multiple of their size, so one slot holds up to 8 narrow spills (a
 * constant key next to another local stays a constant).
 */
struct slot {
	uint8_t kind[8];
	uint8_t spill_size[8]; /* bytes of the spill starting at byte b; 0: none */
	struct reg spill[8];
};

/* Slot i covers the bytes r10 - 8 * (i + 1) .. r10 - 8 * i - 1. */
struct frame {
	struct reg regs[BPF_REG_COUNT];
	int callsite;   /* insn of the call that made the frame; -1: main */
	int subprog;
	uint32_t nslots;
	struct slot *slots;
};

/* A ring buffer reservation that must be submitted or discarded. */
struct ref {
	uint32_t id;
	int32_t insn;
};

struct checkpoint;

/* One side taken at a two-way branch (struct verifier.forks). */
struct fork_rec {
	uint32_t prev; /* the record before it on the path, plus one */
	uint8_t taken;
};

/* The state of the path being explored. */
struct vstate {
	struct frame *frames[BPF_MAX_CALL_DEPTH];
	int depth;         /* frames in use; the current is frames[depth - 1] */
	int insn;
	struct ref *refs;
	uint32_t nrefs;
	struct checkpoint *parent; /* last stored state on this path */
	uint64_t path_len;
	uint64_t back_step; /* path_len at its last backward jump, 0: none */
	/* with a log: this path's last two-way branch in verifier.forks,
	 * plus one (0: none yet) */
	uint32_t fork;
	/* bytes of it counted in verifier.state_bytes (queued and stored
	 * states; 0: not counted) */
	uint32_t charged;
};

/* A stored state: pruning compares against it once fully explored. */
struct checkpoint {
	struct vstate st;
	struct checkpoint *parent;
	/* explored: in its instruction's list; open: in the open table */
	struct checkpoint *next, **prev;
	uint32_t branches;        /* unfinished paths below it */
	uint32_t hits, misses;
	uint64_t fingerprint;     /* of the live registers, for loop checks */
	/* a path below depends on values DEMAND_RELAXED ignores */
	bool full_demand;
	/* stored at a loop head whose end loopterm.c proved (widen.c) */
	bool loop_head;
};

/* Registers and own stack slots (bit k: slot k) whose values may matter. */
struct demand {
	uint64_t slots;
	uint16_t regs;
};

/* demand.c: which branches' operands count (see there). */
enum demand_mode { DEMAND_RELAXED, DEMAND_FULL };

struct insn_aux {
	uint16_t live_in;     /* registers read before written from here */
	struct demand demand[2]; /* from here on, by enum demand_mode */
	uint8_t prune_point;
	uint8_t back_edge_target;
	int back_edge_from;       /* back edge targets: the last jump back here */
	struct loop_proof *loop;  /* back edge targets: loopterm.c, once asked */
	/* a branch whose sides rejoin, its operands needed nowhere after it */
	uint8_t free_branch;
	int subprog;
	uint32_t visits;
	struct checkpoint *states; /* fully explored, proven safe */
	uint32_t nstates;
	uint32_t nopen;            /* stored here and still open */
};

#define MAX_SUBPROGS 64
/*
 * Largest pointer offset (fixed plus variable) and memory size a program
 * may use: far from any overflow of the 64-bit arithmetic on them.
 */
#define MAX_OFFSET (1LL << 29)

struct subprog {
	int start, end;       /* instructions [start, end) */
	uint32_t stack_depth; /* deepest byte touched below r10, any path */
	uint64_t callees;     /* bit i: calls subprog i on some path */
	int callsite[MAX_SUBPROGS]; /* a call into subprog i, for messages */
};

struct verifier {
	const struct prog_spec *prog;
	const struct bpf_insn *insns;
	size_t cnt;
	const struct map_spec *maps;
	size_t map_cnt;
	struct verifier_opts opts;
	uint32_t ctx_size;
	bool ctx_writable;

	struct insn_aux *aux;
	struct subprog subprogs[MAX_SUBPROGS];
	int nsub;

	struct vstate *cur;
	int where;      /* instruction messages name when no path is open */
	struct vstate **pending;
	size_t npending, pending_cap;
	uint32_t next_id;
	uint64_t max_insns;
	uint64_t live_states;
	uint64_t state_bytes; /* of the states queued and stored */
	/* states still being explored, hashed by instruction and fingerprint */
	struct checkpoint **open;
	uint32_t open_size, open_cnt;

	/*
	 * With a log, the sides taken at two-way branches, as a tree: each
	 * record names the one before it on its path. Paths share their
	 * common start, so the tree grows by two records a branch, not by a
	 * copy of the path's history in every queued state.
	 */
	struct fork_rec *forks;
	uint32_t nforks, forks_cap;

	bool steps_cut; /* the every-step log reached its size limit */
	/* verbose replay of a failing path */
	bool replaying;
	uint32_t replay_pos;
	const uint8_t *replay_hist;
	uint32_t replay_len;
	uint64_t replay_len_steps; /* length of the failing path */
	uint64_t replay_skip;      /* steps not printed (very long paths) */

	struct verifier_stats stats;
};

static inline struct frame *cur_frame(const struct vstate *st)
{
	return st->frames[st->depth - 1];
}

static inline struct reg *cur_regs(struct verifier *v)
{
	return cur_frame(v->cur)->regs;
}

static inline bool reg_is_ptr(const struct reg *r)
{
	return r->type > REG_SCALAR;
}

static inline bool reg_is_nullable(const struct reg *r)
{
	return r->type == REG_PTR_MAP_VALUE_OR_NULL ||
	       r->type == REG_PTR_RECORD_OR_NULL;
}

/* vpath.c: refuse the program, naming it, the instruction and the reason. */
int vfail(struct verifier *v, const char *fmt, ...) EGPU_PRINTF(2, 3);
/* vstate.c */
int vnomem(void);

/* vstate.c */
void reg_not_init(struct reg *r);
void reg_unknown(struct reg *r);
void reg_const(struct reg *r, uint64_t c);
void reg_scalar(struct reg *r, const struct scalar *s);
bool reg_const_value(const struct reg *r, uint64_t *c);
const char *reg_type_name(const struct reg *r);
struct vstate *state_new(void);
struct frame *frame_new(int callsite, int subprog, int frameno);
void frame_free(struct frame *f);
int state_copy(struct vstate *dst, const struct vstate *src);
void state_release(struct vstate *st);
void state_free(struct vstate *st);
struct slot *stack_slot(struct frame *f, uint32_t index);
/* The byte where the spill holding byte @b starts; -1: none. */
int slot_spill_start(const struct slot *s, int b);
/* Call @fn on every register and spilled register of every frame. */
void state_for_each_reg(struct vstate *st,
			void (*fn)(struct reg *r, void *arg), void *arg);
int ref_acquire(struct vstate *st, uint32_t id, int insn);
bool ref_release(struct vstate *st, uint32_t id);
uint16_t frame_live_mask(const struct verifier *v, const struct vstate *st,
			 int frame);
bool state_covers(const struct verifier *v, const struct vstate *old,
		  const struct vstate *cur, enum demand_mode mode);
bool state_equal(const struct verifier *v, const struct vstate *a,
		 const struct vstate *b);
uint64_t state_fingerprint(const struct verifier *v, const struct vstate *st);
void reg_print(struct strbuf *sb, const struct verifier *v,
	       const struct reg *r);
void state_print(struct strbuf *sb, const struct verifier *v,
		 const struct vstate *st);

/* cfg.c */
int cfg_build(struct verifier *v);
int insn_subprog(const struct verifier *v, int insn);
int cfg_successors(const struct verifier *v, size_t i, size_t succ[2]);
bool cfg_is_cond_jmp(const struct bpf_insn *insn);
bool cfg_is_exit(const struct bpf_insn *insn);
bool cfg_regs_valid(const struct bpf_insn *insn);
/* demand.c, after cfg_build() */
int demand_build(struct verifier *v);
/*
 * stackoff.c: per instruction, each register's stack offset before it:
 * r10 + c of its own frame on every path (c), or one of these.
 */
#define SP_UNSEEN INT32_MIN        /* no path reaches the instruction */
#define SP_NONE (INT32_MIN + 1)    /* never a stack pointer */
#define SP_ANY INT32_MAX           /* anywhere in any frame's stack, or not */
void stack_offsets(const struct verifier *v, int32_t (*sp)[BPF_REG_COUNT]);
/* What an access may touch in the stack of its own function's frame. */
struct stack_ref {
	bool stack;       /* it may access a stack */
	bool exact;       /* only these slots, of its own frame */
	uint64_t touched; /* slots with a byte accessed */
	uint64_t covered; /* slots entirely accessed */
};
/* @size bytes at @off from a register at stack offset @base. */
struct stack_ref stack_ref(int32_t base, int32_t off, uint32_t size);
/* The load, store or atomic @insn, its registers' offsets @regs before it. */
struct stack_ref insn_stack_ref(const struct bpf_insn *insn,
				const int32_t *regs);
/* Whether a call with these registers may pass a pointer into the stack. */
bool stack_passed(const int32_t *regs);
/* verifier_opts.never_stack of an accepted program: @out, v->cnt entries. */
int mark_never_stack(const struct verifier *v, bool *out);
/* rejoin.c: branches whose sides meet again at @join (-1: others) */
struct rejoin {
	int64_t join;
	struct demand writes; /* what the paths in between may write */
};
int find_rejoining_branches(const struct verifier *v,
			    const int32_t (*sp)[BPF_REG_COUNT],
			    struct rejoin *rj);

/* mem.c */
enum access { ACCESS_READ, ACCESS_WRITE, ACCESS_ATOMIC };
int check_load(struct verifier *v, const struct bpf_insn *insn);
int check_store(struct verifier *v, const struct bpf_insn *insn);
int check_atomic(struct verifier *v, const struct bpf_insn *insn);
/*
 * Helper memory argument: @regno points to at least @size.umax bytes that
 * may be accessed as @acc (stack bytes read must be initialised; written
 * ones become initialised up to @size.umin).
 */
int check_mem_arg(struct verifier *v, int regno, const struct scalar *size,
		  enum access acc, bool aligned8);
int reg_readable(struct verifier *v, int regno);
/* The constant @size-byte value the stack pointer in @regno points at. */
bool stack_const(struct verifier *v, int regno, uint32_t size, uint64_t *val);
int reg_writable(struct verifier *v, int regno);
void track_stack_depth(struct verifier *v, const struct reg *ptr, int64_t low);

/* alu.c */
int check_alu(struct verifier *v, const struct bpf_insn *insn);
int check_lddw(struct verifier *v, const struct bpf_insn *insn);
/* jmp.c: returns the next instruction, or a negative error */
int check_cond_jmp(struct verifier *v, const struct bpf_insn *insn);
/* cfg.c: the condition of a conditional jump's opcode (BPF_OP). */
enum cmp_op jmp_cmp(uint8_t op);
/*
 * loopterm.c: why a loop ends, proven from the code (see there). Every
 * iteration from the head passes jump @insn on the side where "counter
 * @stay bound" holds, the counter taking consecutive values of its width.
 */
struct loop_proof {
	bool proven;
	bool jmp32;       /* compared on 32 bits, else the counter's
			     zero-extended low half on 64 */
	uint8_t stay;     /* enum cmp_op that keeps the loop going */
	int insn;
	bool bound_const; /* the bound is @bound, else location @bound_loc
			     (r0-r10, then stack slot bound_loc - 11) */
	bool bound_zext;  /* of which the low half, zero-extended */
	uint8_t bound_loc;
	uint8_t counter_loc; /* where the counter is at the head */
	int64_t bound;
};
int loop_prove(struct verifier *v, int head, struct loop_proof *lp);
/* Whether the loop of @lp ends whatever its bound's value in @st. */
bool loop_bound_ok(const struct loop_proof *lp, const struct vstate *st);
/* The scalar at location @loc of @st's frame (r0-r10, then stack slot
 * loc - 11), of which the low half; false: not a scalar there. */
bool loop_loc_value(const struct vstate *st, int loc, bool low_half,
		    struct scalar *out);
/* widen.c: at a loop head, whether the path is covered by its previous
 * iteration (it ends), or goes on, maybe widened, from a state to store
 * (the next iteration is compared with it), or neither. */
enum { LOOP_COVERED = 1, LOOP_STORE = 2 };
int loop_widen(struct verifier *v);
/* call.c */
int check_helper_call(struct verifier *v, int32_t id);
int check_local_call(struct verifier *v, const struct bpf_insn *insn);
/* Returns 1 when the path ends, 0 when it returns into a caller. */
int check_exit(struct verifier *v);
int check_stack_chains(struct verifier *v);
/* vpath.c */
int push_branch(struct verifier *v, int insn, struct vstate **out);
/* @what ran out ("insns", or the states' "memory"): the refusal. */
int too_complex(struct verifier *v, const char *what);
/* Count @st's bytes against the states' memory budget (refused past it);
 * state_uncharge() when it is freed, or state_drop() to do both. */
int state_charge(struct verifier *v, struct vstate *st);
void state_uncharge(struct verifier *v, const struct vstate *st);
void state_drop(struct verifier *v, struct vstate *st);
/* vstate.c */
uint32_t new_id(struct verifier *v);
/* prune.c */
int prune(struct verifier *v);
/* The path took a side of a free branch its operands decided. */
void path_depends_on_values(struct verifier *v);
void path_done(struct verifier *v, struct checkpoint *c);
void checkpoints_free(struct verifier *v);

/* report.c */
void vlog(struct verifier *v, const char *fmt, ...) EGPU_PRINTF(2, 3);
void log_step(struct verifier *v, int insn);
/*
 * " at FILE:LINE: `TEXT`" for instruction @insn of @prog when its BTF line
 * info names one (clang -g), else nothing.
 */
void source_line(struct strbuf *sb, const struct prog_spec *prog, int insn);

/* disasm.c */
void disasm_insn(struct strbuf *sb, const struct verifier *v, int idx);

#endif
