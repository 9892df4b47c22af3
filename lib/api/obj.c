/* SPDX-License-Identifier: MIT */
/* Loading objects and walking their programs and maps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/internal.h"
#include "verifier/verifier.h"

static void obj_free(struct egpu_obj *obj)
{
	for (size_t i = 0; obj->progs && i < obj->spec.prog_cnt; i++) {
		jit_host_free(obj->progs[i].host);
		jit_host_free(obj->progs[i].host_gpu);
		jit_cache_drop_prog(obj->ctx, &obj->progs[i]);
		prog_gpu_unload(&obj->progs[i]);
		free(obj->progs[i].refusal);
		free(obj->progs[i].never_stack);
		pthread_mutex_destroy(&obj->progs[i].lock);
	}
	for (size_t i = 0; obj->maps && i < obj->spec.map_cnt; i++) {
		host_map_free(obj->maps[i].host);
		dev_map_free(obj->maps[i].dev);
		ring_free(obj->maps[i].ring);
	}
	free(obj->progs);
	free(obj->maps);
	object_spec_free(&obj->spec);
	free(obj->name);
	free(obj);
}

static int obj_create_maps(struct egpu_obj *obj)
{
	obj->maps = calloc(obj->spec.map_cnt ? obj->spec.map_cnt : 1,
			   sizeof(*obj->maps));
	if (!obj->maps)
		return err_set(EGPU_ENOMEM, "object '%s': out of memory", obj->name);
	for (size_t i = 0; i < obj->spec.map_cnt; i++) {
		struct egpu_map *m = &obj->maps[i];
		int err;

		m->obj = obj;
		m->spec = &obj->spec.maps[i];
		err = host_map_new(m->spec, &m->host);
		/* Ring maps keep their records in one place, CPU or GPU. */
		if (!err && map_type_is_ring(m->spec->type))
			err = ring_new_for_map(m->spec, &m->ring);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Keep the verdict on a refused probe so that the others of its object
 * stay usable; a strict load fails instead.
 */
static int keep_refusal(struct egpu_prog *p, int err, bool strict)
{
	const struct egpu_logger *lg = &p->obj->ctx->log;

	if (strict || err != EGPU_EVERIFY)
		return err;
	p->refusal = strdup(egpu_errmsg());
	if (!p->refusal)
		return err_set(EGPU_ENOMEM, "prog '%s': out of memory", p->spec->name);
	p->refused = err;
	log_msg(lg, EGPU_LOG_WARN, "object '%s': %s", p->obj->name, p->refusal);
	return 0;
}

static int obj_init_progs(struct egpu_obj *obj, bool strict)
{
	obj->progs = calloc(obj->spec.prog_cnt, sizeof(*obj->progs));
	if (!obj->progs)
		return err_set(EGPU_ENOMEM, "object '%s': out of memory", obj->name);
	for (size_t i = 0; i < obj->spec.prog_cnt; i++) {
		struct egpu_prog *p = &obj->progs[i];

		p->obj = obj;
		p->spec = &obj->spec.progs[i];
		pthread_mutex_init(&p->lock, NULL);
	}
	/*
	 * The structural pass on every program (an unknown helper refuses its
	 * program, everywhere); then probes are verified, direct runs when
	 * their memory is known.
	 */
	for (size_t i = 0; i < obj->spec.prog_cnt; i++) {
		struct egpu_prog *p = &obj->progs[i];
		int err = verifier_check_insns(p->spec, obj->spec.map_cnt, obj->abi);

		if (err) {
			p->malformed = true;
		} else if (p->spec->attach != EGPU_ATTACH_NONE) {
			err = prog_verify(p, p->spec->attach, 0);
		}
		if (err && (err = keep_refusal(p, err, strict)))
			return err;
	}
	return 0;
}

/* Takes ownership of @spec whatever happens. */
static egpu_obj *obj_new(egpu_ctx *ctx, struct object_spec *spec,
			 const char *name, int abi, bool strict)
{
	struct egpu_obj *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj || !(obj->name = strdup(name))) {
		free(obj);
		object_spec_free(spec);
		err_set(EGPU_ENOMEM, "object '%s': out of memory", name);
		return NULL;
	}
	obj->ctx = ctx;
	obj->abi = abi;
	obj->users = __atomic_load_n(&ctx->helpers, __ATOMIC_ACQUIRE);
	obj->spec = *spec;
	err = obj_init_progs(obj, strict);
	if (!err)
		err = obj_create_maps(obj);
	if (err) {
		err_prefix("object '%s'", name);
		obj_free(obj);
		return NULL;
	}
	obj->next = ctx->objs;
	if (ctx->objs)
		ctx->objs->prev = obj;
	ctx->objs = obj;
	return obj;
}

typedef int (*parse_fn)(const void *data, size_t len, const char *name,
			struct object_spec *out);

static int parse_elf(const void *data, size_t len, const char *name,
		     struct object_spec *out)
{
	return object_parse_elf(data, len, name, out);
}

