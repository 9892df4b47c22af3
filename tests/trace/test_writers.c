/* SPDX-License-Identifier: MIT */
/*
 * The trace writers on a synthetic trace, without a GPU: the join, folded
 * lines that add up to the GPU time, the Chrome trace's events and flows,
 * the SVG's frame widths, the summary and the per-kernel totals. The
 * outputs are also left in the build folder, where check_outputs.py
 * parses the JSON and the XML with Python's own parsers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "synth.h"
#include "trace/writers.h"
#include "test_util.h"

typedef int (*writer_fn)(const struct trace_data *td, FILE *f);

static int summary_all(const struct trace_data *td, FILE *f)
{
	return trace_write_summary(td, f, 0);
}

static int summary_top2(const struct trace_data *td, FILE *f)
{
	return trace_write_summary(td, f, 2);
}

/* What @w writes for @td, also saved as EGPU_TEST_BUILD/@save if given. */
static char *output(writer_fn w, const struct trace_data *td, const char *save)
{
	char *buf = NULL, path[512];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(w(td, f), 0);
	fclose(f);
	if (save) {
		snprintf(path, sizeof(path), "%s/%s", EGPU_TEST_BUILD, save);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
		fclose(f);
	}
	return buf;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (s = strstr(s, what); s; s = strstr(s + 1, what))
		n++;
	return n;
}

START_TEST(join_by_correlation)
{
	struct trace_data *td = synth_trace(2);
	uint32_t graph = TRACE_NONE;

	ck_assert_uint_eq(trace_join(td), 7);
	for (size_t i = 1; i < td->api_cnt; i++)
		ck_assert_uint_lt(td->apis[i - 1].corr, td->apis[i].corr);
	for (size_t i = 0; i < td->op_cnt; i++) {
		const struct trace_op *op = &td->ops[i];

		if (op->corr == 99) {
			ck_assert_uint_eq(op->api, TRACE_NONE);
			continue;
		}
		ck_assert_uint_lt(op->api, td->api_cnt);
		ck_assert_uint_eq(td->apis[op->api].corr, op->corr);
		if (op->corr == 5) {
			ck_assert(graph == TRACE_NONE || graph == op->api);
			graph = op->api;
		}
	}
	ck_assert_str_eq(td->apis[graph].name, "cudaGraphLaunch");
}
END_TEST

struct folded {
	char *path[64];
	unsigned long long us[64];
	size_t n;
	unsigned long long sum;
};

/* Parse folded text: "PATH COUNT" lines, failing on anything else. */
static void parse_folded(char *text, struct folded *fo)
{
	memset(fo, 0, sizeof(*fo));
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strrchr(line, ' '), *end;

		ck_assert_msg(sp && sp > line, "no count in '%s'", line);
		*sp = '\0';
		ck_assert_uint_lt(fo->n, 64);
		fo->path[fo->n] = line;
		fo->us[fo->n] = strtoull(sp + 1, &end, 10);
		ck_assert_msg(*end == '\0' && end > sp + 1, "bad count in '%s'", line);
		for (size_t i = 0; i < fo->n; i++)
			ck_assert_msg(strcmp(fo->path[i], line), "'%s' twice", line);
		fo->sum += fo->us[fo->n++];
	}
}

/* The line of @path is within 1 us of @ns. */
static void expect_line(const struct folded *fo, const char *path, uint64_t ns)
{
	for (size_t i = 0; i < fo->n; i++) {
		if (strcmp(fo->path[i], path))
			continue;
		ck_assert_msg(fo->us[i] * 1000 + 1000 >= ns && fo->us[i] * 1000 <= ns + 1000,
			      "'%s': %llu us for %llu ns", path, fo->us[i],
			      (unsigned long long)ns);
		return;
	}
	ck_abort_msg("no line '%s'", path);
}

#define UNKNOWN "[unknown launch];"

static unsigned long long rounded_us(uint64_t ns)
{
	return (ns + 500) / 1000;
}

