// SPDX-License-Identifier: MIT
/*
 * What egpu attach does with a probe's BTF, without a GPU: records
 * printed as named fields (text and JSON) and their types found
 * (egpu_map_record_type), maps seeded from "MAP[KEY]=VALUE" and JSON with
 * errors naming what is wrong, and a program on the CPU back end reading
 * the seeded maps and sending records that print decoded.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "egpu.h"
#include "test_util.h"

#define EVENTS_OBJ EGPU_TEST_BUILD "/events.bpf.o"

static egpu_ctx *ctx;
static egpu_obj *obj;

/* The probe's record and config, as the object lays them out. */
struct block_event {
	uint64_t block, ns;
	int32_t bias;
	uint32_t phase;
	char tag[8];
};

struct config {
	uint32_t every;
	int32_t bias;
	char tag[8];
	uint8_t bits; /* verbose : 1, level : 3 */
};

static void setup(void)
{
	ctx = egpu_ctx_new(NULL);
	ck_assert_ptr_nonnull(ctx);
	obj = egpu_load(ctx, EVENTS_OBJ, NULL);
	ck_assert_msg(obj, "load: %s", egpu_errmsg());
}

static void teardown(void)
{
	egpu_ctx_free(ctx);
}

static char *format(uint32_t type, const void *data, size_t size, bool json)
{
	char *text = NULL;
	size_t len;

	ck_assert_msg(!egpu_obj_format(obj, type, data, size, json, &text, &len),
		      "%s", egpu_errmsg());
	ck_assert_uint_eq(len, strlen(text));
	return text;
}

static void assert_text(uint32_t type, const void *data, size_t size,
			bool json, const char *want)
{
	char *got = format(type, data, size, json);

	ck_assert_str_eq(got, want);
	free(got);
}

static struct config config_at0(void)
{
	struct config c;
	uint32_t zero = 0;

	ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, "config"), &zero, &c), 0);
	return c;
}

static uint64_t u64_at(const char *map, uint32_t key)
{
	uint64_t v;

	ck_assert_int_eq(egpu_map_lookup(egpu_obj_map(obj, map), &key, &v), 0);
	return v;
}

/* egpu_obj_set(@what) fails with @code and a message holding @needle. */
static void assert_refused(const char *what, int code, const char *needle)
{
	ck_assert_int_eq(egpu_obj_set(obj, what), code);
	ck_assert_msg(strstr(egpu_errmsg(), needle), "'%s': message '%s' lacks '%s'",
		      what, egpu_errmsg(), needle);
}

START_TEST(types_found)
{
	uint32_t ev = egpu_obj_find_type(obj, "block_event");

	ck_assert_uint_ne(ev, 0);
	ck_assert_uint_eq(egpu_obj_find_type(obj, "struct block_event"), ev);
	ck_assert_uint_ne(egpu_obj_find_type(obj, "config"), 0);
	ck_assert_uint_eq(egpu_obj_find_type(obj, "no_such_type"), 0);
	ck_assert_int_eq(egpu_errcode(), EGPU_ENOENT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "no_such_type"));
	/* the ring's value type, when the record has its size */
	ck_assert_uint_eq(egpu_map_record_type(egpu_obj_map(obj, "events"), 32), ev);
	/* a ring naming no type: the only struct of the record's size */
	ck_assert_uint_eq(egpu_map_record_type(egpu_obj_map(obj, "exits"), 16),
			  egpu_obj_find_type(obj, "exit_note"));
	ck_assert_uint_eq(egpu_map_record_type(egpu_obj_map(obj, "events"), 16),
			  egpu_obj_find_type(obj, "exit_note"));
	/* no struct of 3 bytes: hex */
	ck_assert_uint_eq(egpu_map_record_type(egpu_obj_map(obj, "events"), 3), 0);
}
END_TEST

