// SPDX-License-Identifier: MIT
/*
 * The attach agent as memcheck's hooks and GPU backend see it (attach.h),
 * played for their tests: the thread's busy flag, and a driver lookup
 * that finds nothing (the hooks' tests hand their functions in).
 */
#include "attach/attach.h"

static __thread bool busy;

bool agent_busy(void)
{
	return busy;
}

bool agent_enter(void)
{
	bool was = busy;

	busy = true;
	return was;
}

void agent_leave(bool was)
{
	busy = was;
}

void *attach_driver_sym(const char *name)
{
	(void)name;
	return NULL;
}