START_TEST(folded_two_devices)
{
	struct trace_data *td = synth_trace(2);
	char *text = output(trace_write_folded, td, "synth2.folded");
	struct folded fo;

	parse_folded(text, &fo);
	ck_assert_uint_eq(fo.n, 9);
	ck_assert_uint_eq(fo.sum, rounded_us(synth_ns(td, NULL)));
	/* Two stacks with the same frames make one line. */
	expect_line(&fo, "main;forward;qkv_proj;cudaLaunchKernel;"
		    "[GPU_Kernel]matmul_kernel;[GPU 0]", 3099632 + 100400);
	/* The API is added where the stack does not end in it. */
	expect_line(&fo, "main;forward;mlp_up;cudaLaunchKernel;"
		    "[GPU_Kernel]matmul_kernel;[GPU 1]", 1000000);
	expect_line(&fo, "main;decode;cudaGraphLaunch;[GPU_Kernel]softmax_kernel;[GPU 0]", 499);
	expect_line(&fo, "[unknown launch];[GPU_Kernel]matmul_kernel;[GPU 1]", 250000);
	expect_line(&fo, "main;libfoo.so+0x1a2b;cudaMemcpyAsync;[GPU_Memcpy]HtoD;[GPU 0]", 12345);
	expect_line(&fo, "cudaMemsetAsync;[GPU_Memset]memset;[GPU 1]", 800);
	/* ';' in names would split frames, a newline would split lines. */
	expect_line(&fo, "main;load<int, \"q\">&:;cudaLaunchKernel;"
		    "[GPU_Kernel]op<a&b>\"q\":x?\xff;[GPU 0]", 3333);
	free(text);
}
END_TEST

START_TEST(folded_one_device_has_no_tag)
{
	struct trace_data *td = synth_trace(1);
	char *text = output(trace_write_folded, td, "synth1.folded");
	struct folded fo;

	ck_assert_ptr_null(strstr(text, "[GPU 0]"));
	parse_folded(text, &fo);
	ck_assert_uint_eq(fo.n, 9);
	expect_line(&fo, "main;forward;qkv_proj;cudaLaunchKernel;"
		    "[GPU_Kernel]matmul_kernel", 3099632 + 100400);
	expect_line(&fo, "[unknown launch];[GPU_Kernel]matmul_kernel", 250000);
	ck_assert_uint_eq(fo.sum, rounded_us(synth_ns(td, NULL)));
	free(text);
}
END_TEST

/* Many lines under a microsecond each still add up to the total. */
START_TEST(folded_rounding_keeps_the_total)
{
	enum { N = 60 };
	static struct trace_op ops[N];
	static char names[N][16];
	struct trace_data td = { .ops = ops, .op_cnt = N };
	struct folded fo;
	uint64_t ns = 0;
	char *text;

	for (unsigned i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "k%02u", i);
		ops[i] = (struct trace_op){ .kind = TRACE_KERNEL, .corr = i,
			.start = 100 * i, .end = 100 * i + 300 + 37 * i,
			.name = names[i], .api = TRACE_NONE };
		ns += 300 + 37 * i;
	}
	text = output(trace_write_folded, &td, NULL);
	parse_folded(text, &fo);
	ck_assert_uint_eq(fo.n, N);
	ck_assert_uint_eq(fo.sum, rounded_us(ns));
	for (unsigned i = 0; i < N; i++) {
		char path[1024];

		snprintf(path, sizeof(path), UNKNOWN "[GPU_Kernel]%s", names[i]);
		expect_line(&fo, path, 300 + 37 * i);
	}
	free(text);
}
END_TEST

START_TEST(chrome_events_and_flows)
{
	struct trace_data *td = synth_trace(2);
	char *json = output(trace_write_chrome, td, "synth2.json");

	/* One X event per call and per operation, one flow per matched op. */
	ck_assert_uint_eq(count(json, "\"ph\":\"X\""), td->api_cnt + td->op_cnt);
	ck_assert_uint_eq(count(json, "\"ph\":\"s\""), td->op_cnt - 1);
	ck_assert_uint_eq(count(json, "\"ph\":\"f\""), td->op_cnt - 1);
	ck_assert_uint_eq(count(json, "\"bp\":\"e\""), td->op_cnt - 1);
	ck_assert_ptr_nonnull(strstr(json, "\"name\":\"op<a&b>\\\"q\\\";x\\u000a\\ufffd\""));
	ck_assert_ptr_nonnull(strstr(json, "\"args\":{\"name\":\"synth<&>\"}"));
	ck_assert_ptr_nonnull(strstr(json, "\"args\":{\"name\":\"GPU 1\"}"));
	ck_assert_ptr_nonnull(strstr(json, "\"args\":{\"name\":\"stream 14\"}"));
	/* Microseconds since the first call (1000 ns), nanoseconds exact. */
	ck_assert_ptr_nonnull(strstr(json, "\"tid\":100,\"ts\":0.000,\"dur\":0.200"));
	ck_assert_ptr_nonnull(strstr(json, "\"ts\":9.000,\"dur\":3099.632"));
	ck_assert_ptr_nonnull(strstr(json, "\"stack\":\"main;forward;qkv_proj;cudaLaunchKernel\""));
	ck_assert_ptr_nonnull(strstr(json, "\"lost_records\":3"));
	free(json);
	json = output(trace_write_chrome, synth_trace(1), "synth1.json");
	free(json);
}
END_TEST

