/* SPDX-License-Identifier: MIT */
/*
 * Whether the calling thread is inside libegpu or the agent (attach.h):
 * their own driver calls (module loads, allocations) pass the hooks
 * untouched. Below every other file of the agent, which all ask it.
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