START_TEST(records_formatted)
{
	struct block_event e = { 3, 42, -3, 1, "seeded" };
	uint32_t ev = egpu_obj_find_type(obj, "block_event");
	char *text = NULL;

	assert_text(ev, &e, sizeof(e), false,
		    "{block: 3, ns: 42, bias: -3, phase: PHASE_ENTRY, tag: \"seeded\"}");
	assert_text(ev, &e, sizeof(e), true,
		    "{\"block\":3,\"ns\":42,\"bias\":-3,\"phase\":\"PHASE_ENTRY\",\"tag\":\"seeded\"}");
	/* an enum value without a name prints as a number, bytes that are
	 * not text as an array */
	e.phase = 7;
	memcpy(e.tag, "\x01\x02\0\0\0\0\0\xff", 8);
	assert_text(ev, &e, sizeof(e), false,
		    "{block: 3, ns: 42, bias: -3, phase: 7, tag: [1, 2, 0, 0, 0, 0, 0, -1]}");
	/* the wrong size is refused, not read past */
	ck_assert_int_eq(egpu_obj_format(obj, ev, &e, sizeof(e) - 1, false, &text, NULL),
			 EGPU_EINVAL);
	ck_assert_ptr_null(text);
	ck_assert_int_eq(egpu_obj_format(obj, 999999, &e, sizeof(e), false, &text, NULL),
			 EGPU_ENOENT);
}
END_TEST

START_TEST(bitfields_formatted)
{
	struct config c = { 2, -1, "ab", 1 | 5 << 1 };

	assert_text(egpu_obj_find_type(obj, "config"), &c, sizeof(c), false,
		    "{every: 2, bias: -1, tag: \"ab\", verbose: 1, level: 5}");
}
END_TEST

START_TEST(set_integers_and_structs)
{
	struct config c;

	ck_assert_msg(!egpu_obj_set(obj, "scale[0]=7"), "%s", egpu_errmsg());
	ck_assert_msg(!egpu_obj_set(obj, "scale[1]=0x10"), "%s", egpu_errmsg());
	ck_assert_uint_eq(u64_at("scale", 0), 7);
	ck_assert_uint_eq(u64_at("scale", 1), 16);
	ck_assert_msg(!egpu_obj_set(obj, "config[0]={every: 2, bias: -3, tag: \"seeded\", level: 5}"),
		      "%s", egpu_errmsg());
	c = config_at0();
	ck_assert_uint_eq(c.every, 2);
	ck_assert_int_eq(c.bias, -3);
	ck_assert_str_eq(c.tag, "seeded");
	ck_assert_uint_eq(c.bits, 5 << 1);
	/* fields not named keep their value; '=' works as ':' */
	ck_assert_msg(!egpu_obj_set(obj, "config[0]={bias=4, verbose=true}"), "%s",
		      egpu_errmsg());
	c = config_at0();
	ck_assert_uint_eq(c.every, 2);
	ck_assert_int_eq(c.bias, 4);
	ck_assert_uint_eq(c.bits, 5 << 1 | 1);
}
END_TEST

START_TEST(set_errors_named)
{
	assert_refused("nomap[0]=1", EGPU_ENOENT, "no map 'nomap' (maps: events, exits, config, scale, totals");
	assert_refused("scale[0]", EGPU_EINVAL, "MAP[KEY]=VALUE expected");
	assert_refused("scale 0=1", EGPU_EINVAL, "MAP[KEY]=VALUE expected");
	assert_refused("scale[2]=1", egpu_obj_set(obj, "scale[2]=1"), "map 'scale'");
	assert_refused("scale[x]=1", EGPU_EINVAL, "map 'scale' key: an integer expected: x");
	assert_refused("scale[0]=-1", EGPU_EINVAL, "map 'scale' value: out of range: -1");
	assert_refused("scale[0]=18446744073709551616", EGPU_EINVAL, "out of range");
	assert_refused("scale[0]=1.5", EGPU_EINVAL, "not an integer: 1.5");
	assert_refused("scale[4294967296]=1", EGPU_EINVAL, "map 'scale' key: out of range");
	assert_refused("config[0]={level: 8}", EGPU_EINVAL, "field 'level': out of range: 8");
	assert_refused("config[0]={bias: 2147483648}", EGPU_EINVAL, "field 'bias': out of range");
	assert_refused("config[0]={bias: -2147483649}", EGPU_EINVAL, "field 'bias': out of range");
	assert_refused("config[0]={nofield: 1}", EGPU_EINVAL, "field 'nofield': no such field");
	assert_refused("config[0]={tag: \"much too long\"}", EGPU_EINVAL,
		       "field 'tag': string longer than the array");
	assert_refused("config[0]=5", EGPU_EINVAL, "an object of fields expected: 5");
	assert_refused("config[0]={every: 1", EGPU_EFORMAT, "',' or '}' expected");
	assert_refused("events[0]=1", EGPU_EINVAL, "map 'events' is a ring");
	/* nothing was stored by the refused ones */
	ck_assert_uint_eq(u64_at("scale", 0), 0);
	ck_assert_uint_eq(config_at0().every, 0);
}
END_TEST