/* The Perfetto trace: here only that it is written, whole, as packets
 * (Trace.packet, field 1); check_perfetto.py decodes what is left in the
 * build folder with protoc and checks every call, operation and flow. */
START_TEST(perfetto_packets)
{
	char *pb;

	pb = output(trace_write_perfetto, synth_trace(2), "synth2.perfetto-trace");
	ck_assert_int_eq(pb[0], 0x0a);
	free(pb);
	pb = output(trace_write_perfetto, synth_trace(1), "synth1.perfetto-trace");
	free(pb);
}
END_TEST

struct svg_frame {
	char title[256];
	double x, w;
};

/* The frames of an SVG flame graph, read back with sscanf. */
static size_t svg_frames(const char *svg, struct svg_frame *fr, size_t max)
{
	size_t n = 0;

	for (const char *g = strstr(svg, "<g class=\"f\">"); g;
	     g = strstr(g + 1, "<g class=\"f\">")) {
		ck_assert_uint_lt(n, max);
		ck_assert_int_eq(sscanf(g, "<g class=\"f\"><title>%255[^<]</title>"
					"<rect x=\"%lf\" y=\"%*f\" width=\"%lf\"",
					fr[n].title, &fr[n].x, &fr[n].w), 3);
		n++;
	}
	return n;
}

static const struct svg_frame *svg_find(const struct svg_frame *fr, size_t n,
					const char *prefix)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(fr[i].title, prefix, strlen(prefix)))
			return &fr[i];
	ck_abort_msg("no frame '%s'", prefix);
	return NULL;
}

#define SPAN 1180.0 /* the SVG's width less its margins */

/*
 * Paths are equal by their frames, whatever stacks made them: a stack
 * [main] with the API g appended is the stack [main, g] that ends in g.
 * Paths sharing a prefix stay together (one frame "g" under "main").
 */
START_TEST(equal_frames_are_one_path)
{
	static const char *s0[] = { "main" }, *s1[] = { "main", "g" };
	static const char *s2[] = { "main", "g", "h", "g" };
	struct trace_stack stacks[] = { { 1, s0 }, { 2, s1 }, { 4, s2 } };
	struct trace_api apis[] = {
		{ 1, 1, 0, 1, "g", 0 }, { 2, 1, 0, 1, "g", 1 },
		{ 3, 1, 0, 1, "g", 2 }, { 4, 1, 0, 1, "a", 0 },
		{ 5, 1, 0, 1, "z", 1 },
	};
	struct trace_op ops[5];
	struct trace_data td = { .apis = apis, .api_cnt = 5, .ops = ops,
				 .op_cnt = 5, .stacks = stacks, .stack_cnt = 3 };
	struct svg_frame fr[32];
	struct folded fo;
	char *text;
	size_t n, g = 0;

	for (unsigned i = 0; i < 5; i++)
		ops[i] = (struct trace_op){ .kind = TRACE_KERNEL, .corr = i + 1,
			.start = 0, .end = 1000 * (i + 1), .name = "k" };
	trace_join(&td);
	text = output(trace_write_folded, &td, NULL);
	parse_folded(text, &fo);
	ck_assert_uint_eq(fo.n, 4);
	expect_line(&fo, "main;g;[GPU_Kernel]k", 3000);
	expect_line(&fo, "main;g;h;g;[GPU_Kernel]k", 3000);
	expect_line(&fo, "main;a;[GPU_Kernel]k", 4000);
	expect_line(&fo, "main;g;z;[GPU_Kernel]k", 5000);
	free(text);
	text = output(trace_write_svg, &td, NULL);
	n = svg_frames(text, fr, 32);
	for (size_t i = 0; i < n; i++)
		g += !strncmp(fr[i].title, "g (", 3);
	ck_assert_uint_eq(g, 2); /* main;g and main;g;h;g */
	ck_assert_double_eq_tol(svg_find(fr, n, "g (11.000 us")->w,
				SPAN * 11 / 15, 0.006);
	free(text);
}
END_TEST

