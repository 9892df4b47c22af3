/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ptx/module.h"
#include "ptx_util.h"

const char probe_ptx[] =
	"//\n// hand-written probe module\n//\n"
	".version 7.8\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	"\t// .globl\tprobe_ptx\n"
	".visible .func (.param .b64 ret) probe_ptx(.param .b64 ctx, .param .b64 ctx_len)\n"
	"{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b32 %r<2>;\n"
	"\t.reg .b64 %rd<5>;\n"
	"\tld.param.u64 %rd1, [ctx];\n"
	"\tld.u64 %rd2, [%rd1];           // kernel_id\n"
	"\tld.u32 %r1, [%rd1+16];         /* params_size */\n"
	"\tsetp.eq.u32 %p1, %r1, 0;\n"
	"\t@%p1 bra $L_no_params;\n"
	"\tld.u64 %rd3, [%rd1+8];\n"
	"\tld.u8 %rd4, [%rd3];\n"
	"\tadd.u64 %rd2, %rd2, %rd4;\n"
	"$L_no_params:\n"
	"\tst.param.b64 [ret], %rd2;\n"
	"\tret;\n"
	"}\n";

const char exits_ptx[] =
	"// exits of every kind\n"
	".version 7.0\n"
	".target sm_80\n"
	".address_size 64\n"
	"\n"
	".visible .entry k(.param .u64 k_p, .param .u32 k_n)\n"
	"{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .b32 %r<4>;\n"
	"\n"
	"\tld.param.u32 %r1, [k_n];\n"
	"\tsetp.eq.u32 %p1, %r1, 0;\n"
	"\t@%p1 ret;\n"
	"\tsetp.gt.u32 %p2, %r1, 5;\n"
	"\t@!%p2 bra $L_end;\n"
	"\texit;\n"
	"$L_end:\n"
	"\tret;\n"
	"}\n";

const char fall_off_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".entry open_end()\n{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 1;\n}\n"
	".entry debug_end()\n{\n\tret;\n$L__tmp1:\n$L__func_end0:\n}\n"
	".entry empty()\n{\n}\n";

const char weak_app_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".weak .func (.param .b32 r) w(.param .b32 x)\n{\n"
	"\t.reg .b32 %r<3>;\n\tld.param.u32 %r1, [x];\n"
	"\tadd.u32 %r2, %r1, 1;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n"
	".visible .func (.param .b64 r) app_helper(.param .b64 a)\n{\n"
	"\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [a];\n"
	"\tst.param.b64 [r], %rd1;\n\tret;\n}\n"
	".visible .entry k(.param .u64 k_p)\n{\n\tret;\n}\n";

const char weak_probe_ptx[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".extern .func (.param .b64 r) app_helper(.param .b64 a);\n"
	".weak .func (.param .b32 r) w(.param .b32 x)\n{\n"
	"\t.reg .b32 %r<3>;\n\tld.param.u32 %r1, [x];\n"
	"\tadd.u32 %r2, %r1, 2;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n"
	".visible .func (.param .b64 r) p(.param .b64 c, .param .b64 n)\n{\n"
	"\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [c];\n"
	"\t{\n\t.param .b32 a0;\n\tst.param.b32 [a0], 1;\n\t.param .b32 r0;\n"
	"\tcall.uni (r0), w, (a0);\n\tld.param.b32 %r1, [r0];\n\t}\n"
	"\t{\n\t.param .b64 a1;\n\tst.param.b64 [a1], %rd1;\n\t.param .b64 r1;\n"
	"\tcall.uni (r1), app_helper, (a1);\n\tld.param.b64 %rd2, [r1];\n\t}\n"
	"\tst.param.b64 [r], %rd2;\n\tret;\n}\n";

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t corpus_list(char ***paths)
{
	DIR *d = opendir(PTX_CORPUS_DIR);
	struct dirent *e;
	size_t n = 0;

	*paths = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		char **v;

		if (l < 5 || strcmp(e->d_name + l - 4, ".ptx"))
			continue;
		v = realloc(*paths, (n + 1) * sizeof(*v));
		if (!v)
			break;
		*paths = v;
		v[n] = malloc(strlen(PTX_CORPUS_DIR) + l + 2);
		sprintf(v[n++], "%s/%s", PTX_CORPUS_DIR, e->d_name);
	}
	closedir(d);
	qsort(*paths, n, sizeof(**paths), by_name);
	return n;
}

