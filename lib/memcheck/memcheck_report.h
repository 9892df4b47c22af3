/* SPDX-License-Identifier: MIT */
/*
 * egpu memcheck's report: bad accesses as the probe sent them
 * (struct mc_violation), deduplicated by site (the first kept, the rest
 * counted), at most max_shown sites printed, as text or JSON.
 */
#ifndef EGPU_MEMCHECK_REPORT_H
#define EGPU_MEMCHECK_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/memcheck_layout.h"

/* What the host knows of a site. */
struct mc_site {
	const char *kernel; /* its kernel, demangled */
	const char *file;   /* source file from .loc; NULL: line is the PTX's */
	uint32_t line;
};

struct mc_report_opts {
	size_t sz;
	uint32_t max_shown; /* sites printed; 0: 20 */
	/* The site's kernel and line; false: unknown (printed as its number). */
	bool (*site)(void *user, uint32_t site, struct mc_site *out);
	/* Where a bad global access lies ("4 bytes past the end of ..."),
	 * asked once per site, when its first access arrives. */
	void (*where)(void *user, const struct mc_violation *v, char *buf,
		      size_t n);
	void *user;
};
#define mc_report_opts__last_field user

struct mc_report;

/* NULL: out of memory or bad options (message set). */
struct mc_report *mc_report_new(const struct mc_report_opts *opts);
void mc_report_free(struct mc_report *r);
/* Count @v; 0 or EGPU_ENOMEM (then counted, not kept). */
int mc_report_add(struct mc_report *r, const struct mc_violation *v);
/* Site @site made @count bad accesses in all (the check sends only the
 * first of each site and counts the rest); a site not seen, or a count
 * below what was added, changes nothing. */
void mc_report_set_count(struct mc_report *r, uint32_t site, uint64_t count);
/* Bad accesses seen, and the sites they came from. */
uint64_t mc_report_total(const struct mc_report *r);
size_t mc_report_sites(const struct mc_report *r);
/* The number of the @i-th site seen (@i below mc_report_sites()). */
uint32_t mc_report_site_at(const struct mc_report *r, size_t i);
/* The @i-th site seen: its first access, where that lay ("" unknown)
 * and its count. */
void mc_report_entry(const struct mc_report *r, size_t i,
		     const struct mc_violation **first, const char **where,
		     uint64_t *count);
/* The site's kernel and line; false: the host does not know it. */
bool mc_report_site_name(const struct mc_report *r, uint32_t site,
			 struct mc_site *out);
/* The report, malloc'd (NULL: out of memory); sites in order of their
 * first access. */
char *mc_report_text(const struct mc_report *r, bool json);

#endif
