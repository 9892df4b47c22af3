/* SPDX-License-Identifier: MIT */
/*
 * ptxas accepts everything the instrumentation produces: every corpus
 * file with entry and exit probes from a hand-written module and from llc,
 * linked with a runtime module built by nvcc, and the hand-written cases
 * (guarded and labelled exits, control falling off the end, probes calling
 * application functions). Skipped where
 * ptxas is absent.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptx_util.h"
#include "test_util.h"

/* Instrument @text with @mods/@reqs and assemble it for its own target. */
static void assemble(const char *tag, const char *text, size_t len,
		     const struct ptx_text *mods, size_t nmod,
		     const struct ptx_attach *reqs, size_t nreq)
{
	char arch[32];
	size_t out_len;
	int err;
	char *out = instrument(text, len, reqs, nreq, mods, nmod, NULL,
			       &out_len, &err);

	ck_assert_msg(out, "%s: %s", tag, egpu_errmsg());
	ck_assert_ptr_nonnull(ptx_target(out, arch, sizeof(arch)));
	ck_assert_msg(run_ptxas(out, out_len, arch, tag) == 0,
		      "ptxas -arch=%s rejects %s/%s.ptx", arch, EGPU_TEST_BUILD,
		      tag);
	free(out);
}

START_TEST(corpus)
{
	char **paths, *llc, *runtime;
	size_t n = corpus_list(&paths), i, llc_len, rt_len, nmod = 2, nreq = 2;
	struct ptx_text mods[4] = {
		{ "probe_ptx", probe_ptx, strlen(probe_ptx) },
	};
	struct ptx_attach reqs[] = {
		{ "*", EGPU_ATTACH_ENTRY, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "*", EGPU_ATTACH_EXIT, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "*", EGPU_ATTACH_EXIT, "llc_probe", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
	};

	ck_assert_uint_eq(n, PTX_CORPUS_COUNT);
	runtime = tu_read_file(PTX_MODULES_DIR "/runtime.ptx", &rt_len);
	mods[1] = (struct ptx_text){ "runtime", runtime, rt_len };
	llc = tu_try_read_file(PTX_MODULES_DIR "/llc_probe.ptx", &llc_len);
	if (llc) {
		/* Twice: its global probe is linked once, its local helper twice. */
		mods[2] = (struct ptx_text){ "llc_probe", llc, llc_len };
		mods[3] = mods[2];
		nmod = 4;
		nreq = 3;
	}
	for (i = 0; i < n; i++) {
		const char *base = strrchr(paths[i], '/') + 1;
		char tag[256];
		size_t len;
		char *text = tu_read_file(paths[i], &len);

		snprintf(tag, sizeof(tag), "out_%s", base);
		tag[strlen(tag) - 4] = '\0';
		assemble(tag, text, len, mods, nmod, reqs, nreq);
		free(text);
	}
	free(llc);
	free(runtime);
	free_list(paths, n);
}
END_TEST

START_TEST(hand_written)
{
	char *probe80 = strdup(probe_ptx);
	struct ptx_text mod = { "probe_ptx", probe80, strlen(probe_ptx) };
	struct ptx_attach reqs[] = {
		{ "*", EGPU_ATTACH_ENTRY, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "*", EGPU_ATTACH_EXIT, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
		{ "*", EGPU_ATTACH_EXIT, "probe_ptx", false, false, 0, 0, NULL, false, false, 0, 0, NULL, NULL },
	};

	memcpy(strstr(probe80, ".target sm_90"), ".target sm_80", 13);
	assemble("out_exits", exits_ptx, strlen(exits_ptx), &mod, 1, reqs, 3);
	mod.text = probe_ptx;
	assemble("out_fall_off", fall_off_ptx, strlen(fall_off_ptx), &mod, 1,
		 reqs, 3);
	mod = (struct ptx_text){ "weak", weak_probe_ptx, strlen(weak_probe_ptx) };
	reqs[0].func = reqs[1].func = reqs[2].func = "p";
	assemble("out_weak", weak_app_ptx, strlen(weak_app_ptx), &mod, 1, reqs, 3);
	free(probe80);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ptx_ptxas");
	TCase *tc = tcase_create("ptxas");

	if (access(EGPU_PTXAS, X_OK)) {
		fprintf(stderr, "no ptxas at '%s': skipped\n", EGPU_PTXAS);
		return 77;
	}
	tcase_set_timeout(tc, 900);
	if (PTX_CORPUS_COUNT)
		tcase_add_test(tc, corpus);
	tcase_add_test(tc, hand_written);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
