/* SPDX-License-Identifier: MIT */
/*
 * egpu_metrics_*: the fleet fixture's maps (run on the CPU) as the
 * Prometheus text format, the same text over HTTP, and refused input.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fleet_fixture.h"
#include "test_util.h"

#define OBJ EGPU_TEST_BUILD "/fleet.bpf.o"

static struct fleet f;
static char common[128]; /* 'pid="N",team="ml"' */

static void setup(void)
{
	ck_assert_int_eq(fleet_open(&f, OBJ), 0);
	snprintf(common, sizeof(common), "pid=\"%ld\",team=\"ml\"",
		 (long)getpid());
}

static void teardown(void)
{
	fleet_close(&f);
}

static egpu_metrics *fixture_metrics(const char *listen)
{
	struct egpu_metrics_opts o = {
		.sz = sizeof(o), .objs = &f.obj, .obj_cnt = 1,
		.spec = FLEET_SPEC, .top_n = FLEET_TOP, .labels = FLEET_LABELS,
		.listen = listen,
	};
	egpu_metrics *m = listen ? egpu_metrics_serve(f.ctx, &o) :
				   egpu_metrics_new(f.ctx, &o);

	ck_assert_msg(m, "%s", egpu_errmsg());
	ck_assert_int_eq(egpu_metrics_add_kernels(m, &f.report), 0);
	return m;
}

/* Whether @text has the line NAME{LABELS,<common>} VALUE. */
static void has_line(const char *text, const char *name, const char *labels,
		     const char *value)
{
	char line[512];

	snprintf(line, sizeof(line), "\n%s{%s%s%s} %s\n", name, labels,
		 *labels ? "," : "", common, value);
	ck_assert_msg(strstr(text, line), "no line %s in:\n%s", line, text);
}

START_TEST(counters_by_kernel_name_with_other)
{
	egpu_metrics *m = fixture_metrics(NULL);
	char *text;
	size_t len;

	ck_assert_int_eq(egpu_metrics_render(m, &text, &len), 0);
	ck_assert_uint_eq(strlen(text), len);
	ck_assert_ptr_nonnull(strstr(text, "# TYPE egpu_launches_total counter\n"));
	has_line(text, "egpu_launches_total", "kernel=\"vec_add\"", "5");
	has_line(text, "egpu_launches_total", "kernel=\"matmul<float>\"", "3");
	has_line(text, "egpu_launches_total", "kernel=\"odd\\\"k\\\\\"", "2");
	has_line(text, "egpu_launches_total", "kernel=\"other\"", "2");
	ck_assert_ptr_null(strstr(text, "tiny"));
	/* per-thread map, summed; one entry: no key label */
	has_line(text, "egpu_threads_total", "", "3072");
	/* rings and global data are not metrics */
	ck_assert_ptr_null(strstr(text, "events"));
	ck_assert_ptr_null(strstr(text, "runs"));
	free(text);
	egpu_metrics_free(m);
}
END_TEST

START_TEST(log2_histograms_with_le_buckets)
{
	egpu_metrics *m = fixture_metrics(NULL);
	char *text;

	ck_assert_int_eq(egpu_metrics_render(m, &text, NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "# TYPE egpu_lat_hist histogram\n"));
	has_line(text, "egpu_lat_hist_bucket", "le=\"1\"", "2");
	has_line(text, "egpu_lat_hist_bucket", "le=\"3\"", "2");
	has_line(text, "egpu_lat_hist_bucket", "le=\"7\"", "3");
	has_line(text, "egpu_lat_hist_bucket", "le=\"31\"", "4");
	has_line(text, "egpu_lat_hist_bucket", "le=\"127\"", "9");
	has_line(text, "egpu_lat_hist_bucket", "le=\"4095\"", "12");
	has_line(text, "egpu_lat_hist_bucket", "le=\"+Inf\"", "12");
	has_line(text, "egpu_lat_hist_count", "", "12");
	ck_assert_ptr_null(strstr(text, "le=\"8191\""));
	has_line(text, "egpu_kernel_lat_hist_bucket",
		 "kernel=\"matmul<float>\",le=\"2047\"", "0");
	has_line(text, "egpu_kernel_lat_hist_bucket",
		 "kernel=\"matmul<float>\",le=\"4095\"", "3");
	has_line(text, "egpu_kernel_lat_hist_count", "kernel=\"vec_add\"", "5");
	has_line(text, "egpu_kernel_lat_hist_count", "kernel=\"other\"", "2");
	free(text);
	egpu_metrics_free(m);
}
END_TEST

