/* SPDX-License-Identifier: MIT */
/*
 * Probe bodies made by the real JIT, copied into real kernels: every entry
 * and exit program of the repository's eBPF objects (the benchmark's,
 * cuda-counter's, the API test's) is translated to PTX and attached to
 * every kernel of the corpus and of the benchmark workloads. Every site
 * gets copies, no call to a probe is left, the rest of the text is
 * unchanged, and ptxas accepts each output. Then ptxas -v measures what
 * copying saves on the benchmark's vecadd kernel.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/device.h"
#include "egpu.h"
#include "ptx/instr.h"
#include "ptx_util.h"
#include "test_util.h"

#define MAX_PROBES 16

static const char *const objects[] = {
	PTX_BPF_DIR "/empty.bpf.o",   PTX_BPF_DIR "/timing.bpf.o",
	PTX_BPF_DIR "/threadhist.bpf.o", PTX_BPF_DIR "/counter.bpf.o",
	PTX_BPF_DIR "/api.bpf.o",
};

/* Translated entry and exit programs, each a module and an attach request. */
struct probes {
	egpu_ctx *ctx;
	struct ptx_text mods[MAX_PROBES + 1]; /* then the device runtime */
	struct ptx_attach reqs[MAX_PROBES];
	char names[MAX_PROBES][64];
	size_t n;
};

static struct probes probes;

static void add_probe(egpu_prog *prog, const char *obj_name)
{
	struct probes *p = &probes;
	enum egpu_attach_point at = egpu_prog_attach_point(prog);
	EGPU_OPTS(egpu_jit_opts, jo, .func = p->names[p->n]);
	char *ptx;
	size_t len;

	if (at != EGPU_ATTACH_ENTRY && at != EGPU_ATTACH_EXIT)
		return;
	ck_assert_uint_lt(p->n, MAX_PROBES);
	snprintf(p->names[p->n], sizeof(p->names[0]), "jitprobe_%s_%s",
		 obj_name, egpu_prog_name(prog));
	ck_assert_msg(!egpu_prog_jit_ptx(prog, &jo, &ptx, &len), "%s: %s",
		      p->names[p->n], egpu_errmsg());
	p->mods[p->n] = (struct ptx_text){ p->names[p->n], ptx, len };
	p->reqs[p->n] = (struct ptx_attach){
		.kernel = "*", .point = (int)at, .func = p->names[p->n],
	};
	p->n++;
}

static void probes_load(void)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true);

	probes.ctx = egpu_ctx_new(&co);
	ck_assert_ptr_nonnull(probes.ctx);
	for (size_t i = 0; i < ARRAY_SIZE(objects); i++) {
		egpu_obj *obj = egpu_load(probes.ctx, objects[i], NULL);
		char name[32];

		ck_assert_msg(obj, "%s: %s", objects[i], egpu_errmsg());
		snprintf(name, sizeof(name), "%.*s",
			 (int)strcspn(strrchr(objects[i], '/') + 1, "."),
			 strrchr(objects[i], '/') + 1);
		for (egpu_prog *p = egpu_obj_next_prog(obj, NULL); p;
		     p = egpu_obj_next_prog(obj, p))
			add_probe(p, name);
	}
	probes.mods[probes.n] = (struct ptx_text){
		"device runtime", device_runtime_ptx, device_runtime_ptx_len,
	};
}

static void probes_free(void)
{
	for (size_t i = 0; i < probes.n; i++)
		free((char *)probes.mods[i].text);
	egpu_ctx_free(probes.ctx);
	memset(&probes, 0, sizeof(probes));
}

/* Copies expected in one kernel: every probe of a point at each site. */
static unsigned want_copies(const struct ptx_kernel_info *ki,
			    const struct ptx_attach *reqs, size_t nreq)
{
	unsigned n = 0;

	for (size_t i = 0; i < nreq; i++)
		n += reqs[i].point == EGPU_ATTACH_ENTRY ? ki->entry_points :
							  ki->exit_points;
	return n;
}

/*
 * ptxas accepts @out, or else rejects the same probes called as well:
 * ptxas cannot allocate registers for a kernel using setmaxnreg with
 * probes using the eBPF stack at both its entry and its exits, called or
 * copied; copying must never be what makes a module fail.
 */
static void assemble(const char *out, const char *text, size_t len,
		     const struct ptx_attach *reqs, size_t nreq,
		     const char *tag)
{
	struct ptx_attach called[MAX_PROBES];
	char arch[32], *alt;
	size_t alt_len;
	int err;

	if (access(EGPU_PTXAS, X_OK) ||
	    !run_ptxas(out, strlen(out), ptx_target(out, arch, sizeof(arch)), tag))
		return;
	for (size_t i = 0; i < nreq; i++) {
		called[i] = reqs[i];
		called[i].no_inline = true;
	}
	alt = instrument(text, len, called, nreq, probes.mods, probes.n + 1,
			 NULL, &alt_len, &err);
	ck_assert_ptr_nonnull(alt);
	ck_assert_msg(run_ptxas(alt, alt_len, arch, "jit_called"),
		      "ptxas rejects %s/%s.ptx, but not the probes called",
		      EGPU_TEST_BUILD, tag);
	printf("%s: ptxas rejects it with the probes copied or called\n", tag);
	free(alt);
}

