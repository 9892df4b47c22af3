/* SPDX-License-Identifier: MIT */
/*
 * The server side of the stand-in ptxas (tools/ptxas/standin.c): a thread
 * accepting one connection per ptxas run, reading
 *   "EGPU-PTXAS 1\n" ARCH "\n" LEN "\n" PTX
 * and answering "OK LEN\n" PTX (instrumented), "PASS why\n" (compile the
 * original) or "ERR message\n" (the same, and the stand-in says why).
 * Compiles run in parallel in XLA, so connections are served one after
 * another: egpu_instrument_ptx() on one context is not reentrant anyway.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/internal.h"
#include "core/target.h"
#include "cuda/cu.h"

#define PROTO "EGPU-PTXAS 1"
/* PTX larger than this is refused rather than read (XLA's are < 10 MB). */
#define PTX_MAX ((size_t)1 << 30)

struct egpu_ptxas_server {
	int (*instrument)(void *user, const char *arch, const char *ptx,
			  size_t len, char **out, size_t *out_len);
	void *user;
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char dir[PATH_MAX]; /* the private directory we made, or "" */
	pthread_t thread;
	pthread_mutex_t lock; /* stats */
	struct egpu_ptxas_stats st;
};

/* Writes never raise SIGPIPE: a stand-in that died must not kill us. */
static int io_all(int fd, void *p, size_t n, bool rd)
{
	while (n) {
		ssize_t k = rd ? read(fd, p, n) : send(fd, p, n, MSG_NOSIGNAL);

		if (k == 0 || (k < 0 && errno != EINTR))
			return -1;
		if (k > 0) {
			p = (char *)p + k;
			n -= (size_t)k;
		}
	}
	return 0;
}

static int read_line(int fd, char *buf, size_t cap)
{
	for (size_t n = 0; n + 1 < cap; n++) {
		if (io_all(fd, buf + n, 1, true))
			return -1;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return 0;
		}
	}
	return -1;
}

static void count(struct egpu_ptxas_server *s, uint64_t *field, double ms)
{
	pthread_mutex_lock(&s->lock);
	s->st.requests++;
	(*field)++;
	s->st.instrument_ms += ms;
	pthread_mutex_unlock(&s->lock);
}

static void reply_line(int fd, const char *kind, const char *why)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "%s %s", kind, why);

	for (int i = 0; i < n && (size_t)i < sizeof(line) - 1; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n] = '\n';
	io_all(fd, line, (size_t)n + 1, false);
}

/* The context's own instrumentation, for the context's GPU only. */
static int instrument_ctx(void *user, const char *arch, const char *ptx,
			  size_t len, char **out, size_t *out_len)
{
	struct egpu_ctx *ctx = user;
	struct egpu_report rep = { .sz = sizeof(rep) };
	int err;

	*out = NULL;
	if (target_sm(arch) != target_sm(ctx->sm))
		return 0;
	/* maps live in the context's CUDA context; this thread has none */
	if (ctx->cu_ctx)
		cu_ctx_set_current(ctx->cu_ctx);
	err = egpu_instrument_ptx(ctx, ptx, len, out, out_len, &rep);
	if (!err && !rep.kernels_patched) {
		free(*out);
		*out = NULL;
	}
	return err;
}

/* Whether process @pid was started by this one (SO_PEERCRED's pid). */
static bool our_child(pid_t pid)
{
	char path[64], buf[512], *close_paren;
	FILE *f;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	/* "PID (COMM) STATE PPID ...": COMM may hold spaces and parens */
	if (fgets(buf, sizeof(buf), f) && (close_paren = strrchr(buf, ')')))
		sscanf(close_paren + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid == getpid();
}

static void answer(struct egpu_ptxas_server *s, int fd, const char *arch,
		   const char *ptx, size_t len)
{
	uint64_t t0 = now_ns();
	char *out = NULL, head[64];
	size_t out_len = 0;
	double ms;
	int err = s->instrument(s->user, arch, ptx, len, &out, &out_len);

	ms = (double)(now_ns() - t0) / 1e6;
	if (err) {
		count(s, &s->st.failed, ms);
		return reply_line(fd, "ERR", egpu_errmsg());
	}
	if (!out) {
		count(s, &s->st.declined, ms);
		return reply_line(fd, "PASS", "not for this context");
	}
	count(s, &s->st.instrumented, ms);
	snprintf(head, sizeof(head), "OK %zu\n", out_len);
	if (!io_all(fd, head, strlen(head), false))
		io_all(fd, out, out_len, false);
	free(out);
}

static void serve_one(struct egpu_ptxas_server *s, int fd)
{
	char proto[32], arch[64], num[32];
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);
	unsigned long long len;
	char *ptx;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) ||
	    (cred.pid != getpid() && !our_child(cred.pid))) {
		count(s, &s->st.declined, 0);
		return reply_line(fd, "PASS", "the compile is another process's");
	}
	if (read_line(fd, proto, sizeof(proto)) || strcmp(proto, PROTO) ||
	    read_line(fd, arch, sizeof(arch)) || read_line(fd, num, sizeof(num)) ||
	    sscanf(num, "%llu", &len) != 1)
		return reply_line(fd, "ERR", "malformed request");
	if (len > PTX_MAX)
		return reply_line(fd, "ERR", "PTX larger than 1 GiB");
	ptx = malloc(len + 1);
	if (!ptx)
		return reply_line(fd, "ERR", "out of memory");
	if (!io_all(fd, ptx, len, true)) {
		ptx[len] = '\0';
		answer(s, fd, arch, ptx, len);
	}
	free(ptx);
}