START_TEST(svg_widths_follow_time)
{
	struct trace_data *td = synth_trace(1);
	char *svg = output(trace_write_svg, td, "synth1.svg");
	double total = (double)synth_ns(td, NULL);
	struct svg_frame fr[64];
	size_t n = svg_frames(svg, fr, 64);
	const struct svg_frame *f;

	/* all, 4 host roots ([unknown launch], main, the memset's API). */
	ck_assert_uint_gt(n, 10);
	f = svg_find(fr, n, "all (");
	ck_assert_double_eq_tol(f->w, SPAN, 0.006);
	f = svg_find(fr, n, "[GPU_Kernel]softmax_kernel (0.499 us, ");
	ck_assert_double_eq_tol(f->w, SPAN * 499 / total, 0.006);
	f = svg_find(fr, n, "qkv_proj (");
	ck_assert_double_eq_tol(f->w, SPAN * (3099632 + 100400) / total, 0.006);
	f = svg_find(fr, n, "[GPU_Kernel]op&lt;a&amp;b&gt;&quot;q&quot;:x?\xef\xbf\xbd (");
	ck_assert_double_eq_tol(f->w, SPAN * 3333 / total, 0.006);
	ck_assert_ptr_nonnull(strstr(svg, "synth&lt;&amp;&gt;: GPU time by CPU call path"));
	/* Deterministic: the same trace writes the same bytes. */
	char *again = output(trace_write_svg, td, NULL);

	ck_assert_str_eq(svg, again);
	free(again);
	free(svg);
	free(output(trace_write_svg, synth_trace(2), "synth2.svg"));
}
END_TEST

/* Frames under 0.1 px are left out; their time stays in their parents. */
START_TEST(svg_leaves_out_hairlines)
{
	struct trace_op ops[] = {
		{ .kind = TRACE_KERNEL, .start = 0, .end = 1000000, .name = "wide",
		  .api = TRACE_NONE },
		{ .kind = TRACE_KERNEL, .start = 0, .end = 50, .name = "hairline",
		  .api = TRACE_NONE },
	};
	struct trace_data td = { .ops = ops, .op_cnt = 2 };
	char *svg = output(trace_write_svg, &td, NULL);
	struct svg_frame fr[8];
	size_t n = svg_frames(svg, fr, 8);

	ck_assert_uint_eq(n, 3);
	ck_assert_double_eq_tol(svg_find(fr, n, UNKNOWN_LAUNCH " (")->w, SPAN, 0.006);
	ck_assert_ptr_null(strstr(svg, "hairline"));
	free(svg);
}
END_TEST

START_TEST(summary_table)
{
	struct trace_data *td = synth_trace(2);
	char *text = output(summary_all, td, "synth2.txt");
	char row[256];

	ck_assert_ptr_nonnull(strstr(text, "synth<&>: 8 kernel runs of 4 kernels, "));
	ck_assert_ptr_nonnull(strstr(text, ", 7 joined to their launch\n"));
	ck_assert_ptr_nonnull(strstr(text, "CUPTI dropped 3 activity records"));
	ck_assert_ptr_nonnull(strstr(text, "copies and sets: 2, 0.013 ms, 1052672 bytes\n"));
	/* matmul first: 5 runs, its hottest path (3.2 ms) under it. */
	snprintf(row, sizeof(row), "%10.3f %6.1f%% %9d %9.3f  matmul_kernel\n"
		 "%10.3f %6.1f%% %9d              main;forward;qkv_proj;cudaLaunchKernel\n",
		 synth_ns(td, "matmul_kernel") / 1e6,
		 100.0 * synth_ns(td, "matmul_kernel") / (synth_ns(td, NULL) - 12345 - 800),
		 5, synth_ns(td, "matmul_kernel") / 5e3, 3.200032,
		 100.0 * 3200032 / (synth_ns(td, NULL) - 12345 - 800), 2);
	ck_assert_msg(strstr(text, row), "no\n%s\nin\n%s", row, text);
	ck_assert_ptr_nonnull(strstr(text, "[unknown launch]\n"));
	ck_assert_ptr_nonnull(strstr(text, "main;decode;cudaGraphLaunch\n"));
	ck_assert_ptr_nonnull(strstr(text, "main;load<int, \"q\">&:;cudaLaunchKernel\n"));
	/* Control characters do not reach the terminal. */
	ck_assert_ptr_nonnull(strstr(text, "  op<a&b>\"q\";x?\xff\n"));
	free(text);
	text = output(summary_top2, td, NULL);
	ck_assert_ptr_nonnull(strstr(text, "  op<a&b>"));
	ck_assert_ptr_null(strstr(text, "rmsnorm_kernel\n"));
	ck_assert_ptr_nonnull(strstr(text, "... 2 more kernels\n"));
	free(text);
}
END_TEST

