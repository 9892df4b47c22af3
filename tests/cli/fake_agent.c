// SPDX-License-Identifier: MIT
/*
 * Stands in for libegpu_attach.so in memcheck_cli.sh (no GPU): at exit,
 * as the agent does, it copies the report the test wrote to
 * $EGPU_FAKE_REPORT into $EGPU_ATTACH_OUT, when memcheck is on
 * (EGPU_MEMCHECK=1). A command killed by a signal writes nothing, as with
 * the agent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((destructor)) static void write_report(void)
{
	const char *in = getenv("EGPU_FAKE_REPORT");
	const char *out = getenv("EGPU_ATTACH_OUT");
	const char *on = getenv("EGPU_MEMCHECK");
	FILE *f, *g;
	char buf[4096];
	size_t n;

	if (!in || !out || !on || strcmp(on, "1") || !(f = fopen(in, "r")))
		return;
	g = fopen(out, "w");
	while (g && (n = fread(buf, 1, sizeof(buf), f)))
		fwrite(buf, 1, n, g);
	if (g)
		fclose(g);
	fclose(f);
}
