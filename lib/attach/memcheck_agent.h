/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck in the agent (memcheck_agent.c): the check in every
 * module the agent instruments, and its report at exit. Called under
 * the agent's lock.
 */
#ifndef EGPU_MEMCHECK_AGENT_H
#define EGPU_MEMCHECK_AGENT_H

#include <stdbool.h>
#include <stdio.h>

#include "egpu.h"

/* Check every access of what @ctx instruments from now on: 0, or -1
 * with a message. */
int memcheck_agent_start(egpu_ctx *ctx);
/* The sites of an instrumentation, for the report's names and lines. */
void memcheck_agent_sites(const struct egpu_report *rep);
/* Take the bad accesses the GPU has logged so far into the report. */
void memcheck_agent_poll(void);
/* Whether this process has a report to give: it checked, or failed to
 * start the check (one that loaded no module, e.g. a shell running the
 * program, must not overwrite the program's report). */
bool memcheck_agent_has_report(void);
/* At exit: the last of them, each site's count, the report on @f (or,
 * the check not started, why there is none). */
void memcheck_agent_finish(FILE *f, bool json);

#endif
