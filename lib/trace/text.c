/* SPDX-License-Identifier: MIT */
/* Frames as text, and text made safe for JSON and XML (writers.h). */
#include <string.h>

#include "writers.h"

static const char *const op_prefix[] = {
	[TRACE_KERNEL] = "[GPU_Kernel]",
	[TRACE_MEMCPY] = "[GPU_Memcpy]",
	[TRACE_MEMSET] = "[GPU_Memset]",
};

/* The collector's own word for the kind, redundant after the prefix. */
static const char *const op_word[] = {
	[TRACE_KERNEL] = "",
	[TRACE_MEMCPY] = "memcpy ",
	[TRACE_MEMSET] = "memset ",
};

/* Bytes of @s before the first that @special picks (runs copied at once). */
static size_t plain_run(const char *s, bool (*special)(unsigned char c))
{
	size_t n = 0;

	while (s[n] && !special((unsigned char)s[n]))
		n++;
	return n;
}

static bool folded_special(unsigned char c)
{
	return c == ';' || c < 0x20 || c == 0x7f;
}

static bool text_special(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

void text_put(struct strbuf *sb, const char *s, bool folded)
{
	while (*s) {
		size_t n = plain_run(s, folded ? folded_special : text_special);

		sb_addn(sb, s, n);
		s += n;
		if (*s)
			sb_adds(sb, *s++ == ';' && folded ? ":" : "?");
	}
}

void frame_put(struct strbuf *sb, const struct frame *f)
{
	const char *name = f->name;
	size_t n;

	switch (f->kind) {
	case FRAME_HOST:
		text_put(sb, name, true);
		return;
	case FRAME_DEVICE:
		sb_printf(sb, "[GPU %u]", f->num);
		return;
	case FRAME_OP:
		break;
	}
	if (f->num >= ARRAY_SIZE(op_prefix)) {
		sb_printf(sb, "[GPU_Op%u]", f->num);
	} else {
		sb_adds(sb, op_prefix[f->num]);
		n = strlen(op_word[f->num]);
		if (!strncmp(name, op_word[f->num], n))
			name += n;
	}
	text_put(sb, name, true);
}

void path_put(struct strbuf *sb, const struct op_path *p, uint32_t depth)
{
	for (uint32_t i = 0; i < depth; i++) {
		struct frame f = path_frame(p, i);

		if (i)
			sb_adds(sb, ";");
		frame_put(sb, &f);
	}
}

/* Length of the valid UTF-8 sequence at @s (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates, past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/*
 * An escaper: which bytes are special (all the others are copied in
 * runs), and what one special character becomes: @p points at it, @n is
 * its valid UTF-8 length or 0 for an invalid byte.
 */
struct escaper {
	bool (*special)(unsigned char c);
	void (*put)(struct strbuf *sb, const unsigned char *p, size_t n);
};

static void escape(struct strbuf *sb, const char *s, const struct escaper *e)
{
	while (*s) {
		size_t n = plain_run(s, e->special);

		sb_addn(sb, s, n);
		s += n;
		if (!*s)
			break;
		n = utf8_len((const unsigned char *)s);
		e->put(sb, (const unsigned char *)s, n);
		s += n ? n : 1;
	}
}

static bool utf8_special(unsigned char c)
{
	return c >= 0x80;
}

static void utf8_copy(struct strbuf *sb, const unsigned char *p, size_t n)
{
	sb_addn(sb, n ? (const char *)p : REPLACEMENT, n ? n : 3);
}

void utf8_put(struct strbuf *sb, const char *s)
{
	static const struct escaper utf8 = { utf8_special, utf8_copy };

	escape(sb, s, &utf8);
}

static bool json_special(unsigned char c)
{
	return c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
}

static void json_put(struct strbuf *sb, const unsigned char *p, size_t n)
{
	if (!n)
		sb_adds(sb, "\\ufffd");
	else if (*p == '"' || *p == '\\')
		sb_printf(sb, "\\%c", *p);
	else if (*p < 0x20)
		sb_printf(sb, "\\u%04x", *p);
	else
		sb_addn(sb, (const char *)p, n);
}

void json_escape(struct strbuf *sb, const char *s)
{
	static const struct escaper json = { json_special, json_put };

	escape(sb, s, &json);
}

static bool xml_special(unsigned char c)
{
	return c < 0x20 || c >= 0x80 || c == '&' || c == '<' || c == '>' ||
	       c == '"' || c == '\'';
}

static void xml_put(struct strbuf *sb, const unsigned char *p, size_t n)
{
	static const char *const ent[] = {
		['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;",
		['"'] = "&quot;", ['\''] = "&apos;",
	};

	if (n == 1 && *p < ARRAY_SIZE(ent) && ent[*p])
		sb_adds(sb, ent[*p]);
	else if (!n || (*p < 0x20 && *p != '\t'))
		sb_adds(sb, REPLACEMENT); /* not allowed in XML 1.0 */
	else
		sb_addn(sb, (const char *)p, n);
}

void xml_escape(struct strbuf *sb, const char *s)
{
	static const struct escaper xml = { xml_special, xml_put };

	escape(sb, s, &xml);
}

void put_u64(struct strbuf *sb, uint64_t v)
{
	char buf[20], *p = buf + sizeof(buf);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	sb_addn(sb, p, (size_t)(buf + sizeof(buf) - p));
}

void out_flush(struct strbuf *sb, FILE *f)
{
	if (sb->len && sb_ok(sb))
		fwrite(sb->buf, 1, sb->len, f);
	sb->len = 0;
}

int out_done(struct strbuf *sb, FILE *f, const char *what)
{
	int oom = !sb_ok(sb);

	out_flush(sb, f);
	sb_free(sb);
	if (oom)
		return err_set(EGPU_ENOMEM, "trace: out of memory writing the %s", what);
	if (fflush(f) || ferror(f))
		return err_set(EGPU_EIO, "trace: cannot write the %s", what);
	return 0;
}