static void *serve(void *arg)
{
	struct egpu_ptxas_server *s = arg;

	for (;;) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL; /* the socket was shut down: stop */
		}
		serve_one(s, fd);
		close(fd);
	}
}

static int socket_path(struct egpu_ptxas_server *s, const char *want)
{
	const char *tmp = getenv("TMPDIR");

	if (!want) {
		snprintf(s->dir, sizeof(s->dir), "%s/egpu-ptxas-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(s->dir))
			return err_set(EGPU_EINVAL, "ptxas server: %s: %s", s->dir,
				       strerror(errno));
	}
	if ((size_t)snprintf(s->path, sizeof(s->path), "%s%s", want ? want : s->dir,
			     want ? "" : "/sock") >= sizeof(s->path))
		return err_set(EGPU_EINVAL, "ptxas server: socket path '%s' is too long",
			       want ? want : s->dir);
	return 0;
}

static int listen_on(struct egpu_ptxas_server *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	strcpy(sa.sun_path, s->path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(s->fd, 64))
		return err_set(EGPU_EINVAL, "ptxas server: %s: %s", s->path,
			       strerror(errno));
	return 0;
}

static void server_free(struct egpu_ptxas_server *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (*s->path)
		unlink(s->path);
	if (*s->dir)
		rmdir(s->dir);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

egpu_ptxas_server *egpu_ptxas_server_start(egpu_ctx *ctx,
					   const struct egpu_ptxas_server_opts *opts)
{
	struct egpu_ptxas_server *s;
	int err;

	if (OPTS_VALID(opts, egpu_ptxas_server_opts, "egpu_ptxas_server_start"))
		return NULL;
	if (!ctx && !OPTS_GET(opts, instrument, NULL)) {
		err_set(EGPU_EINVAL, "egpu_ptxas_server_start: no context and no instrument function");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err_set(EGPU_ENOMEM, "ptxas server: out of memory");
		return NULL;
	}
	s->instrument = OPTS_GET(opts, instrument, NULL);
	s->user = OPTS_GET(opts, user, NULL);
	if (!s->instrument) {
		s->instrument = instrument_ctx;
		s->user = ctx;
	}
	s->fd = -1;
	s->st.sz = sizeof(s->st);
	pthread_mutex_init(&s->lock, NULL);
	err = socket_path(s, OPTS_GET(opts, socket_path, NULL));
	if (!err)
		err = listen_on(s);
	if (!err && (err = pthread_create(&s->thread, NULL, serve, s)))
		err = err_set(EGPU_ENOMEM, "ptxas server: thread: %s", strerror(err));
	if (err) {
		server_free(s);
		return NULL;
	}
	return s;
}

const char *egpu_ptxas_server_socket(const egpu_ptxas_server *srv)
{
	return srv ? srv->path : NULL;
}

int egpu_ptxas_server_stats(const egpu_ptxas_server *srv,
			    struct egpu_ptxas_stats *st)
{
	size_t sz;

	if (!srv || !st || st->sz < sizeof(size_t))
		return err_set(EGPU_EINVAL, "egpu_ptxas_server_stats: NULL argument or sz not set");
	sz = st->sz < sizeof(*st) ? st->sz : sizeof(*st);
	pthread_mutex_lock((pthread_mutex_t *)&srv->lock);
	memcpy(st, &srv->st, sz);
	pthread_mutex_unlock((pthread_mutex_t *)&srv->lock);
	st->sz = sz;
	return 0;
}

void egpu_ptxas_server_stop(egpu_ptxas_server *srv)
{
	if (!srv)
		return;
	/* accept() returns once the socket is shut down; a request being
	 * served finishes first */
	shutdown(srv->fd, SHUT_RDWR);
	pthread_join(srv->thread, NULL);
	server_free(srv);
}

static char standin[PATH_MAX];

/* @dir + "/egpu" into standin[] if a stand-in ptxas is there. */
static bool standin_in(const char *dir)
{
	char path[PATH_MAX + 16];

	if ((size_t)snprintf(path, sizeof(path), "%s/egpu/ptxas", dir) >= sizeof(path) ||
	    access(path, X_OK))
		return false;
	return (size_t)snprintf(standin, sizeof(standin), "%s/egpu", dir) < sizeof(standin);
}

/* Installed: libexec beside the library's directory; in the build tree,
 * the build's own libexec (the library is then in the build's lib/). */
static void find_standin(void)
{
	char lib[PATH_MAX], rel[PATH_MAX + 32];
	Dl_info info;
	char *slash;

	if (!dladdr((void *)egpu_ptxas_standin_dir, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, lib) || !(slash = strrchr(lib, '/')))
		return;
	*slash = '\0';
	if ((size_t)snprintf(rel, sizeof(rel), "%s/" EGPU_LIBEXEC_FROM_LIB, lib) < sizeof(rel) &&
	    standin_in(rel))
		return;
	if (realpath(EGPU_BUILD_DIR "/lib", rel) && !strcmp(lib, rel))
		standin_in(EGPU_BUILD_DIR "/libexec");
}

const char *egpu_ptxas_standin_dir(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, find_standin);
	return *standin ? standin : NULL;
}
