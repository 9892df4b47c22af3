/* SPDX-License-Identifier: MIT */
/*
 * The probe's events while the application runs: every ring map
 * (RINGBUF, PERF_EVENT_ARRAY, bpftime's GPU ring), in host or GPU memory,
 * consumed by the agent's poll thread. Each record is printed as named
 * fields of its BTF type (text, or a JSON line with --json) to stderr or
 * EGPU_ATTACH_EVENTS_OUT, or written raw to EGPU_ATTACH_EVENTS_RAW; the
 * records and drops of each ring are reported at exit.
 *
 * A record's type: the one --event-type MAP=TYPE names, else the map's
 * value type when the record has its size, else the only struct of the
 * record's size; bytes no type fits print as hex.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"

struct ring_view {
	egpu_map *map;
	egpu_ringbuf *rb;
	uint32_t forced;      /* --event-type's, or 0 */
	size_t last_size;     /* the record size last typed (SIZE_MAX: none), */
	uint32_t last_type;   /* and its type (0: hex) */
};

static struct ring_view *views;
static size_t nviews;
static egpu_obj *events_obj;
static FILE *out;
static bool json;

static bool is_ring(const egpu_map *m)
{
	uint32_t t = egpu_map_type(m);

	return t == EGPU_MAP_RINGBUF || t == EGPU_MAP_PERF_EVENT_ARRAY ||
	       t == EGPU_MAP_GPU_RINGBUF;
}

static uint32_t type_of(struct ring_view *v, size_t size)
{
	if (v->forced)
		return v->forced;
	if (size != v->last_size) {
		v->last_size = size;
		v->last_type = egpu_map_record_type(v->map, size);
	}
	return v->last_type;
}

static void print_hex(const struct ring_view *v, const uint8_t *p, size_t n)
{
	fprintf(out, json ? "{\"map\":\"%s\",\"size\":%zu,\"hex\":\"" :
			    "%s: %zu bytes: ", egpu_map_name(v->map), n);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
	fputs(json ? "\"}\n" : "\n", out);
}

static int on_record(void *user, const void *data, size_t size)
{
	struct ring_view *v = user;
	uint32_t type = type_of(v, size);
	char *text = NULL;

	/* a forced type of another size prints as hex */
	if (!type || egpu_obj_format(events_obj, type, data, size, json, &text, NULL)) {
		print_hex(v, data, size);
		return 0;
	}
	fprintf(out, json ? "{\"map\":\"%s\",\"value\":%s}\n" : "%s: %s\n",
		egpu_map_name(v->map), text);
	free(text);
	return 0;
}

/* "MAP=TYPE,..." of EGPU_ATTACH_EVENT_TYPES for the view of @map. */
static int forced_type(const char *spec, const char *map, uint32_t *id)
{
	size_t n = strlen(map);

	*id = 0;
	for (const char *s = spec; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : "") {
		char type[128];
		size_t len = strcspn(s, ",");

		if (strncmp(s, map, n) || s[n] != '=' || len - n - 1 >= sizeof(type))
			continue;
		memcpy(type, s + n + 1, len - n - 1);
		type[len - n - 1] = '\0';
		*id = egpu_obj_find_type(events_obj, type);
		if (!*id) {
			fprintf(stderr, ATTACH_MSG "--event-type %s=%s: %s\n", map, type,
				egpu_errmsg());
			return -1;
		}
	}
	return 0;
}

/* The raw file of @map: @raw, or @raw.MAP when the probe has several rings. */
static void raw_path(const char *raw, const egpu_map *map, bool several,
		     char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", raw, several ? "." : "",
		 several ? egpu_map_name(map) : "");
}

static int add_view(egpu_map *m, const struct attach_env *env, bool several)
{
	char path[4096];
	EGPU_OPTS(egpu_ringbuf_opts, ro, .path = env->events_raw ? path : NULL);
	/* views[] never moves: the consumers hold pointers into it */
	struct ring_view *v = &views[nviews];

	*v = (struct ring_view){ .map = m, .last_size = SIZE_MAX };
	if (forced_type(env->event_types, egpu_map_name(m), &v->forced))
		return -1;
	if (env->events_raw)
		raw_path(env->events_raw, m, several, path, sizeof(path));
	v->rb = egpu_ringbuf_new_opts(m, env->events_raw ? NULL : on_record, v, &ro);
	if (!v->rb) {
		fprintf(stderr, ATTACH_MSG "ring '%s': %s\n", egpu_map_name(m),
			egpu_errmsg());
		return -1;
	}
	nviews++;
	return 0;
}

static FILE *open_out(const char *path)
{
	FILE *f;

	if (!path)
		return stderr;
	if (!strcmp(path, "-"))
		return stdout;
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, ATTACH_MSG "%s: cannot write, events to stderr\n", path);
	return f ? f : stderr;
}

int events_start(egpu_obj *obj, const struct attach_env *env)
{
	size_t rings = 0;

	events_obj = obj;
	json = env->json;
	for (egpu_map *m = egpu_obj_next_map(obj, NULL); m; m = egpu_obj_next_map(obj, m))
		rings += is_ring(m);
	if (!rings)
		return 0;
	views = calloc(rings, sizeof(*views));
	if (!views)
		return -1;
	out = open_out(env->events_out);
	for (egpu_map *m = egpu_obj_next_map(obj, NULL); m; m = egpu_obj_next_map(obj, m))
		if (is_ring(m) && add_view(m, env, rings > 1))
			return -1;
	return 0;
}

void events_poll(void)
{
	for (size_t i = 0; i < nviews; i++)
		if (egpu_ringbuf_consume(views[i].rb) < 0)
			fprintf(stderr, ATTACH_MSG "ring '%s': %s\n",
				egpu_map_name(views[i].map), egpu_errmsg());
	if (nviews)
		fflush(out);
}

void events_stop(void)
{
	events_poll();
	for (size_t i = 0; i < nviews; i++) {
		struct egpu_ringbuf_stats s = { .sz = sizeof(s) };
		const char *name = egpu_map_name(views[i].map);

		egpu_ringbuf_stats(views[i].rb, &s);
		if (json)
			fprintf(out, "{\"map\":\"%s\",\"records\":%llu,\"drops\":%llu}\n",
				name, (unsigned long long)s.records,
				(unsigned long long)s.drops);
		else
			fprintf(out, ATTACH_MSG "ring %s: %llu records, %llu dropped (ring full)\n",
				name, (unsigned long long)s.records,
				(unsigned long long)s.drops);
		egpu_ringbuf_free(views[i].rb);
	}
	if (out && out != stderr && out != stdout)
		fclose(out);
	else if (out)
		fflush(out);
	free(views);
	views = NULL;
	nviews = 0;
	out = NULL;
}