void free_list(char **paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

char *strip_inserted(const char *out, size_t *len, unsigned *entry_blocks,
		     unsigned *exit_blocks)
{
	static const char begin[] = "// begin egpu ";
	static const char end[] = "// end egpu ";
	char *res = malloc(*len + 1);
	const char *pos = out, *b;
	size_t n = 0;

	*entry_blocks = *exit_blocks = 0;
	while ((b = strstr(pos, begin))) {
		const char *kind = b + strlen(begin), *e, *nl;
		/* Blocks after the header start with an empty line. */
		bool linked = !strncmp(kind, "linked", 6) ||
			      !strncmp(kind, "mem texts", 9);
		const char *start = linked ? b - 2 : b;

		*entry_blocks += !strncmp(kind, "entry", 5);
		*exit_blocks += !strncmp(kind, "exit", 4);
		e = strstr(b, end);
		nl = e ? strchr(e, '\n') : NULL;
		if (!nl || start < pos) {
			free(res);
			return NULL;
		}
		memcpy(res + n, pos, (size_t)(start - pos));
		n += (size_t)(start - pos);
		pos = nl + 1 + (linked ? 0 : 1);
	}
	strcpy(res + n, pos);
	*len = n + strlen(pos);
	return res;
}

/* The body of kernel @name: from its .entry to the "}" line closing it. */
static const char *kernel_body(const char *ptx, const char *name,
			       const char **end)
{
	char head[512];
	const char *h, *open;

	snprintf(head, sizeof(head), ".entry %s(", name);
	h = strstr(ptx, head);
	open = h ? strstr(h, "\n{\n") : NULL;
	*end = open ? strstr(open, "\n}\n") : NULL;
	return *end ? open : NULL;
}

unsigned count_exits(const char *ptx, const char *name)
{
	const char *end, *line = kernel_body(ptx, name, &end);
	unsigned n = 0;
	regex_t re;

	if (!line || regcomp(&re,
			     "^[ \t]*(@!?[%$A-Za-z_][A-Za-z0-9_$]*[ \t]+)?(ret|exit)(\\.uni)?[ \t]*;",
			     REG_EXTENDED | REG_NOSUB))
		return ~0u;
	while (line && line < end) {
		const char *nl = strchr(line, '\n');
		size_t l = nl ? (size_t)(nl - line) : strlen(line);
		char *copy = strndup(line, l);

		n += copy && !regexec(&re, copy, 0, NULL, 0);
		free(copy);
		line = nl ? nl + 1 : NULL;
	}
	regfree(&re);
	return n;
}

const char *ptx_target(const char *ptx, char *buf, size_t n)
{
	const char *t = strstr(ptx, "\n.target ");
	size_t l;

	if (!t || n == 0)
		return NULL;
	t += strlen("\n.target ");
	l = strcspn(t, ", \t\r\n");
	if (l >= n)
		l = n - 1;
	memcpy(buf, t, l);
	buf[l] = '\0';
	return buf;
}

static int save(const char *ptx, size_t len, const char *tag, char *path,
		size_t n)
{
	FILE *f;

	snprintf(path, n, "%s/%s.ptx", EGPU_TEST_BUILD, tag);
	f = fopen(path, "wb");
	if (!f || fwrite(ptx, 1, len, f) != len) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

int run_ptxas(const char *ptx, size_t len, const char *arch, const char *tag)
{
	char path[1024], cmd[3072];
	int st;

	if (save(ptx, len, tag, path, sizeof(path)))
		return -1;
	snprintf(cmd, sizeof(cmd), "'%s' -arch=%s '%s' -o '%s.cubin'",
		 EGPU_PTXAS, arch, path, path);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int ptxas_usage(const char *ptx, size_t len, const char *arch, const char *tag,
		const char *func, struct ptxas_usage *u)
{
	char path[1024], cmd[3072], line[1024], want[512];
	bool in_func = false, regs = false, stack = false;
	FILE *p;

	if (save(ptx, len, tag, path, sizeof(path)))
		return -1;
	snprintf(cmd, sizeof(cmd), "'%s' -v -arch=%s '%s' -o '%s.cubin' 2>&1",
		 EGPU_PTXAS, arch, path, path);
	snprintf(want, sizeof(want), "Function properties for %s\n", func);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		const char *s;

		if (strstr(line, "Function properties for "))
			in_func = strstr(line, want) != NULL;
		else if (in_func && (s = strstr(line, "bytes stack frame")))
			stack = sscanf(line, " %u bytes stack frame", &u->stack) == 1;
		else if (in_func && (s = strstr(line, "Used ")))
			regs = sscanf(s, "Used %u registers", &u->regs) == 1;
	}
	return pclose(p) == 0 && regs && stack ? 0 : -1;
}

char *instrument(const char *ptx, size_t len, const struct ptx_attach *reqs,
		 size_t nreq, const struct ptx_text *mods, size_t nmod,
		 struct ptx_report *rep, size_t *out_len, int *err)
{
	struct strbuf sb;

	sb_init(&sb);
	*err = ptx_instrument(ptx, len, reqs, nreq, mods, nmod, &sb, rep);
	if (*err) {
		sb_free(&sb);
		return NULL;
	}
	return sb_detach(&sb, out_len);
}

/* Only white space and comments between @a and @b. */
static bool blank(const char *a, const char *b)
{
	while (a < b) {
		if (strchr(" \t\r\n\f\v", *a)) {
			a++;
		} else if (a + 1 < b && a[0] == '/' && a[1] == '/') {
			while (a < b && *a != '\n')
				a++;
		} else if (a + 1 < b && a[0] == '/' && a[1] == '*') {
			const char *e = strstr(a + 2, "*/");

			if (!e || e + 2 > b)
				return false;
			a = e + 2;
		} else {
			return false;
		}
	}
	return true;
}

static const char *check_body(const struct ptx_func *f)
{
	uint32_t i;

	if (!f->defined)
		return NULL;
	if (!f->nstmts || f->stmts[0].first != f->body + 1)
		return "body does not start after its '{'";
	for (i = 1; i < f->nstmts; i++)
		if (f->stmts[i].first != f->stmts[i - 1].last)
			return "statements do not follow each other";
	if (f->stmts[f->nstmts - 1].kind != ST_CLOSE ||
	    f->stmts[f->nstmts - 1].depth != 1)
		return "body does not end with its '}'";
	return NULL;
}

const char *check_coverage(const struct ptx_module *m)
{
	uint32_t i, prev = 0;

	for (i = 0; i < m->ntoks; i++) {
		const struct tok *t = &m->toks[i];

		if (t->off < prev || !blank(m->text + prev, m->text + t->off))
			return "text between tokens is not blank";
		prev = t->off + t->len;
	}
	if (m->toks[m->ntoks - 1].kind != TOK_EOF || prev != m->len)
		return "tokens do not reach the end";
	for (i = 0; i < m->nitems; i++) {
		const struct ptx_item *it = &m->items[i];
		const char *why;

		if (it->first != (i ? m->items[i - 1].last : 0) ||
		    it->last <= it->first)
			return "items do not follow each other";
		why = it->kind == IT_FUNC ? check_body(it->func) : NULL;
		if (why)
			return why;
	}
	if ((m->nitems ? m->items[m->nitems - 1].last : 0) != m->ntoks - 1)
		return "items do not reach the end";
	return NULL;
}