static int parse_raw(const void *data, size_t len, const char *name,
		     struct object_spec *out)
{
	(void)name;
	return object_parse_raw(data, len, out);
}

/* @whole: the object is its one program, whose refusal is the load's. */
static egpu_obj *load(egpu_ctx *ctx, const void *data, size_t len,
		      const char *default_name, parse_fn parse, bool whole,
		      const struct egpu_load_opts *opts)
{
	const char *name = OPTS_GET(opts, name, NULL);
	int abi = OPTS_GET(opts, helpers, EGPU_HELPERS_GPU);
	struct object_spec spec;

	if (!ctx || (!data && len)) {
		err_set(EGPU_EINVAL, "egpu_load: NULL context or data");
		return NULL;
	}
	if (OPTS_VALID(opts, egpu_load_opts, "egpu_load"))
		return NULL;
	if (abi != EGPU_HELPERS_GPU && abi != EGPU_HELPERS_CONFORMANCE) {
		err_set(EGPU_EINVAL, "egpu_load: unknown helper ABI %d", abi);
		return NULL;
	}
	if (!name)
		name = default_name;
	if (parse(data, len, name, &spec))
		return NULL;
	return obj_new(ctx, &spec, name, abi,
		       whole || OPTS_GET(opts, strict, false));
}

egpu_obj *egpu_load_mem(egpu_ctx *ctx, const void *elf, size_t len,
			const struct egpu_load_opts *opts)
{
	return load(ctx, elf, len, "<memory>", parse_elf, false, opts);
}

egpu_obj *egpu_load_insns(egpu_ctx *ctx, const void *insns, size_t len,
			  const struct egpu_load_opts *opts)
{
	return load(ctx, insns, len, "<raw>", parse_raw, true, opts);
}

static int read_file(const char *path, void **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0, n = 0;
	char *buf = NULL;
	struct stat st;

	if (!f)
		return err_set(EGPU_EIO, "%s: %s", path, strerror(errno));
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		fclose(f);
		return err_set(EGPU_EIO, "%s: is a directory, not an eBPF object file", path);
	}
	for (;;) {
		if (n == cap) {
			char *p = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!p) {
				free(buf);
				fclose(f);
				return err_set(EGPU_ENOMEM, "%s: out of memory", path);
			}
			buf = p;
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		free(buf);
		fclose(f);
		return err_set(EGPU_EIO, "%s: read error: %s", path, strerror(e));
	}
	fclose(f);
	*data = buf;
	*len = n;
	return 0;
}

egpu_obj *egpu_load(egpu_ctx *ctx, const char *path,
		    const struct egpu_load_opts *opts)
{
	const char *base;
	egpu_obj *obj;
	void *data = NULL;
	size_t len = 0;

	if (!path) {
		err_set(EGPU_EINVAL, "egpu_load: NULL path");
		return NULL;
	}
	if (read_file(path, &data, &len))
		return NULL;
	base = strrchr(path, '/');
	obj = load(ctx, data, len, base ? base + 1 : path, parse_elf, false, opts);
	free(data);
	return obj;
}

void egpu_obj_close(egpu_obj *obj)
{
	if (!obj)
		return;
	links_drop_obj(obj->ctx, obj);
	if (obj->prev)
		obj->prev->next = obj->next;
	else
		obj->ctx->objs = obj->next;
	if (obj->next)
		obj->next->prev = obj->prev;
	obj_free(obj);
}

const char *egpu_obj_name(const egpu_obj *obj)
{
	return obj ? obj->name : "";
}

egpu_prog *egpu_obj_prog(const egpu_obj *obj, const char *name)
{
	for (size_t i = 0; obj && name && i < obj->spec.prog_cnt; i++)
		if (!strcmp(obj->spec.progs[i].name, name))
			return &obj->progs[i];
	err_set(EGPU_ENOENT, "object '%s': no program '%s'",
		obj ? obj->name : "(null)", name ? name : "(null)");
	return NULL;
}

egpu_prog *egpu_obj_next_prog(const egpu_obj *obj, const egpu_prog *prev)
{
	size_t i;

	if (!obj)
		return NULL;
	i = prev ? (size_t)(prev - obj->progs) + 1 : 0;
	return i < obj->spec.prog_cnt ? &obj->progs[i] : NULL;
}

egpu_map *egpu_obj_map(const egpu_obj *obj, const char *name)
{
	for (size_t i = 0; obj && name && i < obj->spec.map_cnt; i++)
		if (!strcmp(obj->spec.maps[i].name, name))
			return &obj->maps[i];
	err_set(EGPU_ENOENT, "object '%s': no map '%s'",
		obj ? obj->name : "(null)", name ? name : "(null)");
	return NULL;
}

egpu_map *egpu_obj_next_map(const egpu_obj *obj, const egpu_map *prev)
{
	size_t i;

	if (!obj)
		return NULL;
	i = prev ? (size_t)(prev - obj->maps) + 1 : 0;
	return i < obj->spec.map_cnt ? &obj->maps[i] : NULL;
}