START_TEST(kernels_by_gpu_time)
{
	struct trace_data *td = synth_trace(2);
	struct egpu_trace_kernel *k;
	size_t n;

	ck_assert_int_eq(trace_kernels(td, &k, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(k[0].name, "matmul_kernel");
	ck_assert_uint_eq(k[0].launches, 5);
	ck_assert_uint_eq(k[0].gpu_ns, synth_ns(td, "matmul_kernel"));
	/* Across devices: the qkv_proj path ran on device 0 only anyway. */
	ck_assert_str_eq(k[0].hottest_path, "main;forward;qkv_proj;cudaLaunchKernel");
	ck_assert_uint_eq(k[0].hottest_ns, 3200032);
	ck_assert_str_eq(k[1].name, ODD_KERNEL);
	ck_assert_uint_eq(k[1].gpu_ns, 3333);
	ck_assert_str_eq(k[2].name, "rmsnorm_kernel");
	ck_assert_str_eq(k[2].hottest_path, "main;decode;cudaGraphLaunch");
	ck_assert_str_eq(k[3].name, "softmax_kernel");
	for (size_t i = 1; i < n; i++)
		ck_assert_uint_ge(k[i - 1].gpu_ns, k[i].gpu_ns);
	free(k);
}
END_TEST

START_TEST(kernel_without_launch_has_no_path)
{
	struct trace_op op = { .kind = TRACE_KERNEL, .start = 5, .end = 905,
			       .name = "lonely", .api = TRACE_NONE };
	struct trace_data td = { .ops = &op, .op_cnt = 1 };
	struct egpu_trace_kernel *k;
	size_t n;

	ck_assert_uint_eq(trace_join(&td), 0);
	ck_assert_int_eq(trace_kernels(&td, &k, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(k[0].hottest_path, "");
	ck_assert_uint_eq(k[0].hottest_ns, 0);
	ck_assert_uint_eq(k[0].gpu_ns, 900);
	free(k);
}
END_TEST

START_TEST(empty_trace)
{
	struct trace_data td = { .process = "idle" };
	struct egpu_trace_kernel *k;
	char *s;
	size_t n = 1;

	ck_assert_uint_eq(trace_join(&td), 0);
	s = output(trace_write_folded, &td, "empty.folded");
	ck_assert_str_eq(s, "");
	free(s);
	s = output(trace_write_chrome, &td, "empty.json");
	ck_assert_ptr_nonnull(strstr(s, "\"traceEvents\":["));
	free(s);
	s = output(trace_write_perfetto, &td, "empty.perfetto-trace");
	ck_assert_int_eq(s[0], 0x0a);  /* the process's track, nothing more */
	free(s);
	s = output(trace_write_svg, &td, "empty.svg");
	ck_assert_ptr_nonnull(strstr(s, "</svg>\n"));
	ck_assert_uint_eq(count(s, "<g class=\"f\">"), 0);
	free(s);
	s = output(summary_all, &td, NULL);
	ck_assert_str_eq(s, "idle: 0 kernel runs of 0 kernels, 0.000 ms GPU time, "
			 "0 joined to their launch\n");
	free(s);
	ck_assert_int_eq(trace_kernels(&td, &k, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(k);
}
END_TEST

static const writer_fn writers[] = {
	trace_write_folded, trace_write_chrome, trace_write_svg, summary_all,
	trace_write_perfetto,
};
static const char *const writer_what[] = {
	"folded stacks", "Chrome trace", "SVG flame graph", "trace summary",
	"Perfetto trace",
};

START_TEST(write_failure_is_reported)
{
	FILE *f = fopen("/dev/full", "w");

	if (!f)
		return; /* no /dev/full: nothing to fill */
	ck_assert_int_eq(writers[_i](synth_trace(2), f), EGPU_EIO);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), writer_what[_i]));
	fclose(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trace writers");
	TCase *tc = tcase_create("writers");

	tcase_add_test(tc, join_by_correlation);
	tcase_add_test(tc, folded_two_devices);
	tcase_add_test(tc, folded_one_device_has_no_tag);
	tcase_add_test(tc, folded_rounding_keeps_the_total);
	tcase_add_test(tc, equal_frames_are_one_path);
	tcase_add_test(tc, chrome_events_and_flows);
	tcase_add_test(tc, perfetto_packets);
	tcase_add_test(tc, svg_widths_follow_time);
	tcase_add_test(tc, svg_leaves_out_hairlines);
	tcase_add_test(tc, summary_table);
	tcase_add_test(tc, kernels_by_gpu_time);
	tcase_add_test(tc, kernel_without_launch_has_no_path);
	tcase_add_test(tc, empty_trace);
	tcase_add_loop_test(tc, write_failure_is_reported, 0, 5);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
