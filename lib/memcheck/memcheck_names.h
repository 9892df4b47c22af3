/* SPDX-License-Identifier: MIT */
/*
 * What a memcheck report calls each site: its kernel (demangled), source
 * file and line, kept from the reports of the instrumentations that
 * numbered the sites (a context numbers them across its modules).
 */
#ifndef EGPU_MEMCHECK_NAMES_H
#define EGPU_MEMCHECK_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egpu.h"
#include "memcheck/memcheck_report.h"

struct mc_name {
	char *kernel;
	char *file; /* NULL: line is the PTX's */
	uint32_t line;
};

/* Zeroed: none yet. */
struct mc_names {
	struct mc_name *v; /* by site number */
	size_t n;
};

/* The sites of @rep; 0 or EGPU_ENOMEM (message set; those named stay). */
int mc_names_add(struct mc_names *names, const struct egpu_report *rep);
/* mc_report_opts.site over @user, a struct mc_names. */
bool mc_names_site(void *user, uint32_t site, struct mc_site *out);
void mc_names_clear(struct mc_names *names);

#endif
