// SPDX-License-Identifier: MIT
/*
 * hook.c's driver lookup as memcheck's hook and GPU tests see it: finding
 * nothing (the tests hand their functions in). hook.c itself stays out of
 * test programs: its dlsym would stand in for the C library's.
 */
#include "attach/attach.h"

void *attach_driver_sym(const char *name)
{
	(void)name;
	return NULL;
}
