/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus text exposition format (version 0.0.4) of one metric:
 * HELP and TYPE lines, then one line per series; histograms as cumulative
 * _bucket{le=...} lines and _count. A log2 bucket b holds integers of
 * [2^b, 2^(b+1)) (bucket 0: 0 and 1), so its le is 2^(b+1) - 1 exactly.
 * There is no _sum: a log2 histogram does not know it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "export/export.h"

static const char *const type_word[] = {
	[EGPU_METRIC_COUNTER] = "counter",
	[EGPU_METRIC_GAUGE] = "gauge",
	[EGPU_METRIC_HISTOGRAM] = "histogram",
};

/* HELP text escapes only backslash and newline. */
static void help_escape(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		sb_adds(sb, *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" :
			(char[]){ *s, 0 });
}

/* '{key="...",' + @extra + @common + '}', or nothing when all are empty. */
static void labels(const struct egpu_metrics *m, const struct metric *mt,
		   const struct series *s, const char *extra,
		   const char *common, struct strbuf *sb)
{
	bool key = mt->key != EGPU_METRIC_KEY_NONE;
	bool any = false;

	if (!key && !*extra && !*common)
		return;
	sb_adds(sb, "{");
	if (key) {
		sb_adds(sb, mt->key == EGPU_METRIC_KEY_KERNEL ? "kernel=\"" :
			"key=\"");
		if (s->other)
			sb_adds(sb, "other");
		else if (mt->key == EGPU_METRIC_KEY_KERNEL)
			kernel_label(m, s->id, sb);
		else
			sb_printf(sb, "%" PRIu64, s->id);
		sb_adds(sb, "\"");
		any = true;
	}
	if (*extra) {
		sb_printf(sb, "%s%s", any ? "," : "", extra);
		any = true;
	}
	if (*common)
		sb_printf(sb, "%s%s", any ? "," : "", common);
	sb_adds(sb, "}");
}

/* Highest bucket that counts anything in any series. */
static unsigned top_bucket(const struct series *s, size_t cnt)
{
	unsigned top = 0;

	for (size_t i = 0; i < cnt; i++)
		for (unsigned b = top + 1; b < HIST_BUCKETS; b++)
			if (s[i].buckets[b])
				top = b;
	return top;
}

static void histogram(const struct egpu_metrics *m, const struct metric *mt,
		      const struct series *s, size_t cnt, const char *common,
		      struct strbuf *sb)
{
	unsigned top = top_bucket(s, cnt);
	char le[32];

	for (size_t i = 0; i < cnt; i++) {
		uint64_t sum = 0;

		for (unsigned b = 0; b <= top; b++) {
			sum += s[i].buckets[b];
			snprintf(le, sizeof(le), "le=\"%" PRIu64 "\"",
				 b == 63 ? UINT64_MAX : (UINT64_C(2) << b) - 1);
			sb_printf(sb, "%s_bucket", mt->name);
			labels(m, mt, &s[i], le, common, sb);
			sb_printf(sb, " %" PRIu64 "\n", sum);
		}
		sb_printf(sb, "%s_bucket", mt->name);
		labels(m, mt, &s[i], "le=\"+Inf\"", common, sb);
		sb_printf(sb, " %" PRIu64 "\n%s_count", s[i].value, mt->name);
		labels(m, mt, &s[i], "", common, sb);
		sb_printf(sb, " %" PRIu64 "\n", s[i].value);
	}
}

void metric_text(const struct egpu_metrics *m, const struct metric *mt,
		 const struct series *s, size_t cnt, const char *common,
		 struct strbuf *sb)
{
	sb_printf(sb, "# HELP %s ", mt->name);
	help_escape(sb, mt->help);
	sb_printf(sb, "\n# TYPE %s %s\n", mt->name, type_word[mt->kind]);
	if (mt->kind == EGPU_METRIC_HISTOGRAM) {
		histogram(m, mt, s, cnt, common, sb);
		return;
	}
	for (size_t i = 0; i < cnt; i++) {
		sb_adds(sb, mt->name);
		labels(m, mt, &s[i], "", common, sb);
		if (mt->kind == EGPU_METRIC_GAUGE)
			sb_printf(sb, " %" PRId64 "\n", (int64_t)s[i].value);
		else
			sb_printf(sb, " %" PRIu64 "\n", s[i].value);
	}
}
