/* SPDX-License-Identifier: MIT */
/*
 * lib/export: what leaves the process for fleet tools. Maps as Prometheus
 * metrics (egpu_metrics_*: metrics.c builds the set, metric_desc.c decides
 * how each map reads, metric_read.c reads a map into series, metric_text.c
 * writes the text format, kernel_names.c names kernel ids, http.c serves
 * it) and traces as pprof profiles (pprof*.c). This stage sits above
 * lib/api: it reads maps through the public calls (whose copies never wait
 * for the application's kernels) and traces through lib/trace's data.
 */
#ifndef EGPU_EXPORT_H
#define EGPU_EXPORT_H

#include <pthread.h>
#include <stdint.h>

#include "core/core.h"
#include "egpu.h"

#define METRICS_DEFAULT_TOP 20
#define HIST_BUCKETS 64

/* One exported map, its description resolved (no AUTO left). */
struct metric {
	egpu_map *map;
	char *name;             /* a valid metric name, suffix included */
	char *help;
	enum egpu_metric_kind kind;
	enum egpu_metric_key key;
	uint32_t top_n;
};

struct kernel_name {
	uint32_t id;
	char *name;
};

struct http_server;

struct egpu_metrics {
	egpu_ctx *ctx;
	pthread_mutex_t lock;   /* the scrape thread reads what callers add */
	struct metric *metrics;
	size_t metric_cnt;
	struct kernel_name *kernels; /* sorted by id */
	size_t kernel_cnt;
	uint32_t top_n;
	char *labels;           /* 'k="v",...' from egpu_metrics_opts.labels */
	struct http_server *http;
};

/* metric_desc.c: resolve @desc (NULL: AUTO) for @map into @out; 1 when
 * the map is not exported, 0, or EGPU_EINVAL / EGPU_ENOMEM. */
int metric_resolve(egpu_map *map, const struct egpu_metric_desc *desc,
		   uint32_t top_n, struct metric *out);
void metric_free(struct metric *mt);
/* Find "MAP=KIND[/KEY]" for @map_name in @spec: 1 and desc's kind and key
 * set, 0 if absent, EGPU_EINVAL on a malformed item before it (@map_name
 * NULL: check every item). */
int metric_spec_find(const char *spec, const char *map_name,
		     struct egpu_metric_desc *desc);
/* 'k="v",...' for "k=v,..." (validated), malloc'ed into *out. */
int metric_labels_parse(const char *text, char **out);

/* One labelled series of a metric: id is the key index or kernel id. */
struct series {
	uint64_t id;
	bool other;             /* the sum of the series past top N */
	uint64_t value;         /* counter / gauge; a histogram's count */
	uint64_t *buckets;      /* histograms: HIST_BUCKETS counts */
	uint64_t weight;        /* what top N ranks by */
};

/* metric_read.c: read @mt's map into *out (*cnt series, top N and
 * "other" applied, largest first); 0 or a negative EGPU_E*. */
int metric_read(const struct metric *mt, struct series **out, size_t *cnt);
/* Free the array and its buckets. NULL-safe. */
void series_free(struct series *s, size_t cnt);

/* kernel_names.c: the label value of kernel @id ("kernel_ID" unnamed). */
void kernel_label(const struct egpu_metrics *m, uint64_t id,
		  struct strbuf *sb);
int kernel_labels_add(struct egpu_metrics *m, const struct egpu_report *r);
void kernel_labels_free(struct egpu_metrics *m);

/* metric_text.c: the exposition of @mt's series into @sb; @common the
 * labels every series carries ('k="v",...', may be empty). */
void metric_text(const struct egpu_metrics *m, const struct metric *mt,
		 const struct series *s, size_t cnt, const char *common,
		 struct strbuf *sb);
/* metric_label.c: @s as a label value, backslash, quote, newline escaped. */
void label_escape(struct strbuf *sb, const char *s);

/* http.c: serve GET /metrics with @render's text on @listen. */
typedef int (*http_render_fn)(void *user, char **text, size_t *len);
struct http_server *http_start(const char *listen, http_render_fn render,
			       void *user);
int http_port(const struct http_server *h);
void http_stop(struct http_server *h);

#endif
