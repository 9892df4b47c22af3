/* SPDX-License-Identifier: MIT */
/*
 * Every program is verified before it is translated, for the way it will
 * run: probes at load for the attach point their section names (and again
 * when attached elsewhere), direct runs for the size of the memory they
 * are given. Results are remembered, so a program is checked once per use.
 */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "verifier/verifier.h"

/* The verifier's account of a refusal, line by line, at debug level. */
static void log_refusal(const struct egpu_logger *lg, const struct strbuf *sb)
{
	const char *p = sb->buf, *nl;

	while (p && *p) {
		nl = strchr(p, '\n');
		log_msg(lg, EGPU_LOG_DEBUG, "%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
		p = nl ? nl + 1 : NULL;
	}
}

/*
 * What the translator learns from the verifier (jit_input.never_stack)
 * follows from the instructions of an accepted program, whatever the
 * attach point, so it is asked for until the first acceptance, which
 * precedes every translation. Without memory for it the translation
 * keeps its run-time tests.
 */
static void ask_facts(const struct egpu_prog *prog, struct verifier_opts *o)
{
	if (!prog->never_stack)
		o->never_stack = calloc(prog->spec->insn_cnt, sizeof(bool));
}

int prog_verify(struct egpu_prog *prog, enum egpu_attach_point at,
		uint32_t ctx_size)
{
	const struct egpu_logger *lg = &prog->obj->ctx->log;
	bool explain = lg->level >= EGPU_LOG_DEBUG;
	struct strbuf log;
	struct verifier_opts o = {
		.abi = prog->obj->abi,
		.users = prog->obj->users,
		.attach = at,
		.ctx_size = ctx_size,
		.ctx_writable = true,
		.verbose = explain,
		.log = explain ? &log : NULL,
	};
	struct verifier_stats st = { 0 };
	unsigned bit = 1u << at;
	int err = 0;

	if (prog->refused && (prog->malformed ||
			      at == (enum egpu_attach_point)prog->spec->attach))
		return err_set(prog->refused, "%s", prog->refusal);
	sb_init(&log);
	pthread_mutex_lock(&prog->lock);
	if (at != EGPU_ATTACH_NONE ? !(prog->verified & bit) :
	    !(prog->verified & bit) || prog->verified_ctx != ctx_size) {
		ask_facts(prog, &o);
		err = verifier_run(prog->spec, prog->obj->spec.maps,
				   prog->obj->spec.map_cnt, &o, &st);
		if (!err && o.never_stack)
			prog->never_stack = o.never_stack;
		else
			free(o.never_stack);
		if (!err) {
			prog->verified |= bit;
			if (st.params_reach > prog->params_reach)
				prog->params_reach = st.params_reach;
			if (at == EGPU_ATTACH_NONE)
				prog->verified_ctx = ctx_size;
		} else if (explain) {
			log_refusal(lg, &log);
		}
	}
	pthread_mutex_unlock(&prog->lock);
	sb_free(&log);
	return err;
}

int egpu_prog_verdict(const egpu_prog *prog, const char **msg)
{
	if (msg)
		*msg = prog && prog->refused ? prog->refusal : "";
	if (!prog)
		return err_set(EGPU_EINVAL, "egpu_prog_verdict: NULL program");
	return prog->refused;
}

int egpu_prog_verify(egpu_prog *prog, struct egpu_verify_opts *opts)
{
	enum egpu_attach_point at;
	struct verifier_stats st = { 0 };
	struct verifier_opts o = { 0 };
	struct strbuf log;
	size_t len;
	int err;

	if (!prog)
		return err_set(EGPU_EINVAL, "egpu_prog_verify: NULL program");
	if (OPTS_VALID(opts, egpu_verify_opts, "egpu_prog_verify"))
		return EGPU_EINVAL;
	at = OPTS_GET(opts, at_set, false) ? opts->at :
		(enum egpu_attach_point)prog->spec->attach;
	len = OPTS_GET(opts, ctx_len, 0);
	if (len > UINT32_MAX)
		return err_set(EGPU_E2BIG, "egpu_prog_verify: ctx_len above 4 GiB");
	sb_init(&log);
	o = (struct verifier_opts){ .abi = prog->obj->abi,
				    .users = prog->obj->users, .attach = at,
				    .ctx_size = (uint32_t)len, .ctx_writable = true,
				    .verbose = OPTS_GET(opts, verbose, 0), .log = &log };
	/* A program the structural pass refused never reaches the verifier. */
	err = prog->malformed ? err_set(prog->refused, "%s", prog->refusal) :
		verifier_run(prog->spec, prog->obj->spec.maps,
			     prog->obj->spec.map_cnt, &o, &st);
	verifier_report(&log, prog->spec, err, &st);
	OPTS_SET(opts, insns_processed, st.insns_processed);
	OPTS_SET(opts, states, st.states);
	OPTS_SET(opts, verify_ms, st.ms);
	if (OPTS_HAS(opts, log))
		opts->log = sb_detach(&log, NULL);
	sb_free(&log);
	return err;
}
