/* SPDX-License-Identifier: MIT */
/*
 * JIT time of generated programs (ctx loads, ALU, stack traffic, branches,
 * helper calls) of about 1000 and 100 instructions, PTX and host: prints
 * the medians.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/core.h"
#include "core/helpers.h"
#include "jit_test.h"

#define MAX_BLOCKS 90
#define RUNS 21

static size_t gen_program(struct bpf_insn *p, int blocks)
{
	size_t n = 0;

	p[n++] = I(MOV64_REG(6, 1));
	p[n++] = I(MOV64(7, 0));
	p[n++] = I(MOV64(8, 0));
	for (int s = 0; s < 32; s++)
		p[n++] = I(ST(BPF_DW, 10, -8 - 8 * s, s));
	for (int i = 0; i < blocks; i++) {
		p[n++] = I(LDX(BPF_DW, 2, 6, (i % 8) * 8));
		p[n++] = I(ALU64_IMM(BPF_MUL, 2, i + 3));
		p[n++] = I(ALU64_REG(BPF_ADD, 7, 2));
		p[n++] = I(ALU32_IMM(BPF_XOR, 7, i));
		p[n++] = I(STX(BPF_DW, 10, 7, -8 - (i % 32) * 8));
		p[n++] = I(LDX(BPF_DW, 3, 10, -8 - ((i + 5) % 32) * 8));
		p[n++] = I(ALU64_IMM(BPF_RSH, 3, 3));
		p[n++] = I(JMP_IMM(BPF_JGT, 3, 1000 + i, 2));
		p[n++] = I(ALU64_REG(BPF_SUB, 7, 3));
		p[n++] = I(ALU64_IMM(BPF_AND, 7, 0xffff));
		p[n++] = i % 10 ? I(ALU64_IMM(BPF_OR, 8, i)) :
				  I(CALL(HELPER_KTIME_GET_NS));
	}
	p[n++] = I(ALU64_REG(BPF_ADD, 7, 8));
	p[n++] = I(MOV64_REG(0, 7));
	p[n++] = I(EXIT);
	return n;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double time_ptx(const struct jit_input *in)
{
	struct timespec t0;
	char *ptx;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (jit_ptx(in, "sm_90", false, &ptx, NULL, NULL)) {
		fprintf(stderr, "jit_ptx: %s\n", egpu_errmsg());
		exit(1);
	}
	free(ptx);
	return ms_since(&t0);
}

static double time_host(const struct jit_input *in)
{
	struct timespec t0;
	struct jit_host *jh;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (jit_host_new(in, &jh)) {
		fprintf(stderr, "jit_host_new: %s\n", egpu_errmsg());
		exit(1);
	}
	jit_host_free(jh);
	return ms_since(&t0);
}

static void bench(int blocks)
{
	static struct bpf_insn prog[64 + MAX_BLOCKS * 11];
	struct jit_input in = { .name = "bench", .insns = prog,
				.insn_cnt = gen_program(prog, blocks) };
	double ptx[RUNS], host[RUNS], first_ptx, first_host;

	first_ptx = time_ptx(&in);
	first_host = time_host(&in);
	for (int i = 0; i < RUNS; i++) {
		ptx[i] = time_ptx(&in);
		host[i] = time_host(&in);
	}
	qsort(ptx, RUNS, sizeof(double), cmp_double);
	qsort(host, RUNS, sizeof(double), cmp_double);
	printf("program: %zu instructions, %d runs\n", in.insn_cnt, RUNS);
	printf("jit_ptx:      median %.2f ms (min %.2f, max %.2f, first %.2f)\n",
	       ptx[RUNS / 2], ptx[0], ptx[RUNS - 1], first_ptx);
	printf("jit_host_new: median %.2f ms (min %.2f, max %.2f, first %.2f)\n",
	       host[RUNS / 2], host[0], host[RUNS - 1], first_host);
}

int main(void)
{
	bench(MAX_BLOCKS);
	bench(5);
	return 0;
}