START_TEST(set_json)
{
	struct config c;

	ck_assert_msg(!egpu_obj_set_json(obj,
		"{\"scale\": {\"0\": 5, \"1\": 6},\n"
		" \"config\": [{\"key\": 0, \"value\": {\"every\": 1, \"tag\": \"json\"}}]}"),
		"%s", egpu_errmsg());
	ck_assert_uint_eq(u64_at("scale", 0), 5);
	ck_assert_uint_eq(u64_at("scale", 1), 6);
	c = config_at0();
	ck_assert_uint_eq(c.every, 1);
	ck_assert_str_eq(c.tag, "json");
	ck_assert_int_eq(egpu_obj_set_json(obj, "{\"scale\": {\"0\": 1,}}"), EGPU_EFORMAT);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "JSON at offset 18"));
	ck_assert_int_eq(egpu_obj_set_json(obj, "{\"nomap\": {}}"), EGPU_ENOENT);
	ck_assert_int_eq(egpu_obj_set_json(obj, "[1]"), EGPU_EINVAL);
	ck_assert_int_eq(egpu_obj_set_json(obj, "{\"config\": [{\"key\": 0}]}"), EGPU_EINVAL);
	ck_assert_ptr_nonnull(strstr(egpu_errmsg(), "entry 0"));
	ck_assert_int_eq(egpu_obj_set_json(obj, "{\"scale\": {\"0\": \"x\"}}"), EGPU_EINVAL);
	/* JSON is strict: bare words are for the command line */
	ck_assert_int_eq(egpu_obj_set_json(obj, "{scale: {}}"), EGPU_EFORMAT);
}
END_TEST

struct seen {
	egpu_map *map;
	char *text[4];
	int n;
};

/* What egpu attach's consumer does with a record (lib/attach/events.c). */
static int on_record(void *user, const void *data, size_t size)
{
	struct seen *s = user;
	uint32_t type = egpu_map_record_type(s->map, size);

	ck_assert_int_lt(s->n, 4);
	ck_assert_uint_ne(type, 0);
	s->text[s->n++] = format(type, data, size, false);
	return 0;
}

static void consume(struct seen *s, const char *map)
{
	egpu_ringbuf *rb;

	s->map = egpu_obj_map(obj, map);
	rb = egpu_ringbuf_new(s->map, on_record, s);
	ck_assert_msg(rb, "%s", egpu_errmsg());
	ck_assert_int_ge(egpu_ringbuf_consume(rb), 0);
	egpu_ringbuf_free(rb);
}

/* The probe's own work on the CPU: seeded maps read, records decoded. */
START_TEST(seeded_probe_emits_decoded)
{
	uint64_t args[2] = { 4, 99 };
	EGPU_OPTS(egpu_run_opts, ro, .ctx = args, .ctx_len = sizeof(args));
	struct seen ev = { 0 }, ex = { 0 };

	ck_assert(!egpu_obj_set(obj, "scale[0]=3"));
	ck_assert(!egpu_obj_set_json(obj,
		"{\"config\": {\"0\": {\"every\": 2, \"bias\": -7, \"tag\": \"cpu\", \"level\": 6}}}"));
	ck_assert_msg(!egpu_prog_run(egpu_obj_prog(obj, "seed_and_emit"), &ro), "%s",
		      egpu_errmsg());
	ck_assert_uint_eq(ro.retval, 1);
	ck_assert_uint_eq(u64_at("totals", 0), 3);
	consume(&ev, "events");
	consume(&ex, "exits");
	ck_assert_int_eq(ev.n, 1);
	ck_assert_str_eq(ev.text[0],
			 "{block: 4, ns: 99, bias: -7, phase: PHASE_ENTRY, tag: \"cpu\"}");
	ck_assert_int_eq(ex.n, 1);
	ck_assert_str_eq(ex.text[0], "{blocks_seen: 5, level: 6, magic: 58909}");
	free(ev.text[0]);
	free(ex.text[0]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attach_typed");
	TCase *tc = tcase_create("btf");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, types_found);
	tcase_add_test(tc, records_formatted);
	tcase_add_test(tc, bitfields_formatted);
	tcase_add_test(tc, set_integers_and_structs);
	tcase_add_test(tc, set_errors_named);
	tcase_add_test(tc, set_json);
	tcase_add_test(tc, seeded_probe_emits_decoded);
	suite_add_tcase(s, tc);
	return tu_run_suite(s, true);
}
