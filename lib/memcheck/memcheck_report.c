/* SPDX-License-Identifier: MIT */
/*
 * The report of egpu memcheck (memcheck_report.h): one entry per site,
 * in the order sites first went wrong, each with its first access, where
 * that access lay, and how many followed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "memcheck/memcheck_report.h"
#include "memcheck/memcheck_table.h"
#include "core/core.h"
#include "egpu/ctx.h"
#include "trace/writers.h"

#define WHERE_LEN 400

struct site_entry {
	struct mc_violation first;
	uint64_t count;
	char where[WHERE_LEN];
};

struct mc_report {
	struct mc_report_opts o;
	struct site_entry *sites; /* in order of first access */
	size_t nsites, cap;
	uint64_t total;
};

struct mc_report *mc_report_new(const struct mc_report_opts *opts)
{
	struct mc_report *r;

	if (OPTS_VALID(opts, mc_report_opts, "mc_report_new"))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		err_set(EGPU_ENOMEM, "memcheck: no memory for the report");
		return NULL;
	}
	r->o.max_shown = OPTS_GET(opts, max_shown, 0) ?: 20;
	r->o.site = OPTS_GET(opts, site, NULL);
	r->o.where = OPTS_GET(opts, where, NULL);
	r->o.user = OPTS_GET(opts, user, NULL);
	return r;
}

void mc_report_free(struct mc_report *r)
{
	if (!r)
		return;
	free(r->sites);
	free(r);
}

static const char *kind_word(uint16_t kind)
{
	static const char *const w[] = { [EGPU_MEM_LOAD] = "load",
					 [EGPU_MEM_STORE] = "store",
					 [EGPU_MEM_ATOMIC] = "atomic",
					 [EGPU_MEM_ASYNC] = "async copy" };

	return kind < ARRAY_SIZE(w) && w[kind] ? w[kind] : "access";
}

static const char *space_word(uint16_t space)
{
	static const char *const w[] = { [EGPU_SPACE_GENERIC] = "generic",
					 [EGPU_SPACE_GLOBAL] = "global",
					 [EGPU_SPACE_SHARED] = "shared",
					 [EGPU_SPACE_LOCAL] = "local",
					 [EGPU_SPACE_CONST] = "const",
					 [EGPU_SPACE_PARAM] = "param" };

	return space < ARRAY_SIZE(w) ? w[space] : "unknown";
}

/* A shared or local access against its window: @v->addr is its offset
 * there, @v->bound the window's size. */
static void window_where(const struct mc_violation *v, char *buf, size_t n)
{
	const char *what = v->space == EGPU_SPACE_SHARED
				   ? "the block's %s-byte shared memory"
				   : "the thread's %s-byte local frame";
	char size[32], d[32], whole[96];

	snprintf(whole, sizeof(whole), what, mc_commas(v->bound, size));
	if (v->addr == v->bound)
		snprintf(buf, n, "just past the end of %s", whole);
	else if (v->addr > v->bound)
		snprintf(buf, n, "%s bytes past the end of %s",
			 mc_commas(v->addr - v->bound, d), whole);
	else
		snprintf(buf, n, "at offset %s of %s, running %s bytes past its end",
			 mc_commas(v->addr, d), whole,
			 mc_commas(v->addr + v->size - v->bound, size));
}

static void where_of(const struct mc_report *r, const struct mc_violation *v,
		     char *buf, size_t n)
{
	buf[0] = '\0';
	if (v->space == EGPU_SPACE_SHARED || v->space == EGPU_SPACE_LOCAL)
		window_where(v, buf, n);
	else if (r->o.where)
		r->o.where(r->o.user, v, buf, n);
}

static struct site_entry *find(const struct mc_report *r, uint32_t site)
{
	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i].first.site == site)
			return &r->sites[i];
	return NULL;
}

int mc_report_add(struct mc_report *r, const struct mc_violation *v)
{
	struct site_entry *e = find(r, v->site);

	r->total++;
	if (e) {
		e->count++;
		return 0;
	}
	if (!ARRAY_GROW(r->sites, r->cap, r->nsites, 16))
		return err_set(EGPU_ENOMEM, "memcheck: no memory for site %u",
			       v->site);
	e = &r->sites[r->nsites++];
	e->first = *v;
	e->count = 1;
	where_of(r, v, e->where, sizeof(e->where));
	return 0;
}

void mc_report_set_count(struct mc_report *r, uint32_t site, uint64_t count)
{
	struct site_entry *e = find(r, site);

	if (!e || count < e->count)
		return;
	r->total += count - e->count;
	e->count = count;
}

uint64_t mc_report_total(const struct mc_report *r)
{
	return r->total;
}

size_t mc_report_sites(const struct mc_report *r)
{
	return r->nsites;
}

uint32_t mc_report_site_at(const struct mc_report *r, size_t i)
{
	return r->sites[i].first.site;
}

