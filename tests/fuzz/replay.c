/* SPDX-License-Identifier: MIT */
/*
 * Runs a fuzz target once on each file named, or in each folder named:
 * the checked-in corpus and regression inputs, in builds without
 * libFuzzer. Exits non-zero only by crashing (or a sanitizer report).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0, got;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (len == cap) {
			uint8_t *p = realloc(buf, cap = cap ? 2 * cap : 4096);

			if (!p)
				abort();
			buf = p;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int run_path(const char *path, int *count)
{
	struct stat st;
	struct dirent *e;
	char sub[4096];
	DIR *d;
	int rc = 0;

	if (stat(path, &st)) {
		perror(path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*count;
		return run_file(path);
	}
	d = opendir(path);
	if (!d) {
		perror(path);
		return 1;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			rc |= run_path(sub, count);
		}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0, count = 0;

	for (int i = 1; i < argc; i++)
		rc |= run_path(argv[i], &count);
	printf("%s: %d inputs\n", argv[0], count);
	return rc || !count;
}