static void instrument_file(const char *path, const struct ptx_attach *reqs,
			    size_t nreq, const char *tag)
{
	size_t len, out_len;
	char *text = tu_read_file(path, &len), *out, *back;
	unsigned entries, exits;
	struct ptx_report rep;
	int err;

	ck_assert_msg(text, "%s missing", path);
	out = instrument(text, len, reqs, nreq, probes.mods, probes.n + 1, &rep,
			 &out_len, &err);
	ck_assert_msg(out, "%s: %s", path, egpu_errmsg());
	for (size_t k = 0; k < rep.nkernels; k++)
		ck_assert_msg(rep.kernels[k].inlined ==
				      want_copies(&rep.kernels[k], reqs, nreq),
			      "%s: %s: %u copies, want %u", path,
			      rep.kernels[k].name, rep.kernels[k].inlined,
			      want_copies(&rep.kernels[k], reqs, nreq));
	ck_assert_msg(!strstr(out, "), jitprobe_"), "%s: a probe is called",
		      path);
	back = strip_inserted(out, &out_len, &entries, &exits);
	ck_assert_ptr_nonnull(back);
	ck_assert_msg(!strcmp(strstr(back, "\n.target"), strstr(text, "\n.target")),
		      "%s: text outside the inserted blocks changed", path);
	free(back);
	assemble(out, text, len, reqs, nreq, tag);
	ptx_report_free(&rep);
	free(out);
	free(text);
}

START_TEST(every_probe_in_every_kernel)
{
	char **paths;
	size_t n = corpus_list(&paths);

	ck_assert_uint_ge(probes.n, 8);
	for (size_t i = 0; i < n; i++) {
		char tag[256];

		snprintf(tag, sizeof(tag), "jit_%s", strrchr(paths[i], '/') + 1);
		tag[strlen(tag) - 4] = '\0';
		instrument_file(paths[i], probes.reqs, probes.n, tag);
	}
	instrument_file(PTX_WORKLOADS, probes.reqs, probes.n, "jit_workloads");
	free_list(paths, n);
}
END_TEST

/* Each probe alone in the sm_90a kernels (setmaxnreg among them). */
START_TEST(each_probe_sm90a)
{
	for (size_t i = 0; i < probes.n; i++) {
		char tag[96];

		snprintf(tag, sizeof(tag), "jit_sm90a_%s", probes.names[i]);
		instrument_file(PTX_CORPUS_DIR "/sm90a.ptx", &probes.reqs[i], 1,
				tag);
	}
}
END_TEST

/* vecadd with the probes named @progs, copied or called: ptxas -v. */
static struct ptxas_usage vecadd_usage(const char *const *progs, size_t nprog,
				       bool no_inline, const char *tag)
{
	size_t len, out_len, nreq = 0;
	char *text = tu_read_file(PTX_WORKLOADS, &len), *out;
	struct ptx_attach reqs[MAX_PROBES];
	struct ptxas_usage u;
	int err;

	for (size_t i = 0; i < probes.n; i++) {
		for (size_t j = 0; j < nprog; j++) {
			if (strcmp(probes.names[i], progs[j]))
				continue;
			reqs[nreq] = probes.reqs[i];
			reqs[nreq].kernel = "vecadd";
			reqs[nreq++].no_inline = no_inline;
		}
	}
	ck_assert_uint_eq(nreq, nprog);
	out = instrument(text, len, reqs, nreq, probes.mods, probes.n + 1,
			 NULL, &out_len, &err);
	ck_assert_msg(out, "%s", egpu_errmsg());
	ck_assert_msg(!ptxas_usage(out, out_len, "sm_90", tag, "vecadd", &u),
		      "ptxas -v fails on %s/%s.ptx", EGPU_TEST_BUILD, tag);
	free(out);
	free(text);
	return u;
}

START_TEST(vecadd_registers)
{
	static const char *const empty[] = { "jitprobe_empty_empty_entry",
					     "jitprobe_empty_empty_exit" };
	static const char *const timing[] = { "jitprobe_timing_timing_entry",
					      "jitprobe_timing_timing_exit" };
	static const char *const counter[] = { "jitprobe_counter_count_entry",
					       "jitprobe_counter_count_exit" };
	static const struct {
		const char *what;
		const char *const *progs;
	} cases[] = {
		{ "empty", empty }, { "timing", timing }, { "counter", counter },
	};
	size_t len;
	char *text = tu_read_file(PTX_WORKLOADS, &len);
	struct ptxas_usage plain, on, off;

	if (access(EGPU_PTXAS, X_OK))
		return;
	ck_assert(!ptxas_usage(text, len, "sm_90", "vecadd_plain", "vecadd",
			       &plain));
	printf("vecadd, ptxas -v sm_90: plain %u registers, %u bytes stack\n",
	       plain.regs, plain.stack);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char tag[64];

		snprintf(tag, sizeof(tag), "vecadd_%s_inlined", cases[i].what);
		on = vecadd_usage(cases[i].progs, 2, false, tag);
		snprintf(tag, sizeof(tag), "vecadd_%s_called", cases[i].what);
		off = vecadd_usage(cases[i].progs, 2, true, tag);
		printf("  %-8s entry+exit probes: inlined %u registers, %u bytes stack;"
		       " called %u registers, %u bytes stack\n",
		       cases[i].what, on.regs, on.stack, off.regs, off.stack);
		ck_assert_uint_le(on.regs, off.regs);
		/* One 512-byte eBPF stack serves every copy. */
		ck_assert_uint_le(on.stack, 512);
	}
	/* An empty probe, copied in, leaves nothing for the kernel to do. */
	on = vecadd_usage(empty, 2, false, "vecadd_empty_inlined");
	ck_assert_uint_eq(on.regs, plain.regs);
	ck_assert_uint_eq(on.stack, 0);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ptx_inline_jit");
	TCase *tc = tcase_create("jit");

	tcase_add_unchecked_fixture(tc, probes_load, probes_free);
	tcase_set_timeout(tc, 900);
	if (PTX_CORPUS_COUNT) {
		tcase_add_test(tc, every_probe_in_every_kernel);
		tcase_add_test(tc, each_probe_sm90a);
	}
	tcase_add_test(tc, vecadd_registers);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
