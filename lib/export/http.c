/* SPDX-License-Identifier: MIT */
/*
 * GET /metrics over HTTP with libmicrohttpd, opened with dlopen at the
 * first egpu_metrics_serve() (as lib/cuda opens libcuda), so that libegpu
 * neither links it nor needs it until a caller serves metrics. One
 * internal thread answers scrapes, one at a time.
 */
#include <dlfcn.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "export/export.h"

#define MHD_LIB "libmicrohttpd.so.12"
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#define MHD_FUNCS(X)                                                          \
	X(MHD_start_daemon)                                                   \
	X(MHD_stop_daemon)                                                    \
	X(MHD_get_daemon_info)                                                \
	X(MHD_create_response_from_buffer)                                    \
	X(MHD_add_response_header)                                            \
	X(MHD_queue_response)                                                 \
	X(MHD_destroy_response)

#define MHD_FIELD(name) __typeof__(&name) name;
static struct {
	MHD_FUNCS(MHD_FIELD)
} mhd;
#undef MHD_FIELD

static char open_error[512];
static pthread_once_t open_once = PTHREAD_ONCE_INIT;

/* $EGPU_MICROHTTPD (a path, for a copy shipped beside the application)
 * or the soname. */
static void open_mhd(void)
{
	const char *path = getenv("EGPU_MICROHTTPD");
	void *lib = dlopen(path && *path ? path : MHD_LIB,
			   RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(open_error, sizeof(open_error), "%s (install "
			 "libmicrohttpd12, Debian's and Ubuntu's package, or "
			 "set EGPU_MICROHTTPD to its path)", dlerror());
		return;
	}
#define MHD_RESOLVE(name)                                                     \
	if (!(mhd.name = (__typeof__(mhd.name))dlsym(lib, #name))) {          \
		snprintf(open_error, sizeof(open_error), MHD_LIB " lacks "     \
			 #name);                                              \
		return;                                                       \
	}
	MHD_FUNCS(MHD_RESOLVE)
#undef MHD_RESOLVE
}

struct http_server {
	struct MHD_Daemon *daemon;
	http_render_fn render;
	void *user;
	int port;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     char *body, size_t len, const char *type)
{
	struct MHD_Response *r = mhd.MHD_create_response_from_buffer(
		len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ok;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ok = mhd.MHD_queue_response(c, status, r);
	mhd.MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status,
				  const char *text)
{
	char *body = strdup(text);

	return body ? reply(c, status, body, strlen(body), "text/plain") :
		      MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	struct http_server *h = cls;
	char *text = NULL;
	size_t len = 0;

	(void)version, (void)upload, (void)upload_len, (void)state;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "only GET /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND,
				  "libegpu serves /metrics\n");
	if (h->render(h->user, &text, &len)) {
		char msg[600];

		snprintf(msg, sizeof(msg), "egpu metrics: %s\n", egpu_errmsg());
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	return reply(c, MHD_HTTP_OK, text, len, CONTENT_TYPE);
}

/* "[HOST]:PORT" or "[V6]:PORT" into an address; an empty HOST: NULL. */
static int parse_listen(const char *listen, struct addrinfo **ai, int *port)
{
	const char *colon = strrchr(listen, ':');
	struct addrinfo hints = { .ai_flags = AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM };
	char host[256], *end;
	size_t n;
	long p;

	p = colon ? strtol(colon + 1, &end, 10) : -1;
	if (!colon || !colon[1] || *end || p < 0 || p > 65535)
		return err_set(EGPU_EINVAL, "metrics: listen '%s': want "
			       "[HOST]:PORT, e.g. :9464", listen);
	*port = (int)p;
	*ai = NULL;
	n = (size_t)(colon - listen);
	if (n >= 2 && listen[0] == '[' && listen[n - 1] == ']')
		listen++, n -= 2;
	if (!n)
		return 0;
	snprintf(host, sizeof(host), "%.*s", (int)n, listen);
	if (n >= sizeof(host) || getaddrinfo(host, colon + 1, &hints, ai))
		return err_set(EGPU_EINVAL, "metrics: listen '%s': host '%.*s' "
			       "not found", listen, (int)n, listen);
	return 0;
}

static struct MHD_Daemon *start_daemon(struct http_server *h,
				       const struct addrinfo *ai, int port)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;

	if (!ai)
		return mhd.MHD_start_daemon(flags | MHD_USE_DUAL_STACK,
					    (uint16_t)port, NULL, NULL,
					    on_request, h,
					    MHD_OPTION_CONNECTION_TIMEOUT, 30u,
					    MHD_OPTION_END);
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	return mhd.MHD_start_daemon(flags, (uint16_t)port, NULL, NULL,
				    on_request, h,
				    MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				    MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				    MHD_OPTION_END);
}

struct http_server *http_start(const char *listen, http_render_fn render,
			       void *user)
{
	const union MHD_DaemonInfo *info;
	struct http_server *h;
	struct addrinfo *ai;
	int port;

	pthread_once(&open_once, open_mhd);
	if (open_error[0]) {
		err_set(EGPU_ENOTSUP, "metrics: cannot serve HTTP: %s",
			open_error);
		return NULL;
	}
	if (parse_listen(listen, &ai, &port))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (h) {
		h->render = render;
		h->user = user;
		h->daemon = start_daemon(h, ai, port);
	}
	if (ai)
		freeaddrinfo(ai);
	if (!h) {
		err_set(EGPU_ENOMEM, "metrics: out of memory");
		return NULL;
	}
	if (!h->daemon) {
		free(h);
		err_set(EGPU_EIO, "metrics: cannot listen on '%s' (address in "
			"use, or not this machine's?)", listen);
		return NULL;
	}
	info = mhd.MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : port;
	return h;
}

int http_port(const struct http_server *h)
{
	return h->port;
}

void http_stop(struct http_server *h)
{
	if (!h)
		return;
	mhd.MHD_stop_daemon(h->daemon);
	free(h);
}
