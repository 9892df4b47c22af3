// SPDX-License-Identifier: MIT
/*
 * A stand-in for ptxas, for compilers that turn PTX into a cubin with a
 * ptxas of their own before the driver sees it (XLA, JAX's compiler). It
 * is installed as `ptxas` in a directory of its own, put first on PATH by
 * egpu.jax or egpu attach; it hands the PTX to the libegpu instance of the
 * process that owns the maps (over the socket named by EGPU_PTXAS_SOCKET),
 * then runs the real ptxas (EGPU_PTXAS_REAL) on what comes back.
 *
 * It never stands in the way: without a socket, for a command line it
 * does not understand, or when the server declines, the real ptxas gets
 * the original arguments unchanged. Protocol: docs/frameworks.md, JAX.
 * It links nothing but libc, so it starts as fast as ptxas itself.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROTO "EGPU-PTXAS 1"

/* ptxas options whose value is the next argument (ptxas --help). */
static const char *const value_opts[] = {
	"-o", "--output-file", "-arch", "--gpu-name", "-maxrregcount",
	"--maxrregcount", "-m", "--machine", "-e", "--entry", "-dlcm",
	"--def-load-cache", "-dscm", "--def-store-cache", "-O", "--opt-level",
	"-fmad", "--fmad", "-ias", "--input-as-string", NULL,
};

static int takes_value(const char *a)
{
	for (const char *const *o = value_opts; *o; o++)
		if (!strcmp(a, *o))
			return 1;
	return 0;
}

struct cmdline {
	int input;        /* argv index of the one PTX file, or 0 */
	const char *arch; /* "sm_90a" */
};

static void read_cmdline(int argc, char **argv, struct cmdline *c)
{
	int inputs = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "-arch=", 6) || !strncmp(a, "--gpu-name=", 11))
			c->arch = strchr(a, '=') + 1;
		else if ((!strcmp(a, "-arch") || !strcmp(a, "--gpu-name")) && i + 1 < argc)
			c->arch = argv[i + 1];
		if (takes_value(a))
			i++;
		else if (a[0] != '-' && inputs++ == 0)
			c->input = i;
	}
	if (inputs != 1)
		c->input = 0;
}

/* The real ptxas, which whoever put this one on PATH names. */
static int run_real(char **argv)
{
	const char *real = getenv("EGPU_PTXAS_REAL");

	if (!real || !*real) {
		fprintf(stderr, "egpu ptxas stand-in: EGPU_PTXAS_REAL is not set\n");
		return 127;
	}
	argv[0] = (char *)real;
	execv(real, argv);
	fprintf(stderr, "egpu ptxas stand-in: %s: %s\n", real, strerror(errno));
	return 127;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
		buf[n] = '\0';
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* To the socket without SIGPIPE (a server gone must not fail the
 * compile), or to a file. */
static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, p, n);

		if (w <= 0 && errno != EINTR)
			return -1;
		if (w > 0) {
			p = (const char *)p + w;
			n -= (size_t)w;
		}
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r == 0 || (r < 0 && errno != EINTR))
			return -1;
		if (r > 0) {
			p = (char *)p + r;
			n -= (size_t)r;
		}
	}
	return 0;
}

/* One line, up to '\n', at most @cap - 1 bytes. */
static int read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		if (read_all(fd, buf + n, 1))
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return n + 1 < cap ? 0 : -1;
}

static int connect_server(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Ask the server for the instrumented text of @ptx. NULL: compile the
 * original (no server, it declined, or it failed: said on stderr).
 */
static char *instrumented(const char *sock, const char *arch, const char *ptx,
			  size_t len, size_t *out_len)
{
	char head[512];
	unsigned long long n;
	char *out = NULL;
	int fd = connect_server(sock);

	if (fd < 0)
		return NULL;
	snprintf(head, sizeof(head), PROTO "\n%s\n%zu\n", arch ? arch : "", len);
	if (write_all(fd, head, strlen(head)) || write_all(fd, ptx, len) ||
	    read_line(fd, head, sizeof(head)))
		goto done;
	if (sscanf(head, "OK %llu", &n) == 1 && n < SIZE_MAX && (out = malloc(n + 1))) {
		if (read_all(fd, out, n)) {
			free(out);
			out = NULL;
		} else {
			*out_len = n;
		}
	} else if (!strncmp(head, "ERR ", 4)) {
		fprintf(stderr, "egpu: kernel left uninstrumented: %s\n", head + 4);
	}
done:
	close(fd);
	return out;
}

/* @text into a new file beside nothing else: $TMPDIR/egpu-ptxas-XXXXXX. */
static char *temp_file(const char *text, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (asprintf(&path, "%s/egpu-ptxas-XXXXXX", dir && *dir ? dir : "/tmp") < 0)
		return NULL;
	fd = mkstemp(path);
	if (fd < 0 || write_all(fd, text, len)) {
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

int main(int argc, char **argv)
{
	const char *sock = getenv("EGPU_PTXAS_SOCKET");
	struct cmdline c = { 0 };
	char *ptx, *out, *tmp;
	size_t len, out_len = 0;
	pid_t pid;
	int status;

	read_cmdline(argc, argv, &c);
	if (!sock || !*sock || !c.input || !(ptx = read_file(argv[c.input], &len)))
		return run_real(argv);
	out = instrumented(sock, c.arch, ptx, len, &out_len);
	free(ptx);
	tmp = out ? temp_file(out, out_len) : NULL;
	free(out);
	if (!tmp)
		return run_real(argv);
	argv[c.input] = tmp;
	/* the temporary file outlives the real ptxas, so no exec here */
	pid = fork();
	if (pid == 0)
		_exit(run_real(argv));
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(tmp);
	free(tmp);
	if (pid < 0)
		return 127;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
