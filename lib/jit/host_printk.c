/* SPDX-License-Identifier: MIT */
/*
 * trace_printk formatting on the host: the conversions bpf_trace_printk
 * knows (%d %i %u %x %X %o %c %p %s %%) with flags, width, precision and
 * the length modifiers h, hh, l, ll and z. Anything else is copied as it is.
 */
#include <string.h>

#include "host_helpers.h"

#define SPEC_MAX 32

/* Print one integer conversion: @len is the count of 'h' (<0) or 'l' (>0). */
static void put_int(struct strbuf *sb, const char *spec, char conv, int len,
		    uint64_t v)
{
	bool sign = conv == 'd' || conv == 'i';

	if (len <= -2)
		v = sign ? (uint64_t)(int64_t)(signed char)v : (unsigned char)v;
	else if (len == -1)
		v = sign ? (uint64_t)(int64_t)(short)v : (unsigned short)v;
	else if (len == 0)
		v = sign ? (uint64_t)(int64_t)(int)v : (unsigned int)v;
	if (sign)
		sb_printf(sb, spec, (long long)v);
	else
		sb_printf(sb, spec, (unsigned long long)v);
}

/*
 * Parse the conversion at fmt[*i] (just after '%'). Fills @spec with a
 * printf conversion for a long long / pointer / char argument; returns the
 * conversion character, or 0 if this is not one we format.
 */
static char parse_spec(const char *fmt, size_t fmt_len, size_t *i,
		       char *spec, int *len)
{
	size_t n = 0, j = *i;
	char conv;

	spec[n++] = '%';
	while (j < fmt_len && fmt[j] && strchr("-+ #0123456789.", fmt[j]) &&
	       n < SPEC_MAX - 4)
		spec[n++] = fmt[j++];
	*len = 0;
	while (j < fmt_len && (fmt[j] == 'h' || fmt[j] == 'l' || fmt[j] == 'z'))
		*len += fmt[j++] == 'h' ? -1 : 1;
	if (j >= fmt_len || !fmt[j] || !strchr("diuxXocps", fmt[j]))
		return 0;
	conv = fmt[j];
	if (strchr("diuxXo", conv)) {
		spec[n++] = 'l';
		spec[n++] = 'l';
	}
	spec[n++] = conv;
	spec[n] = '\0';
	*i = j + 1;
	return conv;
}

void host_format(struct strbuf *sb, const char *fmt, size_t fmt_len,
		 const uint64_t *args, unsigned nargs)
{
	host_format_with(sb, fmt, fmt_len, args, nargs, NULL, NULL);
}

/* A %s argument: a host address, or whatever @str makes of it. */
static const char *str_arg(uint64_t arg, host_str_fn str, void *user)
{
	const char *s = str ? str(user, arg) : (const char *)(uintptr_t)arg;

	return s ? s : "(null)";
}

void host_format_with(struct strbuf *sb, const char *fmt, size_t fmt_len,
		      const uint64_t *args, unsigned nargs, host_str_fn str,
		      void *user)
{
	char spec[SPEC_MAX];
	unsigned arg = 0;
	size_t i = 0;

	while (i < fmt_len && fmt[i]) {
		size_t start = i;
		char conv;
		int len;

		if (fmt[i] != '%') {
			sb_addn(sb, &fmt[i++], 1);
			continue;
		}
		i++;
		if (i < fmt_len && fmt[i] == '%') {
			sb_addn(sb, "%", 1);
			i++;
			continue;
		}
		conv = parse_spec(fmt, fmt_len, &i, spec, &len);
		if (!conv || arg >= nargs) {
			/* Not ours, or no argument left: copy the '%'. */
			sb_addn(sb, &fmt[start], 1);
			i = start + 1;
			continue;
		}
		if (conv == 's')
			sb_printf(sb, spec, args[arg] ? str_arg(args[arg], str, user) :
				  "(null)");
		else if (conv == 'p')
			sb_printf(sb, spec, (void *)(uintptr_t)args[arg]);
		else if (conv == 'c')
			sb_printf(sb, spec, (int)(unsigned char)args[arg]);
		else
			put_int(sb, spec, conv, len, args[arg]);
		arg++;
	}
}
