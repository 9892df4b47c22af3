/* SPDX-License-Identifier: MIT */
/*
 * Host probes: which program runs at which CUDA API function, and running
 * them. The table is read from the probe before the application looks up
 * any driver function (so only the hooks it needs are handed out); the
 * programs themselves come from the agent's object, loaded in the
 * application's CUDA context, where they share the GPU probes' maps.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"
#include "attach/uprobe.h"

#define UPROBES_MAX 32

struct uprobe {
	char *prog_name;
	egpu_prog *prog;     /* from the agent's object, once resolved */
	enum host_fn fn;
	bool ret;            /* uretprobe */
	bool failed;         /* its error was printed: not run again */
};

static struct uprobe uprobes[UPROBES_MAX];
static size_t nuprobes;
static bool wanted[HOST_FN_CNT];
static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static __thread bool in_probe;

static const char *const fn_names[] = {
#define HOST_FN_NAME(fn) #fn,
	HOST_FNS(HOST_FN_NAME)
#undef HOST_FN_NAME
};

static bool attach_is_host_prog(const egpu_prog *p)
{
	enum egpu_attach_point at = egpu_prog_attach_point(p);

	return at == EGPU_ATTACH_UPROBE || at == EGPU_ATTACH_URETPROBE;
}

const char *host_fn_name(enum host_fn fn)
{
	return fn < HOST_FN_CNT ? fn_names[fn] : "?";
}

enum host_fn host_fn_find(const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; i < HOST_FN_CNT; i++) {
		const char *f = fn_names[i];
		size_t fl = strlen(f);

		if (!strcmp(f, name) || (fl == n + 3 && !strncmp(f, name, n) &&
					 !strcmp(f + n, "_v2")))
			return (enum host_fn)i;
	}
	return HOST_FN_CNT;
}

static void list_fns(void)
{
	fprintf(stderr, ATTACH_MSG "functions host probes can name:");
	for (int i = 0; i < HOST_FN_CNT; i++)
		fprintf(stderr, " %s", fn_names[i]);
	fputc('\n', stderr);
}

static void add(const egpu_prog *p, const char *func)
{
	enum egpu_attach_point at = egpu_prog_attach_point(p);
	enum host_fn fn;

	if (!*func) {
		fprintf(stderr, ATTACH_MSG "prog '%s' (section '%s') names no function: give one with --uprobe %s=FUNCTION\n",
			egpu_prog_name(p), egpu_prog_section(p), egpu_prog_name(p));
		return;
	}
	fn = host_fn_find(func);
	if (fn == HOST_FN_CNT) {
		fprintf(stderr, ATTACH_MSG "prog '%s': '%s' is not a CUDA API function egpu attach hooks\n",
			egpu_prog_name(p), func);
		list_fns();
		return;
	}
	if (nuprobes == UPROBES_MAX) {
		fprintf(stderr, ATTACH_MSG "prog '%s': more than %d host probes\n",
			egpu_prog_name(p), UPROBES_MAX);
		return;
	}
	uprobes[nuprobes++] = (struct uprobe){
		strdup(egpu_prog_name(p)), NULL, fn,
		at == EGPU_ATTACH_URETPROBE, false };
	wanted[fn] = true;
}

/* The function @spec (PROG=FUNC,...) gives @prog, or NULL. */
static const char *spec_func(const char *spec, const char *prog, char *buf,
			     size_t size)
{
	size_t n = strlen(prog);

	for (const char *s = spec; s && *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
		size_t len = strcspn(s, ",");

		if (len > n + 1 && !strncmp(s, prog, n) && s[n] == '=') {
			snprintf(buf, size, "%.*s", (int)(len - n - 1), s + n + 1);
			return buf;
		}
	}
	return NULL;
}

/* Every PROG of @spec must be a host probe of @obj. */
static void check_spec(const egpu_obj *obj, const char *spec)
{
	for (const char *s = spec; s && *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
		char name[128];
		const egpu_prog *p;

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(s, "=,"), s);
		p = egpu_obj_prog(obj, name);
		if (!p || s[strlen(name)] != '=')
			fprintf(stderr, ATTACH_MSG "--uprobe '%.*s': expected PROG=FUNCTION with a program of the probe\n",
				(int)strcspn(s, ","), s);
		else if (!attach_is_host_prog(p))
			fprintf(stderr, ATTACH_MSG "--uprobe %s: prog '%s' is in section '%s', not uprobe or uretprobe\n",
				name, name, egpu_prog_section(p));
	}
}

static void uprobe_scan(const char *probe, const char *spec)
{
	EGPU_OPTS(egpu_ctx_opts, co, .offline = true,
		  .log_level = EGPU_LOG_ERROR);
	egpu_ctx *ctx = egpu_ctx_new(&co);
	egpu_obj *obj = ctx ? egpu_load(ctx, probe, NULL) : NULL;
	const egpu_prog *p = NULL;
	char buf[128];

	while (obj && (p = egpu_obj_next_prog(obj, p))) {
		const char *f = spec_func(spec, egpu_prog_name(p), buf, sizeof(buf));
		const char *why;

		if (!attach_is_host_prog(p))
			continue;
		if (egpu_prog_verdict(p, &why)) {
			fprintf(stderr, ATTACH_MSG "host probe '%s' refused: %s\n",
				egpu_prog_name(p), why);
			continue;
		}
		add(p, f ? f : egpu_prog_kernel(p));
	}
	if (obj)
		check_spec(obj, spec);
	egpu_ctx_free(ctx);
}

bool uprobe_wanted(enum host_fn fn)
{
	return fn < HOST_FN_CNT && wanted[fn];
}

static void resolve(void)
{
	egpu_obj *obj = agent_obj();

	for (size_t i = 0; obj && i < nuprobes; i++) {
		struct uprobe *u = &uprobes[i];

		u->prog = egpu_obj_prog(obj, u->prog_name);
		fprintf(stderr, ATTACH_MSG "host probe '%s' on %s (%s)\n",
			u->prog_name, host_fn_name(u->fn),
			u->ret ? "uretprobe" : "uprobe");
	}
}

static void run(struct uprobe *u, struct egpu_pt_regs *regs)
{
	EGPU_OPTS(egpu_run_opts, ro, .ctx = regs, .ctx_len = sizeof(*regs),
		  .gpu_maps = true);

	if (!u->prog || u->failed || !egpu_prog_run(u->prog, &ro))
		return;
	u->failed = true; /* benign race: at worst printed twice */
	fprintf(stderr, ATTACH_MSG "host probe '%s' on %s: %s; not run again\n",
		u->prog_name, host_fn_name(u->fn), egpu_errmsg());
}

void uprobe_fire(enum host_fn fn, struct egpu_pt_regs *regs, bool ret,
		 uint64_t result)
{
	if (!wanted[fn] || in_probe || agent_busy())
		return;
	in_probe = true;
	pthread_once(&resolved, resolve);
	if (ret)
		regs->ax = result;
	for (size_t i = 0; i < nuprobes; i++)
		if (uprobes[i].fn == fn && uprobes[i].ret == ret)
			run(&uprobes[i], regs);
	in_probe = false;
}

/* Before main, before any hook is handed out (the agent reads the rest
 * of EGPU_ATTACH* in its own constructor). */
__attribute__((constructor)) static void scan_at_start(void)
{
	const char *probe = getenv("EGPU_ATTACH");

	if (probe && *probe)
		uprobe_scan(probe, getenv("EGPU_ATTACH_UPROBES"));
}
