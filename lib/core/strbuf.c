/* SPDX-License-Identifier: MIT */
/* Growable strings: PTX and messages are built with these. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

void sb_init(struct strbuf *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}

static int sb_reserve(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	size_t cap = sb->cap ? sb->cap : 256;
	char *p;

	if (sb->oom)
		return -1;
	if (need <= sb->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(sb->buf, cap);
	if (!p) {
		sb->oom = 1;
		return -1;
	}
	sb->buf = p;
	sb->cap = cap;
	return 0;
}

void sb_addn(struct strbuf *sb, const char *s, size_t n)
{
	if (sb_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_adds(struct strbuf *sb, const char *s)
{
	sb_addn(sb, s, strlen(s));
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || sb_reserve(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

int sb_ok(const struct strbuf *sb)
{
	return !sb->oom;
}

char *sb_detach(struct strbuf *sb, size_t *len)
{
	char *p = NULL;

	if (sb->oom)
		free(sb->buf);
	else
		p = sb->buf ? sb->buf : calloc(1, 1);
	if (len)
		*len = p ? sb->len : 0;
	sb_init(sb);
	return p;
}
