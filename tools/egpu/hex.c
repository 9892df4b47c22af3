/* SPDX-License-Identifier: MIT */
/* Input helpers: hex text and whole streams. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int hex_decode(const char *text, uint8_t **out, size_t *len)
{
	uint8_t *buf = malloc(strlen(text) / 2 + 1);
	size_t n = 0, pos = 0;
	int hi = -1;

	if (!buf) {
		fprintf(stderr, "egpu: out of memory\n");
		return -1;
	}
	for (const char *p = text; *p; p++, pos++) {
		int d = hex_digit((unsigned char)*p);

		if (isspace((unsigned char)*p) && hi < 0)
			continue;
		if (d < 0) {
			fprintf(stderr, "egpu: hex input: unexpected '%c' at offset %zu\n",
				*p, pos);
			free(buf);
			return -1;
		}
		if (hi < 0) {
			hi = d;
		} else {
			buf[n++] = (uint8_t)(hi << 4 | d);
			hi = -1;
		}
	}
	if (hi >= 0) {
		fprintf(stderr, "egpu: hex input: odd number of digits\n");
		free(buf);
		return -1;
	}
	*out = buf;
	*len = n;
	return 0;
}

static char *read_stream(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap);

	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n - 1 == 0) {
			char *p = realloc(buf, cap *= 2);

			if (!p)
				free(buf);
			buf = p;
		}
	}
	if (!buf) {
		fprintf(stderr, "egpu: out of memory\n");
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

char *read_stdin(void)
{
	size_t len;

	return read_stream(stdin, &len);
}

uint8_t *read_path(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	if (!f) {
		fprintf(stderr, "egpu: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	buf = read_stream(f, len);
	fclose(f);
	return (uint8_t *)buf;
}
