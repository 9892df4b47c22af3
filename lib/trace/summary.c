/* SPDX-License-Identifier: MIT */
/*
 * The text summary: the kernels with the most GPU time, how often they
 * ran, and under each the CPU call paths that launched them, hottest
 * first:
 *
 *   GPU ms   share  launches    avg us  kernel / its CPU call paths
 *   30.123   65.9%      1000    30.123  matmul_kernel
 *   12.000   26.3%       400              main;forward;mlp_up;cudaLaunchKernel
 */
#include "kernels.h"

#define PATHS_SHOWN 4  /* call paths listed per kernel */

static void put_row(struct strbuf *sb, uint64_t ns, uint64_t total,
		    uint64_t launches)
{
	sb_printf(sb, "%10.3f %6.1f%% %9llu ", ns / 1e6,
		  total ? 100.0 * (double)ns / (double)total : 0.0,
		  (unsigned long long)launches);
}

static void put_kernel(struct strbuf *sb, const struct trace_data *td,
		       const struct kernel_sum *k, uint64_t total)
{
	size_t shown = k->path_cnt < PATHS_SHOWN ? k->path_cnt : PATHS_SHOWN;
	struct op_path p;

	put_row(sb, k->ns, total, k->launches);
	sb_printf(sb, "%9.3f  ", k->ns / 1e3 / (double)k->launches);
	text_put(sb, k->name, false);
	sb_adds(sb, "\n");
	for (size_t i = 0; i < shown; i++) {
		put_row(sb, k->paths[i].ns, total, k->paths[i].ops);
		sb_adds(sb, "             ");
		op_path(td, &td->ops[k->paths[i].op], false, &p);
		path_put(sb, &p, path_host_depth(&p));
		sb_adds(sb, "\n");
	}
	if (shown < k->path_cnt)
		sb_printf(sb, "%41s... %zu more call paths\n", "",
			  k->path_cnt - shown);
}

/* Copies and sets: how many, how long. */
static void put_copies(struct strbuf *sb, const struct trace_data *td)
{
	uint64_t n = 0, ns = 0, bytes = 0;

	for (size_t i = 0; i < td->op_cnt; i++) {
		if (td->ops[i].kind == TRACE_KERNEL)
			continue;
		n += op_count(&td->ops[i]);
		ns += op_ns(&td->ops[i]);
		bytes += td->ops[i].bytes;
	}
	if (n)
		sb_printf(sb, "copies and sets: %llu, %.3f ms, %llu bytes\n",
			  (unsigned long long)n, ns / 1e6, (unsigned long long)bytes);
}

static void put_header(struct strbuf *sb, const struct trace_data *td,
		       const struct kernel_sums *ks, uint64_t total)
{
	uint64_t runs = 0, matched = 0;

	for (size_t i = 0; i < td->op_cnt; i++) {
		if (td->ops[i].kind != TRACE_KERNEL)
			continue;
		runs += op_count(&td->ops[i]);
		if (td->ops[i].api != TRACE_NONE)
			matched += op_count(&td->ops[i]);
	}
	text_put(sb, td->process ? td->process : "trace", false);
	sb_printf(sb, ": %llu kernel runs of %zu kernels, %.3f ms GPU time, "
		  "%llu joined to their launch\n",
		  (unsigned long long)runs, ks->cnt, total / 1e6,
		  (unsigned long long)matched);
	if (td->lost)
		sb_printf(sb, "warning: CUPTI dropped %llu activity records\n",
			  (unsigned long long)td->lost);
	put_copies(sb, td);
	if (ks->cnt)
		sb_adds(sb, "    GPU ms   share  launches    avg us  "
			"kernel / its CPU call paths, hottest first\n");
}

int trace_write_summary(const struct trace_data *td, FILE *f, unsigned top)
{
	struct kernel_sums ks;
	struct strbuf sb;
	uint64_t total = 0;
	size_t shown;
	int err;

	err = kernel_sums(td, &ks);
	if (err)
		return err;
	for (size_t i = 0; i < ks.cnt; i++)
		total += ks.k[i].ns;
	shown = top && top < ks.cnt ? top : ks.cnt;
	sb_init(&sb);
	put_header(&sb, td, &ks, total);
	for (size_t i = 0; i < shown; i++) {
		put_kernel(&sb, td, &ks.k[i], total);
		out_flush(&sb, f);
	}
	if (shown < ks.cnt)
		sb_printf(&sb, "... %zu more kernels\n", ks.cnt - shown);
	kernel_sums_free(&ks);
	return out_done(&sb, f, "trace summary");
}