void mc_report_entry(const struct mc_report *r, size_t i,
		     const struct mc_violation **first, const char **where,
		     uint64_t *count)
{
	*first = &r->sites[i].first;
	*where = r->sites[i].where;
	*count = r->sites[i].count;
}

bool mc_report_site_name(const struct mc_report *r, uint32_t site,
			 struct mc_site *out)
{
	*out = (struct mc_site){ 0 };
	return r->o.site && r->o.site(r->o.user, site, out) && out->kernel;
}

/* The site's kernel and line, numbered when the host does not know it. */
static struct mc_site site_of(const struct mc_report *r, uint32_t site,
			      char *anon, size_t n)
{
	struct mc_site s;

	if (!mc_report_site_name(r, site, &s)) {
		snprintf(anon, n, "site %u", site);
		s.kernel = anon;
	}
	return s;
}

static void text_entry(struct strbuf *sb, const struct mc_report *r,
		       const struct site_entry *e)
{
	const struct mc_violation *v = &e->first;
	char anon[32], more[32];
	struct mc_site s = site_of(r, v->site, anon, sizeof(anon));

	sb_printf(sb, "egpu memcheck: invalid %u-byte %s %s in %s", v->size,
		  space_word(v->space), kind_word(v->kind), s.kernel);
	if (s.file)
		sb_printf(sb, " at %s:%u\n", s.file, s.line);
	else
		sb_printf(sb, " at line %u of its PTX\n", s.line);
	sb_printf(sb, "    block (%u,%u,%u) thread (%u,%u,%u), address 0x%" PRIx64 "%s%s\n",
		  v->block[0], v->block[1], v->block[2], v->thread[0],
		  v->thread[1], v->thread[2], v->addr, e->where[0] ? ": " : "",
		  e->where);
	if (e->count > 1)
		sb_printf(sb, "    and %s more at this site\n",
			  mc_commas(e->count - 1, more));
}

static void json_entry(struct strbuf *sb, const struct mc_report *r,
		       const struct site_entry *e)
{
	const struct mc_violation *v = &e->first;
	char anon[32];
	struct mc_site s = site_of(r, v->site, anon, sizeof(anon));

	sb_adds(sb, "{\"kernel\":\"");
	json_escape(sb, s.kernel);
	sb_adds(sb, "\",\"file\":");
	if (s.file) {
		sb_adds(sb, "\"");
		json_escape(sb, s.file);
		sb_adds(sb, "\"");
	} else {
		sb_adds(sb, "null");
	}
	sb_printf(sb, ",\"line\":%u,\"site\":%u,\"kind\":\"%s\",\"space\":\"%s\",\"size\":%u,\"address\":\"0x%" PRIx64 "\",\"block\":[%u,%u,%u],\"thread\":[%u,%u,%u],\"where\":\"",
		  s.line, v->site, kind_word(v->kind), space_word(v->space),
		  v->size, v->addr, v->block[0], v->block[1], v->block[2],
		  v->thread[0], v->thread[1], v->thread[2]);
	json_escape(sb, e->where);
	sb_printf(sb, "\",\"count\":%" PRIu64 "}", e->count);
}

/* Sites past max_shown and their accesses. */
static void hidden(const struct mc_report *r, size_t *sites, uint64_t *n)
{
	*sites = 0;
	*n = 0;
	for (size_t i = r->o.max_shown; i < r->nsites; i++) {
		(*sites)++;
		*n += r->sites[i].count;
	}
}

char *mc_report_text(const struct mc_report *r, bool json)
{
	size_t shown = r->nsites < r->o.max_shown ? r->nsites : r->o.max_shown;
	size_t hid_sites;
	uint64_t hid;
	struct strbuf sb;
	char a[32], b[32];

	hidden(r, &hid_sites, &hid);
	sb_init(&sb);
	if (json)
		sb_adds(&sb, "{\"reports\":[");
	for (size_t i = 0; i < shown; i++) {
		if (json) {
			sb_adds(&sb, i ? "," : "");
			json_entry(&sb, r, &r->sites[i]);
		} else {
			text_entry(&sb, r, &r->sites[i]);
		}
	}
	if (json)
		sb_printf(&sb, "],\"errors\":%" PRIu64 ",\"sites\":%zu,\"sites_not_shown\":%zu,\"errors_not_shown\":%" PRIu64 "}\n",
			  r->total, r->nsites, hid_sites, hid);
	else if (!r->total)
		sb_adds(&sb, "egpu memcheck: no errors\n");
	else
		sb_printf(&sb, "egpu memcheck: %s error%s at %zu site%s%s%s%s\n",
			  mc_commas(r->total, a), r->total == 1 ? "" : "s",
			  r->nsites, r->nsites == 1 ? "" : "s",
			  hid_sites ? " (" : "",
			  hid_sites ? mc_commas(hid, b) : "",
			  hid_sites ? " at sites not shown)" : "");
	return sb_detach(&sb, NULL);
}
