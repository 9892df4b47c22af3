/* SPDX-License-Identifier: MIT */
/*
 * Map seeding: `egpu attach --set MAP[KEY]=VALUE` (EGPU_ATTACH_SET, one
 * per line) and `--set-file FILE.json` (EGPU_ATTACH_SET_FILE), stored
 * when the probe is loaded, before the application's first instrumented
 * kernel runs. The file first, so --set overrides it.
 */
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
	    (text = malloc(n + 1)) && fread(text, 1, n, f) == (size_t)n)
		text[n] = '\0';
	else
		free(text), text = NULL;
	fclose(f);
	return text;
}

static int seed_file(egpu_obj *obj, const char *path)
{
	char *text = read_text(path);
	int err;

	if (!text) {
		fprintf(stderr, ATTACH_MSG "--set-file %s: cannot read\n", path);
		return -1;
	}
	err = egpu_obj_set_json(obj, text);
	free(text);
	if (err)
		fprintf(stderr, ATTACH_MSG "--set-file %s: %s\n", path, egpu_errmsg());
	return err ? -1 : 0;
}

int seed_maps(egpu_obj *obj, const struct attach_env *env)
{
	char *sets = env->set ? strdup(env->set) : NULL, *line, *save = NULL;
	int err = 0;

	if (env->set_file && seed_file(obj, env->set_file))
		err = -1;
	for (line = sets ? strtok_r(sets, "\n", &save) : NULL; line && !err;
	     line = strtok_r(NULL, "\n", &save))
		if (egpu_obj_set(obj, line)) {
			fprintf(stderr, ATTACH_MSG "--set %s\n", egpu_errmsg());
			err = -1;
		}
	free(sets);
	return err;
}
