/* SPDX-License-Identifier: MIT */
/*
 * Real nvcc output (tests/ptx/cuda, built at build time): every file parses,
 * the model covers every byte, every kernel gets entry and exit probes
 * with the right counts and nothing else changes; truncated and mutated
 * files never crash the front end.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/module.h"
#include "ptx_util.h"

struct corpus {
	char **paths;
	size_t n;
	char *modules[2]; /* llc_probe.ptx, runtime.ptx */
	size_t module_len[2];
};

static struct corpus corpus;

static void corpus_load(void)
{
	corpus.n = corpus_list(&corpus.paths);
	/* Outside any test: absent modules just leave their cases out. */
	corpus.modules[0] = tu_try_read_file(PTX_MODULES_DIR "/llc_probe.ptx",
					     &corpus.module_len[0]);
	corpus.modules[1] = tu_try_read_file(PTX_MODULES_DIR "/runtime.ptx",
					     &corpus.module_len[1]);
}

static void corpus_free(void)
{
	free_list(corpus.paths, corpus.n);
	free(corpus.modules[0]);
	free(corpus.modules[1]);
}

/* Modules and requests: probe_ptx at entry and exit, llc_probe at exit. */
static size_t setup(struct ptx_text *mods, struct ptx_attach *reqs,
		    size_t *nreq)
{
	size_t n = 1;

	mods[0] = (struct ptx_text){ "probe_ptx", probe_ptx, strlen(probe_ptx) };
	reqs[0] = (struct ptx_attach){ "*", EGPU_ATTACH_ENTRY, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	reqs[1] = (struct ptx_attach){ "*", EGPU_ATTACH_EXIT, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
	*nreq = 2;
	if (corpus.modules[0] && corpus.modules[1]) {
		mods[1] = (struct ptx_text){ "llc_probe", corpus.modules[0],
					     corpus.module_len[0] };
		mods[2] = (struct ptx_text){ "runtime", corpus.modules[1],
					     corpus.module_len[1] };
		reqs[2] = (struct ptx_attach){ "*", EGPU_ATTACH_EXIT, "llc_probe", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL };
		*nreq = 3;
		n = 3;
	}
	return n;
}

START_TEST(corpus_built)
{
	ck_assert_uint_eq(corpus.n, PTX_CORPUS_COUNT);
	ck_assert_msg(corpus.modules[1], "runtime.ptx missing");
}
END_TEST

START_TEST(round_trip)
{
	size_t i;

	for (i = 0; i < corpus.n; i++) {
		size_t len, out_len;
		char *text = tu_read_file(corpus.paths[i], &len), *out;
		struct ptx_module *m;
		int err;

		ck_assert_ptr_nonnull(text);
		err = ptx_parse(corpus.paths[i], text, len, &m);
		ck_assert_msg(!err, "%s", egpu_errmsg());
		ck_assert_msg(!check_coverage(m), "%s: %s", corpus.paths[i],
			      check_coverage(m));
		ck_assert_uint_eq(m->address_size, 64);
		ck_assert_uint_eq(m->sm, 90);
		ptx_module_free(m);
		out = instrument(text, len, NULL, 0, NULL, 0, NULL, &out_len, &err);
		ck_assert_msg(out, "%s", egpu_errmsg());
		ck_assert_uint_eq(out_len, len);
		ck_assert(!memcmp(out, text, len));
		free(out);
		free(text);
	}
}
END_TEST

static void check_report(const char *path, const char *text,
			 const struct ptx_report *rep, size_t nreq,
			 unsigned *exits)
{
	size_t k;

	ck_assert_msg(rep->nkernels > 0, "%s: no kernels", path);
	*exits = 0;
	for (k = 0; k < rep->nkernels; k++) {
		const struct ptx_kernel_info *ki = &rep->kernels[k];
		unsigned want = count_exits(text, ki->name);

		ck_assert_uint_eq(ki->id, k);
		ck_assert_uint_eq(ki->entry_points, 1);
		ck_assert_uint_eq(ki->programs, nreq);
		ck_assert_msg(ki->exit_points == want,
			      "%s: %s: %u exit points, %u ret/exit", path,
			      ki->name, ki->exit_points, want);
		/* One probe at the entry, the others at each exit: copied. */
		ck_assert_uint_eq(ki->inlined,
				  ki->entry_points + ki->exit_points * (nreq - 1));
		*exits += ki->exit_points;
	}
}

START_TEST(instrument_every_kernel)
{
	struct ptx_text mods[3];
	struct ptx_attach reqs[3];
	size_t nreq, nmod = setup(mods, reqs, &nreq), i, bytes = 0;
	uint64_t ns = 0;

	for (i = 0; i < corpus.n; i++) {
		size_t len, out_len;
		char *text = tu_read_file(corpus.paths[i], &len), *out, *back;
		char t_in[32], t_out[32];
		unsigned entries, exits, want_exits;
		struct ptx_report rep;
		uint64_t t0 = now_ns();
		int err;

		out = instrument(text, len, reqs, nreq, mods, nmod, &rep,
				 &out_len, &err);
		ns += now_ns() - t0;
		bytes += len;
		ck_assert_msg(out, "%s: %s", corpus.paths[i], egpu_errmsg());
		check_report(corpus.paths[i], text, &rep, nreq, &want_exits);
		ck_assert_str_eq(ptx_target(out, t_out, sizeof(t_out)),
				 ptx_target(text, t_in, sizeof(t_in)));
		ck_assert_ptr_null(strstr(out, "), probe_ptx,"));
		ck_assert_ptr_null(strstr(out, "), llc_probe,"));
		back = strip_inserted(out, &out_len, &entries, &exits);
		ck_assert_ptr_nonnull(back);
		ck_assert_uint_eq(entries, rep.nkernels);
		ck_assert_uint_eq(exits, want_exits);
		ck_assert_msg(out_len == len && !memcmp(back, text, len),
			      "%s: text outside the inserted blocks changed",
			      corpus.paths[i]);
		ptx_report_free(&rep);
		free(back);
		free(out);
		free(text);
	}
	printf("instrumented %zu files, %zu bytes, in %.2f ms (%.1f MB/s)\n",
	       corpus.n, bytes, ns / 1e6, bytes / (ns / 1e3));
}
END_TEST

static void fuzz_one(const char *text, size_t len, const struct ptx_text *mods,
		     size_t nmod, const struct ptx_attach *reqs, size_t nreq)
{
	struct ptx_module *m;
	size_t out_len;
	int err;
	char *out = instrument(text, len, reqs, nreq, mods, nmod, NULL,
			       &out_len, &err);

	ck_assert_msg(err == 0 || err == EGPU_EFORMAT || err == EGPU_ENOENT ||
			      err == EGPU_ENOTSUP || err == EGPU_EEXIST,
		      "unexpected error %d: %s", err, egpu_errmsg());
	ck_assert(err == 0 || egpu_errmsg()[0]);
	if (!out)
		return;
	/* What comes out always parses again. */
	err = ptx_parse("output", out, out_len, &m);
	ck_assert_msg(!err, "output does not parse: %s", egpu_errmsg());
	ptx_module_free(m);
	free(out);
}

START_TEST(fuzz_truncations)
{
	struct ptx_text mods[3];
	struct ptx_attach reqs[3];
	size_t nreq, nmod = setup(mods, reqs, &nreq), i, cut;

	for (i = 0; i < corpus.n; i++) {
		size_t len;
		char *text = tu_read_file(corpus.paths[i], &len);

		for (cut = 0; cut < 100; cut++)
			fuzz_one(text, len * cut / 100, mods, nmod, reqs, nreq);
		for (cut = 1; cut < 40 && cut < len; cut++)
			fuzz_one(text, len - cut, mods, nmod, reqs, nreq);
		free(text);
	}
}
END_TEST

START_TEST(fuzz_mutations)
{
	static const char bytes[] = "{}()[];,:@!%.$\"/*\n\t 0aZ_<>=+-\\\x80";
	struct ptx_text mods[3];
	struct ptx_attach reqs[3];
	size_t nreq, nmod = setup(mods, reqs, &nreq), i, round;
	unsigned seed = 12345;

	for (i = 0; i < corpus.n; i++) {
		size_t len;
		char *text = tu_read_file(corpus.paths[i], &len);
		char *copy = malloc(len + 1);

		for (round = 0; round < 100; round++) {
			int k, changes = 1 + rand_r(&seed) % 4;

			memcpy(copy, text, len + 1);
			for (k = 0; k < changes; k++)
				copy[(size_t)rand_r(&seed) % len] =
					bytes[rand_r(&seed) % (sizeof(bytes) - 1)];
			fuzz_one(copy, len, mods, nmod, reqs, nreq);
		}
		free(copy);
		free(text);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ptx_corpus");
	TCase *tc = tcase_create("corpus");
	SRunner *sr;
	int failed;

	if (PTX_CORPUS_COUNT == 0) {
		fprintf(stderr, "no PTX corpus (nvcc missing): skipped\n");
		return 77;
	}
	corpus_load();
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, corpus_built);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, instrument_every_kernel);
	tcase_add_test(tc, fuzz_truncations);
	tcase_add_test(tc, fuzz_mutations);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	corpus_free();
	return failed ? 1 : 0;
}
