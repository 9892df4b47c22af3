/* SPDX-License-Identifier: MIT */
/*
 * What `egpu attach` prints: every map of the probe as a table (key and
 * value as integers when their sizes are 4 or 8 bytes a word, else hex;
 * per-thread values summed; all-zero entries counted, not listed), the
 * kernels that got probes with their ids (the kernel_id probes see), the
 * modules left alone (SASS only) with how to rebuild them, and the time
 * attaching added. --json prints the same as one JSON object.
 */
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"

#define REBUILD "rebuild with PTX: nvcc -gencode arch=compute_90,code=compute_90 (or code=[sm_90,compute_90])"

/* @n bytes at @p as words: u64 when n % 8 == 0, u32 when n % 4 == 0,
 * else hex. */
static void print_words(FILE *f, const uint8_t *p, uint32_t n, bool json)
{
	uint32_t w = n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : 0;

	if (!w) {
		fputs(json ? "\"" : "0x", f);
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "%02x", p[i]);
		fputs(json ? "\"" : "", f);
		return;
	}
	if (n > w || json)
		fputs("[", f);
	for (uint32_t i = 0; i < n; i += w) {
		uint64_t v = 0;

		memcpy(&v, p + i, w);
		fprintf(f, "%s%llu", i ? (json ? "," : " ") : "",
			(unsigned long long)v);
	}
	if (n > w || json)
		fputs("]", f);
}

static bool all_zero(const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* One map; false if it has no entries to list (rings). */
static void print_map(FILE *f, egpu_map *m, bool json, bool *first)
{
	uint32_t ks = egpu_map_key_size(m), vs = egpu_map_value_size(m);
	uint8_t *key = calloc(1, ks + 8), *next = calloc(1, ks + 8);
	uint8_t *val = calloc(1, vs + 8);
	unsigned zero = 0, shown = 0;
	bool have = false;

	if (!key || !next || !val)
		goto out;
	if (json)
		fprintf(f, "%s\"%s\":{\"type\":\"%s\",\"entries\":[", *first ? "" : ",",
			egpu_map_name(m), egpu_map_type_str(egpu_map_type(m)));
	else
		fprintf(f, "map %s (%s, key %u B, value %u B, %u entries):\n",
			egpu_map_name(m), egpu_map_type_str(egpu_map_type(m)),
			ks, vs, egpu_map_max_entries(m));
	*first = false;
	while (!egpu_map_next_key(m, have ? key : NULL, next)) {
		memcpy(key, next, ks);
		have = true;
		if (egpu_map_lookup_sum(m, key, val))
			break;
		if (all_zero(val, vs)) {
			zero++;
			continue;
		}
		if (json) {
			fprintf(f, "%s{\"key\":", shown ? "," : "");
			print_words(f, key, ks, true);
			fputs(",\"value\":", f);
			print_words(f, val, vs, true);
			fputs("}", f);
		} else {
			fputs("  ", f);
			print_words(f, key, ks, false);
			fputs(": ", f);
			print_words(f, val, vs, false);
			fputs("\n", f);
		}
		shown++;
	}
	if (json)
		fprintf(f, "],\"zero_entries\":%u}", zero);
	else if (zero || !shown)
		fprintf(f, "  (%u entr%s all zero%s)\n", zero, zero == 1 ? "y" : "ies",
			shown ? ", not listed" : "");
out:
	free(key);
	free(next);
	free(val);
}

static void print_maps(FILE *f, egpu_obj *obj, bool json)
{
	bool first = true;

	if (json)
		fputs("\"maps\":{", f);
	for (egpu_map *m = egpu_obj_next_map(obj, NULL); m;
	     m = egpu_obj_next_map(obj, m)) {
		const char *t = egpu_map_type_str(egpu_map_type(m));

		/* rings stream, .rodata/.bss are the program's own data */
		if (strstr(t, "ring") || strstr(t, "perf") || strchr(egpu_map_name(m), '.'))
			continue;
		print_map(f, m, json, &first);
	}
	if (json)
		fputs("}", f);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	fputc('"', f);
}

static void print_json(FILE *f, egpu_obj *obj, const struct attach_stats *st)
{
	fprintf(f, "{\"modules\":%u,\"instrumented\":%u,\"cache_hits\":%u,"
		"\"failed\":%u,\"instrument_ms\":%.3f,\"load_ms\":%.3f,\"kernels\":[",
		st->modules, st->instrumented, st->cache_hits, st->failed,
		st->instrument_ms, st->load_ms);
	for (size_t i = 0; i < st->nkernels; i++) {
		fprintf(f, "%s{\"id\":%u,\"name\":", i ? "," : "", st->kernels[i].id);
		json_str(f, st->kernels[i].name);
		fputs(",\"demangled\":", f);
		json_str(f, st->kernels[i].demangled);
		fputs("}", f);
	}
	fprintf(f, "],\"ptxas_compiles\":%u,\"sass_only\":[", st->ptxas_compiles);
	for (size_t i = 0; i < st->nsass_only; i++) {
		fputs(i ? "," : "", f);
		json_str(f, st->sass_only[i]);
	}
	fputs("],", f);
	print_maps(f, obj, true);
	fputs("}\n", f);
}

static void print_text(FILE *f, egpu_obj *obj, const struct attach_stats *st)
{
	fprintf(f, ATTACH_MSG "%u module load%s, %u instrumented (%u from the cache), %u failed, %zu SASS only; attaching added %.1f ms (instrumenting %.1f ms, the driver loading instrumented PTX %.1f ms)\n",
		st->modules, st->modules == 1 ? "" : "s", st->instrumented,
		st->cache_hits, st->failed, st->nsass_only,
		st->instrument_ms + st->load_ms, st->instrument_ms, st->load_ms);
	if (st->ptxas_compiles)
		fprintf(f, ATTACH_MSG "%u compile%s by the application's own ptxas went through libegpu first (their cubins load as SASS below)\n",
			st->ptxas_compiles, st->ptxas_compiles == 1 ? "" : "s");
	if (st->nkernels)
		fprintf(f, "kernels with probes (kernel_id: name):\n");
	for (size_t i = 0; i < st->nkernels; i++)
		fprintf(f, "  %u: %s\n", st->kernels[i].id, st->kernels[i].demangled);
	print_maps(f, obj, false);
	if (st->nsass_only) {
		fprintf(f, "modules left alone, no PTX for this GPU (%s):\n", REBUILD);
		for (size_t i = 0; i < st->nsass_only; i++)
			fprintf(f, "  %s\n", st->sass_only[i]);
	}
}

void report_print(FILE *f, egpu_obj *obj, const struct attach_stats *st,
		  bool json, bool final)
{
	if (!obj)
		return;
	if (json && final)
		print_json(f, obj, st);
	else if (json)
		print_maps(f, obj, true), fputs("\n", f);
	else if (final)
		print_text(f, obj, st);
	else
		print_maps(f, obj, false);
	fflush(f);
}