START_TEST(explicit_descriptions)
{
	egpu_metrics *m = egpu_metrics_new(f.ctx, NULL);
	EGPU_OPTS(egpu_metric_desc, d, .name = "gpu_launches",
		  .help = "launches\nby id", .kind = EGPU_METRIC_GAUGE,
		  .key = EGPU_METRIC_KEY_INDEX, .top_n = 1);
	char *text;

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(egpu_metrics_add_map(m, egpu_obj_map(f.obj,
				"launches"), &d), 0);
	ck_assert_int_eq(egpu_metrics_render(m, &text, NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "# HELP gpu_launches launches\\nby id\n"
				     "# TYPE gpu_launches gauge\n"));
	snprintf(common, sizeof(common), "pid=\"%ld\"", (long)getpid());
	has_line(text, "gpu_launches", "key=\"0\"", "5");
	has_line(text, "gpu_launches", "key=\"other\"", "7");
	free(text);
	egpu_metrics_free(m);
}
END_TEST

/* GET @path from 127.0.0.1:@port: the whole response, malloc'ed. */
static char *http_get(int port, const char *path)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap), req[256];
	int s = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t n;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	ck_assert_int_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path);
	ck_assert_int_eq(write(s, req, strlen(req)), (ssize_t)strlen(req));
	while ((n = read(s, buf + len, cap - len - 1)) > 0)
		len += (size_t)n;
	close(s);
	buf[len] = '\0';
	return buf;
}

START_TEST(served_over_http)
{
	egpu_metrics *m = fixture_metrics("127.0.0.1:0");
	int port = egpu_metrics_port(m);
	char *text, *resp;

	ck_assert_int_gt(port, 0);
	ck_assert_int_eq(egpu_metrics_render(m, &text, NULL), 0);
	resp = http_get(port, "/metrics");
	ck_assert_msg(!strncmp(resp, "HTTP/1.0 200", 12) ||
		      !strncmp(resp, "HTTP/1.1 200", 12), "%s", resp);
	ck_assert_ptr_nonnull(strstr(resp, "text/plain; version=0.0.4"));
	ck_assert_ptr_nonnull(strstr(resp, text));
	free(resp);
	resp = http_get(port, "/");
	ck_assert_ptr_nonnull(strstr(resp, " 404 "));
	free(resp);
	free(text);
	egpu_metrics_free(m);
}
END_TEST

static void refused(struct egpu_metrics_opts o, int code, const char *what)
{
	o.sz = sizeof(o);
	ck_assert_ptr_null(o.listen ? egpu_metrics_serve(f.ctx, &o) :
			   egpu_metrics_new(f.ctx, &o));
	ck_assert_int_eq(egpu_errcode(), code);
	ck_assert_msg(strstr(egpu_errmsg(), what), "%s", egpu_errmsg());
}

START_TEST(bad_input_refused)
{
	egpu_metrics *m;

	refused((struct egpu_metrics_opts){ .objs = &f.obj, .obj_cnt = 1,
		.spec = "launches=count" }, EGPU_EINVAL, "launches=count");
	refused((struct egpu_metrics_opts){ .spec = "x=counter/thread" },
		EGPU_EINVAL, "KEY none|index|kernel");
	refused((struct egpu_metrics_opts){ .labels = "job=x" }, EGPU_EINVAL,
		"job=x");
	refused((struct egpu_metrics_opts){ .labels = "9a=x" }, EGPU_EINVAL,
		"9a=x");
	refused((struct egpu_metrics_opts){ .listen = "9464" }, EGPU_EINVAL,
		"[HOST]:PORT");
	refused((struct egpu_metrics_opts){ .listen = ":70000" }, EGPU_EINVAL,
		"[HOST]:PORT");
	refused((struct egpu_metrics_opts){ .objs = &f.obj, .obj_cnt = 1,
		.spec = "lat_hist=histogram/kernel" }, EGPU_EINVAL,
		"keys of 4 bytes");
	m = egpu_metrics_new(f.ctx, NULL);
	ck_assert_int_eq(egpu_metrics_add_map(m, egpu_obj_map(f.obj, "events"),
		&(struct egpu_metric_desc){ .sz = sizeof(struct egpu_metric_desc),
					    .kind = EGPU_METRIC_COUNTER }),
		EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "ring buffer"));
	ck_assert_int_eq(egpu_metrics_render(NULL, NULL, NULL), EGPU_EINVAL);
	ck_assert_int_eq(egpu_metrics_port(m), 0);
	egpu_metrics_free(m);
	egpu_metrics_free(NULL);
}
END_TEST

START_TEST(no_gpu_label_without_a_gpu)
{
	EGPU_OPTS(egpu_gpu_info, gpu);

	ck_assert_int_eq(egpu_ctx_gpu(f.ctx, &gpu), EGPU_ENODEV);
	ck_assert_int_eq(egpu_ctx_gpu(f.ctx, NULL), EGPU_EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("metrics");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, counters_by_kernel_name_with_other);
	tcase_add_test(tc, log2_histograms_with_le_buckets);
	tcase_add_test(tc, explicit_descriptions);
	tcase_add_test(tc, served_over_http);
	tcase_add_test(tc, bad_input_refused);
	tcase_add_test(tc, no_gpu_label_without_a_gpu);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
