/* SPDX-License-Identifier: MIT */
/*
 * A print record (struct print_rec, lib/maps/ring_layout.h) made into a
 * line: the format and %s strings are device addresses, looked up in the
 * host's copy of the program's global data; the arguments are formatted as
 * bpf_trace_printk does on the CPU (lib/jit/host_printk.c).
 */
#include <stdio.h>
#include <string.h>

#include "api/internal.h"
#include "jit/host_helpers.h"

struct print_job {
	print_lookup_fn lookup;
	void *user;
	char scratch[64]; /* text for a string that cannot be shown */
};

/* A %s argument: a NUL-terminated string of global data, else its address. */
static const char *lookup_str(void *arg, uint64_t addr)
{
	struct print_job *job = arg;
	const char *obj, *s;
	size_t len = 0;

	s = job->lookup(job->user, addr, &len, &obj);
	if (s && memchr(s, '\0', len))
		return s;
	snprintf(job->scratch, sizeof(job->scratch), "(gpu string at 0x%llx)",
		 (unsigned long long)addr);
	return job->scratch;
}

static void format_line(struct print_job *job, const struct print_rec *rec,
			struct strbuf *sb, const char **obj)
{
	size_t len = 0;
	const char *s = job->lookup(job->user, rec->fmt, &len, obj);

	if (!s) {
		sb_printf(sb, "(%s at 0x%llx, outside the program's global data)",
			  rec->kind == PRINT_PUTS ? "string" : "format",
			  (unsigned long long)rec->fmt);
		return;
	}
	if (rec->kind == PRINT_PUTS)
		sb_addn(sb, s, strnlen(s, len));
	else
		host_format_with(sb, s, rec->fmt_size < len ? rec->fmt_size : len,
				 rec->args, rec->nargs, lookup_str, job);
}

int print_format(const void *data, size_t size, print_lookup_fn lookup,
		 void *user, struct strbuf *sb, struct egpu_print_info *info)
{
	struct print_job job = { .lookup = lookup, .user = user };
	const struct print_rec *rec = data;

	if (size < sizeof(*rec) || rec->nargs > PRINT_MAX_ARGS ||
	    size < sizeof(*rec) + 8u * rec->nargs ||
	    (rec->kind != PRINT_PRINTK && rec->kind != PRINT_PUTS))
		return err_set(EGPU_EFORMAT, "print ring: malformed record of %zu bytes",
			       size);
	*info = (struct egpu_print_info){ .sz = sizeof(*info) };
	memcpy(info->block, rec->block, sizeof(info->block));
	memcpy(info->thread, rec->thread, sizeof(info->thread));
	format_line(&job, rec, sb, &info->obj);
	if (!sb_ok(sb))
		return err_set(EGPU_ENOMEM, "print ring: out of memory");
	if (sb->len && sb->buf[sb->len - 1] == '\n')
		sb->buf[--sb->len] = '\0';
	return 0;
}
