/* SPDX-License-Identifier: MIT */
/*
 * egpu_metrics_*: the set of exported maps, the labels every series
 * carries (gpu, gpu_uuid, pid, the caller's), rendering a scrape and
 * serving it (http.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/export.h"

/* Add every map of @obj, described by @spec where it names the map. */
static int add_obj(egpu_metrics *m, egpu_obj *obj, const char *spec)
{
	for (egpu_map *map = egpu_obj_next_map(obj, NULL); map;
	     map = egpu_obj_next_map(obj, map)) {
		EGPU_OPTS(egpu_metric_desc, d);
		int err = metric_spec_find(spec, egpu_map_name(map), &d);

		if (err >= 0)
			err = egpu_metrics_add_map(m, map, &d);
		if (err)
			return err;
	}
	return 0;
}

static int configure(egpu_metrics *m, const struct egpu_metrics_opts *opts)
{
	egpu_obj *const *objs = OPTS_GET(opts, objs, NULL);
	size_t obj_cnt = OPTS_GET(opts, obj_cnt, 0);
	const char *spec = OPTS_GET(opts, spec, NULL);
	int err;

	if (obj_cnt && !objs)
		return err_set(EGPU_EINVAL, "egpu_metrics_new: obj_cnt %zu "
			       "without objs", obj_cnt);
	m->top_n = OPTS_GET(opts, top_n, 0);
	if (!m->top_n)
		m->top_n = METRICS_DEFAULT_TOP;
	err = metric_labels_parse(OPTS_GET(opts, labels, NULL), &m->labels);
	if (!err)
		err = metric_spec_find(spec, NULL, NULL);
	for (size_t i = 0; !err && i < obj_cnt; i++)
		err = add_obj(m, objs[i], spec);
	return err;
}

/* Free @m keeping the error that made a constructor give up. */
static egpu_metrics *fail_free(egpu_metrics *m)
{
	int err = egpu_errcode();
	char msg[512];

	snprintf(msg, sizeof(msg), "%s", egpu_errmsg());
	egpu_metrics_free(m);
	err_set(err, "%s", msg);
	return NULL;
}

egpu_metrics *egpu_metrics_new(egpu_ctx *ctx,
			       const struct egpu_metrics_opts *opts)
{
	egpu_metrics *m;

	if (OPTS_VALID(opts, egpu_metrics_opts, "egpu_metrics_new"))
		return NULL;
	if (!ctx) {
		err_set(EGPU_EINVAL, "egpu_metrics_new: no context");
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		err_set(EGPU_ENOMEM, "egpu_metrics_new: out of memory");
		return NULL;
	}
	m->ctx = ctx;
	pthread_mutex_init(&m->lock, NULL);
	return configure(m, opts) ? fail_free(m) : m;
}

static int render_cb(void *user, char **text, size_t *len)
{
	return egpu_metrics_render(user, text, len);
}

egpu_metrics *egpu_metrics_serve(egpu_ctx *ctx,
				 const struct egpu_metrics_opts *opts)
{
	const char *listen = OPTS_GET(opts, listen, NULL);
	egpu_metrics *m;

	if (!listen || !*listen) {
		err_set(EGPU_EINVAL, "egpu_metrics_serve: no listen address "
			"(e.g. \":9464\")");
		return NULL;
	}
	m = egpu_metrics_new(ctx, opts);
	if (m && !(m->http = http_start(listen, render_cb, m)))
		return fail_free(m);
	return m;
}

int egpu_metrics_add_map(egpu_metrics *m, egpu_map *map,
			 const struct egpu_metric_desc *desc)
{
	struct metric mt, *grown;
	int err;

	if (!m || !map)
		return err_set(EGPU_EINVAL, "egpu_metrics_add_map: NULL argument");
	if (desc && desc->sz < offsetofend(struct egpu_metric_desc, sz))
		return err_set(EGPU_EINVAL, "egpu_metrics_add_map: set desc->sz");
	err = metric_resolve(map, desc, m->top_n, &mt);
	if (err)
		return err > 0 ? 0 : err;
	pthread_mutex_lock(&m->lock);
	grown = realloc(m->metrics, (m->metric_cnt + 1) * sizeof(*grown));
	if (grown) {
		m->metrics = grown;
		m->metrics[m->metric_cnt++] = mt;
	}
	pthread_mutex_unlock(&m->lock);
	if (!grown) {
		metric_free(&mt);
		return err_set(EGPU_ENOMEM, "egpu_metrics_add_map: out of memory");
	}
	return 0;
}

int egpu_metrics_add_kernels(egpu_metrics *m, const struct egpu_report *report)
{
	int err;

	if (!m || !report || (report->kernel_cnt && !report->kernels))
		return err_set(EGPU_EINVAL, "egpu_metrics_add_kernels: NULL "
			       "argument");
	pthread_mutex_lock(&m->lock);
	err = kernel_labels_add(m, report);
	pthread_mutex_unlock(&m->lock);
	return err;
}

/* 'gpu="0",gpu_uuid="GPU-...",pid="N"' and the caller's labels. */
static void common_labels(const egpu_metrics *m, struct strbuf *sb)
{
	EGPU_OPTS(egpu_gpu_info, gpu);

	/* a context that has not used a GPU has host-memory maps: no gpu */
	if (!egpu_ctx_gpu(m->ctx, &gpu))
		sb_printf(sb, "gpu=\"%d\",gpu_uuid=\"%s\",", gpu.index,
			  gpu.uuid);
	sb_printf(sb, "pid=\"%ld\"", (long)getpid());
	if (*m->labels)
		sb_printf(sb, ",%s", m->labels);
}

int egpu_metrics_render(egpu_metrics *m, char **text, size_t *len)
{
	struct strbuf sb, common;
	int err = 0;

	if (!m || !text)
		return err_set(EGPU_EINVAL, "egpu_metrics_render: NULL argument");
	sb_init(&sb);
	sb_init(&common);
	pthread_mutex_lock(&m->lock);
	common_labels(m, &common);
	for (size_t i = 0; !err && i < m->metric_cnt && sb_ok(&common); i++) {
		struct series *s = NULL;
		size_t cnt = 0;

		err = metric_read(&m->metrics[i], &s, &cnt);
		if (!err)
			metric_text(m, &m->metrics[i], s, cnt, common.buf, &sb);
		series_free(s, cnt);
	}
	pthread_mutex_unlock(&m->lock);
	if (!err && (!sb_ok(&sb) || !sb_ok(&common)))
		err = err_set(EGPU_ENOMEM, "egpu_metrics_render: out of memory");
	sb_free(&common);
	if (err) {
		sb_free(&sb);
		return err;
	}
	*text = sb_detach(&sb, len);
	return *text ? 0 : err_set(EGPU_ENOMEM, "egpu_metrics_render: out "
				   "of memory");
}

int egpu_metrics_port(const egpu_metrics *m)
{
	return m && m->http ? http_port(m->http) : 0;
}

void egpu_metrics_free(egpu_metrics *m)
{
	if (!m)
		return;
	http_stop(m->http); /* no scrape runs past this */
	for (size_t i = 0; i < m->metric_cnt; i++)
		metric_free(&m->metrics[i]);
	free(m->metrics);
	kernel_labels_free(m);
	free(m->labels);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
