/* SPDX-License-Identifier: MIT */
/*
 * The restricted-C corpus: every program of progs/NAME.bpf.c carries a
 * comment `expect: accept` or `expect: reject "substring"` above its
 * SEC(...) line; the object built from it at build time must give that
 * verdict. Every program needs a marker and every marker a program.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "elf_progs.h"
#include "verifier/verifier.h"
#include "test_util.h"

struct expectation {
	char func[128];
	char expect[256]; /* "" for accept */
	int seen;
};

static const char *const objects[] = {
	"maps", "loops", "calls", "ctx", "ringbuf", "helpers", "probes",
	"accumulate", "counted", "stack",
};

/* The identifier right before the first '(' of @line. */
static void function_name(const char *line, char *out, size_t len)
{
	const char *paren = strchr(line, '('), *start;

	out[0] = '\0';
	if (!paren)
		return;
	start = paren;
	while (start > line && (start[-1] == '_' ||
				(start[-1] >= 'a' && start[-1] <= 'z') ||
				(start[-1] >= 'A' && start[-1] <= 'Z') ||
				(start[-1] >= '0' && start[-1] <= '9')))
		start--;
	snprintf(out, len, "%.*s", (int)(paren - start), start);
}

static size_t parse_markers(const char *path, struct expectation *ex,
			    size_t max)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t n = 0;
	int state = 0; /* 1: marker seen, 2: SEC seen */

	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *m = strstr(line, "/* expect: ");

		if (m && n < max) {
			char *q = strchr(m, '"');

			memset(&ex[n], 0, sizeof(ex[n]));
			if (q)
				snprintf(ex[n].expect, sizeof(ex[n].expect),
					 "%.*s", (int)strcspn(q + 1, "\""),
					 q + 1);
			ck_assert_msg(q || strstr(m, "accept"),
				      "bad marker in %s: %s", path, line);
			state = 1;
		} else if (state == 1 && strstr(line, "SEC(\"")) {
			state = 2;
		} else if (state == 2 && strchr(line, '(')) {
			function_name(line, ex[n].func, sizeof(ex[n].func));
			n++;
			state = 0;
		}
	}
	fclose(f);
	return n;
}

static int verify(const struct elf_progs *ep, const struct prog_spec *p,
		  struct strbuf *log)
{
	struct verifier_opts o = {
		.abi = EGPU_HELPERS_GPU, .attach = p->attach,
		.verbose = log ? 1 : 0, .log = log,
	};

	/* SEC("run/N"): a direct run over N writable bytes */
	if (!strncmp(p->section, "run/", 4)) {
		o.ctx_size = (uint32_t)atoi(p->section + 4);
		o.ctx_writable = true;
	}
	return verifier_run(p, ep->maps, ep->map_cnt, &o, NULL);
}

static int check_prog(const struct elf_progs *ep,
		      const struct prog_spec *p,
		      struct expectation *ex, size_t nex)
{
	struct expectation *e = NULL;
	const char *msg;
	int err, ok;

	for (size_t i = 0; i < nex; i++)
		if (!strcmp(ex[i].func, p->name))
			e = &ex[i];
	if (!e) {
		fprintf(stderr, "program %s has no expect marker\n", p->name);
		return 0;
	}
	e->seen = 1;
	err = verify(ep, p, NULL);
	msg = egpu_errmsg();
	ok = e->expect[0] ? err == EGPU_EVERIFY && strstr(msg, e->expect) :
	     err == 0;
	if (!ok) {
		struct strbuf log;
		struct strbuf dump;

		sb_init(&log);
		sb_init(&dump);
		verify(ep, p, &log);
		tu_verifier_dump(&dump, p, ep->maps, ep->map_cnt, 0);
		fprintf(stderr, "%s (%s): expected %s \"%s\", got: %s\n%s%s",
			p->name, p->section, e->expect[0] ? "refusal" :
			"acceptance", e->expect, err ? msg : "acceptance",
			dump.buf ? dump.buf : "", log.buf ? log.buf : "");
		sb_free(&log);
		sb_free(&dump);
	}
	return ok;
}

START_TEST(c_object)
{
	struct expectation ex[64];
	struct elf_progs ep;
	char src[512], obj[512];
	size_t nex;
	int passed = 0;

	snprintf(src, sizeof(src), "%s/progs/%s.bpf.c", EGPU_TEST_DATA,
		 objects[_i]);
	snprintf(obj, sizeof(obj), "%s/%s.o", EGPU_TEST_BUILD, objects[_i]);
	nex = parse_markers(src, ex, 64);
	ck_assert_int_eq(elf_progs_load(obj, &ep), 0);
	for (size_t i = 0; i < ep.prog_cnt; i++)
		passed += check_prog(&ep, &ep.progs[i], ex, nex);
	for (size_t i = 0; i < nex; i++)
		ck_assert_msg(ex[i].seen, "%s: no program %s", objects[_i],
			      ex[i].func);
	ck_assert_msg(passed == (int)ep.prog_cnt && ep.prog_cnt == nex,
		      "%s: %d of %zu programs as expected", objects[_i],
		      passed, ep.prog_cnt);
	printf("%s: %zu programs as expected\n", objects[_i], ep.prog_cnt);
	elf_progs_free(&ep);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_c");
	TCase *tc = tcase_create("c");

	tcase_add_loop_test(tc, c_object, 0, (int)ARRAY_SIZE(objects));
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
