/* SPDX-License-Identifier: MIT */
/*
 * A Prometheus label value as the text format writes it, used by the
 * series lines (metric_text.c), the kernel labels (kernel_names.c) and
 * the parsed specs (metric_desc.c).
 */
#include "export/export.h"

void label_escape(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			sb_printf(sb, "\\%c", *s);
		else if (*s == '\n')
			sb_adds(sb, "\\n");
		else
			sb_addn(sb, s, 1);
	}
}
