/* SPDX-License-Identifier: MIT */
/*
 * How a map reads as a metric: AUTO decided from the map, names made
 * valid, the declarative "MAP=KIND[/KEY]" spec and the constant labels
 * parsed (docs/fleet.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/map_types.h"
#include "export/export.h"

static const char *const kind_words[] = {
	[EGPU_METRIC_COUNTER] = "counter",
	[EGPU_METRIC_GAUGE] = "gauge",
	[EGPU_METRIC_HISTOGRAM] = "histogram",
	[EGPU_METRIC_SKIP] = "skip",
};

static const char *const key_words[] = {
	[EGPU_METRIC_KEY_NONE] = "none",
	[EGPU_METRIC_KEY_INDEX] = "index",
	[EGPU_METRIC_KEY_KERNEL] = "kernel",
};

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), e = strlen(end);

	return n >= e && !strcmp(s + n - e, end);
}

/* AUTO's kind: rings and global data (".bss", "x.data") are not counters. */
static enum egpu_metric_kind auto_kind(egpu_map *map)
{
	const char *name = egpu_map_name(map);
	uint32_t vs = egpu_map_value_size(map);

	if (map_type_is_ring(egpu_map_type(map)) || strchr(name, '.') ||
	    (vs != 4 && vs != 8))
		return EGPU_METRIC_SKIP;
	return ends_with(name, "hist") ? EGPU_METRIC_HISTOGRAM :
	       EGPU_METRIC_COUNTER;
}

static enum egpu_metric_key auto_key(egpu_map *map, enum egpu_metric_kind k)
{
	uint32_t ks = egpu_map_key_size(map);

	if (k == EGPU_METRIC_HISTOGRAM)
		return ks == 8 ? EGPU_METRIC_KEY_KERNEL : EGPU_METRIC_KEY_NONE;
	if (egpu_map_max_entries(map) == 1 || (ks != 4 && ks != 8))
		return EGPU_METRIC_KEY_NONE;
	return EGPU_METRIC_KEY_INDEX;
}

/* Whether @map's sizes fit @mt's kind and key; a message if not. */
static int check_shape(egpu_map *map, const struct metric *mt)
{
	uint32_t ks = egpu_map_key_size(map), vs = egpu_map_value_size(map);
	const char *name = egpu_map_name(map);

	if (map_type_is_ring(egpu_map_type(map)))
		return err_set(EGPU_EINVAL, "metrics: map '%s': a ring buffer "
			       "has records, not values", name);
	if (vs != 4 && vs != 8)
		return err_set(EGPU_EINVAL, "metrics: map '%s': values of %u "
			       "bytes (want 4 or 8)", name, vs);
	if (mt->kind == EGPU_METRIC_HISTOGRAM &&
	    ks != (mt->key == EGPU_METRIC_KEY_NONE ? 4u : 8u))
		return err_set(EGPU_EINVAL, "metrics: histogram '%s': keys of "
			       "%u bytes (want u32 bucket, or {u32 id; u32 "
			       "bucket} when labelled)", name, ks);
	if (mt->kind != EGPU_METRIC_HISTOGRAM &&
	    mt->key != EGPU_METRIC_KEY_NONE && ks != 4 && ks != 8)
		return err_set(EGPU_EINVAL, "metrics: map '%s': keys of %u "
			       "bytes cannot be a label (want 4 or 8)", name, ks);
	return 0;
}

/* "egpu_" + @base with characters outside [a-zA-Z0-9_:] as '_'. */
static char *metric_name(const char *base, bool user, const char *suffix)
{
	struct strbuf sb;

	sb_init(&sb);
	if (!user)
		sb_adds(&sb, "egpu_");
	for (const char *p = base; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  c == '_' || c == ':' ||
			  (c >= '0' && c <= '9' && (p != base || !user));

		sb_addn(&sb, ok ? &c : "_", 1);
	}
	if (!user && !ends_with(base, suffix))
		sb_adds(&sb, suffix);
	return sb_detach(&sb, NULL);
}

int metric_resolve(egpu_map *map, const struct egpu_metric_desc *desc,
		   uint32_t top_n, struct metric *out)
{
	const char *name = OPTS_GET(desc, name, NULL);
	const char *help = OPTS_GET(desc, help, NULL);
	struct metric mt = {
		.map = map,
		.kind = OPTS_GET(desc, kind, EGPU_METRIC_AUTO),
		.key = OPTS_GET(desc, key, EGPU_METRIC_KEY_AUTO),
		.top_n = OPTS_GET(desc, top_n, 0),
	};
	int err;

	if ((unsigned)mt.kind > EGPU_METRIC_SKIP ||
	    (unsigned)mt.key > EGPU_METRIC_KEY_KERNEL)
		return err_set(EGPU_EINVAL, "metrics: map '%s': unknown kind "
			       "%d or key %d", egpu_map_name(map), mt.kind,
			       mt.key);
	if (mt.kind == EGPU_METRIC_AUTO)
		mt.kind = auto_kind(map);
	if (mt.kind == EGPU_METRIC_SKIP)
		return 1;
	if (mt.key == EGPU_METRIC_KEY_AUTO)
		mt.key = auto_key(map, mt.kind);
	err = check_shape(map, &mt);
	if (err)
		return err;
	if (!mt.top_n)
		mt.top_n = top_n;
	mt.name = metric_name(name ? name : egpu_map_name(map), name != NULL,
			      mt.kind == EGPU_METRIC_COUNTER ? "_total" : "");
	if (help) {
		mt.help = strdup(help);
	} else {
		struct strbuf sb;

		sb_init(&sb);
		sb_printf(&sb, "libegpu map %s (%s)", egpu_map_name(map),
			  egpu_map_type_str(egpu_map_type(map)));
		mt.help = sb_detach(&sb, NULL);
	}
	if (!mt.name || !mt.help || (name && !*name)) {
		metric_free(&mt);
		return err_set(name && !*name ? EGPU_EINVAL : EGPU_ENOMEM,
			       "metrics: map '%s': %s", egpu_map_name(map),
			       name && !*name ? "empty metric name" :
			       "out of memory");
	}
	*out = mt;
	return 0;
}

