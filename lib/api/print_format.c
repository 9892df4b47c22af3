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

/* The format (or string) of @rec: in the record, or global data's copy. */
static const char *record_format(struct print_job *job,
				 const struct print_rec *rec, size_t *len,
				 const char **obj)
{
	if (rec->kind & PRINT_FMT_INLINE) {
		*len = rec->fmt_size;
		return (const char *)(rec->args + rec->nargs);
	}
	return job->lookup(job->user, rec->fmt, len, obj);
}

static void format_line(struct print_job *job, const struct print_rec *rec,
			struct strbuf *sb, const char **obj)
{
	uint16_t kind = rec->kind & ~PRINT_FMT_INLINE;
	size_t len = 0;
	const char *s = record_format(job, rec, &len, obj);

	if (!s) {
		sb_printf(sb, "(%s at 0x%llx, outside the program's global data)",
			  kind == PRINT_PUTS ? "string" : "format",
			  (unsigned long long)rec->fmt);
		return;
	}
	if (kind == PRINT_PUTS)
		sb_addn(sb, s, strnlen(s, len));
	else
		host_format_with(sb, s, rec->fmt_size < len ? rec->fmt_size : len,
				 rec->args, rec->nargs, lookup_str, job);
}

/* A known kind; an inline (printk) format within the record, NUL-terminated. */
static bool print_kind_valid(const struct print_rec *rec, size_t size)
{
	uint16_t kind = rec->kind & ~PRINT_FMT_INLINE;
	const char *inl = (const char *)(rec->args + rec->nargs);

	if (kind != PRINT_PRINTK && kind != PRINT_PUTS)
		return false;
	if (!(rec->kind & PRINT_FMT_INLINE))
		return true;
	return kind == PRINT_PRINTK && rec->fmt_size &&
	       rec->fmt_size <= PRINT_INLINE_MAX &&
	       size - sizeof(*rec) - 8u * rec->nargs >= rec->fmt_size &&
	       inl[rec->fmt_size - 1] == '\0';
}

int print_format(const void *data, size_t size, print_lookup_fn lookup,
		 void *user, struct strbuf *sb, struct egpu_print_info *info)
{
	struct print_job job = { .lookup = lookup, .user = user };
	const struct print_rec *rec = data;

	if (size < sizeof(*rec) || rec->nargs > PRINT_MAX_ARGS ||
	    size < sizeof(*rec) + 8u * rec->nargs || !print_kind_valid(rec, size))
		return err_set(EGPU_EFORMAT, "print ring: malformed record of %zu bytes",
			       size);
	*info = (struct egpu_print_info){ .sz = sizeof(*info) };
	memcpy(info->block, rec->block, sizeof(info->block));
	memcpy(info->thread, rec->thread, sizeof(info->thread));
	info->kernel_id = rec->kernel == PRINT_NO_KERNEL ? EGPU_PRINT_NO_KERNEL :
							   rec->kernel;
	format_line(&job, rec, sb, &info->obj);
	if (!sb_ok(sb))
		return err_set(EGPU_ENOMEM, "print ring: out of memory");
	if (sb->len && sb->buf[sb->len - 1] == '\n')
		sb->buf[--sb->len] = '\0';
	return 0;
}