void metric_free(struct metric *mt)
{
	free(mt->name);
	free(mt->help);
	mt->name = mt->help = NULL;
}

/* Index of the @n bytes at @w in @words (size @cnt), or -1. */
static int word_index(const char *w, size_t n, const char *const *words,
		      size_t cnt)
{
	for (size_t i = 0; i < cnt; i++)
		if (words[i] && strlen(words[i]) == n && !strncmp(w, words[i], n))
			return (int)i;
	return -1;
}

/* One "MAP=KIND[/KEY]" item of @len bytes at @item into @desc. */
static int spec_item(const char *item, size_t len, struct egpu_metric_desc *d)
{
	const char *eq = memchr(item, '=', len), *end = item + len, *slash;
	int kind, key = EGPU_METRIC_KEY_AUTO;

	if (!eq || eq == item)
		return err_set(EGPU_EINVAL, "metrics spec: '%.*s': want "
			       "MAP=KIND[/KEY]", (int)len, item);
	slash = memchr(eq, '/', (size_t)(end - eq));
	kind = word_index(eq + 1, (size_t)((slash ? slash : end) - eq - 1),
			  kind_words, ARRAY_SIZE(kind_words));
	if (slash)
		key = word_index(slash + 1, (size_t)(end - slash - 1),
				 key_words, ARRAY_SIZE(key_words));
	if (kind < 0 || key < 0)
		return err_set(EGPU_EINVAL, "metrics spec: '%.*s': KIND is "
			       "counter|gauge|histogram|skip, KEY none|index|"
			       "kernel", (int)len, item);
	d->kind = (enum egpu_metric_kind)kind;
	d->key = (enum egpu_metric_key)key;
	return 0;
}

int metric_spec_find(const char *spec, const char *map_name,
		     struct egpu_metric_desc *desc)
{
	size_t name_len = map_name ? strlen(map_name) : 0;

	for (const char *p = spec; p && *p;) {
		size_t len = strcspn(p, ",");
		struct egpu_metric_desc d = { .sz = sizeof(d) };
		int err = spec_item(p, len, &d);

		if (err)
			return err;
		if (map_name && len > name_len && p[name_len] == '=' &&
		    !strncmp(p, map_name, name_len)) {
			desc->kind = d.kind;
			desc->key = d.key;
			return 1;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

static bool label_name_ok(const char *s, size_t n)
{
	if (!n || (s[0] >= '0' && s[0] <= '9') || (n >= 2 && !strncmp(s, "__", 2)))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* Labels Prometheus sets itself (job, instance) or libegpu does. */
static bool label_reserved(const char *s, size_t n)
{
	static const char *const taken[] = { "job", "instance", "gpu",
		"gpu_uuid", "pid", "kernel", "key", "le" };

	return word_index(s, n, taken, ARRAY_SIZE(taken)) >= 0;
}

int metric_labels_parse(const char *text, char **out)
{
	struct strbuf sb;

	sb_init(&sb);
	for (const char *p = text; p && *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		size_t n = eq ? (size_t)(eq - p) : 0;
		char *value;

		if (!eq || !label_name_ok(p, n) || label_reserved(p, n)) {
			sb_free(&sb);
			return err_set(EGPU_EINVAL, "metrics labels: '%.*s': "
				       "want NAME=VALUE, NAME a label name "
				       "other than job, instance, gpu, gpu_uuid, "
				       "pid, kernel, key, le", (int)len, p);
		}
		value = strndup(eq + 1, len - n - 1);
		if (!value) {
			sb_free(&sb);
			return err_set(EGPU_ENOMEM, "metrics labels: out of memory");
		}
		sb_printf(&sb, "%s%.*s=\"", sb.len ? "," : "", (int)n, p);
		label_escape(&sb, value);
		sb_adds(&sb, "\"");
		free(value);
		p += len + (p[len] == ',');
	}
	*out = sb_detach(&sb, NULL);
	return *out ? 0 : err_set(EGPU_ENOMEM, "metrics labels: out of memory");
}
