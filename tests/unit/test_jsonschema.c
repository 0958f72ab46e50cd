/* The JSON Schema validator: every keyword on small schemas, the project's
 * own schemas (keyword audit, the examples, the example result), and the
 * error paths and sentences users see. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "job/jsonschema.h"
#include "job/schema_files.h"
#include "util/fs.h"
#include "util/json.h"

static json_object *parse(const char *text)
{
	json_object *o = json_tokener_parse(text);
	if (!o && strcmp(text, "null") != 0)
		fail_msg("test JSON does not parse: %s", text);
	return o;
}

static void expect_valid(const char *schema, const char *inst)
{
	_cleanup_json_ json_object *s = parse(schema), *i = parse(inst);
	struct sl_error err = {0};
	if (jsonschema_validate(s, i, &err) != 0)
		fail_msg("%s should be valid against %s: %s", inst, schema, err.message);
}

static void expect_invalid(const char *schema, const char *inst, const char *path,
			   const char *needle)
{
	_cleanup_json_ json_object *s = parse(schema), *i = parse(inst);
	struct sl_error err = {0};
	if (jsonschema_validate(s, i, &err) == 0)
		fail_msg("%s should be invalid against %s", inst, schema);
	assert_int_equal(err.kind, ERR_INVALID);
	if (strcmp(err.path, path) != 0)
		fail_msg("path '%s', expected '%s' (%s)", err.path, path, err.message);
	if (!strstr(err.message, needle))
		fail_msg("message '%s' lacks '%s'", err.message, needle);
}

static void test_types(void **state)
{
	(void)state;
	expect_valid("{\"type\": \"integer\"}", "3");
	expect_valid("{\"type\": \"integer\"}", "3.0");
	expect_invalid("{\"type\": \"integer\"}", "3.5", "$", "must be an integer, not a number");
	expect_valid("{\"type\": \"number\"}", "3");
	expect_invalid("{\"type\": \"number\"}", "NaN", "$", "non-finite");
	expect_invalid("{\"type\": \"string\"}", "{}", "$", "must be a string, not an object");
	expect_valid("{\"type\": [\"string\", \"null\"]}", "null");
	expect_invalid("{\"type\": [\"string\", \"null\", \"array\"]}", "true", "$",
		       "must be a string, null or an array, not a boolean");
	expect_valid("true", "{\"anything\": 1}");
	expect_invalid("false", "1", "$", "not allowed");
}

static void test_numbers_strings_arrays(void **state)
{
	(void)state;
	const char *n = "{\"minimum\": 1, \"maximum\": 64}";
	expect_valid(n, "64");
	expect_invalid(n, "65", "$", "must be at most 64 (it is 65)");
	expect_invalid(n, "0.5", "$", "must be at least 1");
	expect_invalid("{\"exclusiveMinimum\": 0}", "0", "$", "greater than 0");
	expect_invalid("{\"exclusiveMaximum\": 1.5}", "1.5", "$", "less than 1.5");
	/* Integers beyond double precision compare exactly. */
	expect_invalid("{\"maximum\": 9007199254740992}", "9007199254740993", "$", "at most");

	/* Lengths count code points: "é" is 2 bytes, 1 character. */
	expect_valid("{\"maxLength\": 3}", "\"\\u00e9\\u00e9\\u00e9\"");
	expect_invalid("{\"maxLength\": 3}", "\"abcd\"", "$", "at most 3 characters");
	expect_invalid("{\"minLength\": 1}", "\"\"", "$", "at least 1 characters");
	const char *p = "{\"pattern\": \"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$\"}";
	expect_valid(p, "\"patched-1.x\"");
	expect_invalid(p, "\"-x\"", "$", "must match the pattern");
	expect_invalid(p, "\"a/b\"", "$", "must match the pattern");
	/* The match covers the whole string, NULs included: not just "ab". */
	expect_invalid(p, "\"ab\\u0000/../x\"", "$", "must match the pattern");
	/* Control characters do not reach the message. */
	_cleanup_json_ json_object *s = parse(p), *i = parse("\"a\\nb\\u001b[31m\"");
	struct sl_error err = {0};
	assert_true(jsonschema_validate(s, i, &err) < 0);
	assert_null(strchr(err.message, '\n'));
	assert_null(strchr(err.message, '\x1b'));

	const char *a = "{\"type\": \"array\", \"items\": {\"type\": \"integer\"}, \"minItems\": "
			"1, \"maxItems\": 3, \"uniqueItems\": true}";
	expect_valid(a, "[1, 2, 3]");
	expect_invalid(a, "[]", "$", "at least 1 items");
	expect_invalid(a, "[1, 2, 3, 4]", "$", "at most 3 items");
	expect_invalid(a, "[1, \"x\"]", "$[1]", "must be an integer");
	expect_invalid(a, "[1, 2, 1.0]", "$[2]", "repeats item 0");
}

static bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : 3;
		if (*p >= 0x80 && (*p & 0xC0) == 0x80)
			return false;
		p++;
		for (int i = 0; i < n; i++, p++)
			if ((*p & 0xC0) != 0x80)
				return false;
	}
	return true;
}

/* Messages and paths are cut to fit, but never inside a UTF-8 sequence:
 * they end up in JSON error bodies. */
static void test_utf8_truncation(void **state)
{
	(void)state;
	char inst[1024] = "\"", key[512] = "";
	for (int i = 0; i < 100; i++) {
		strcat(inst, "\u00e9");
		strcat(key, "\u00e9");
	}
	strcat(inst, "\"");
	_cleanup_json_ json_object *s = parse("{\"pattern\": \"^[a-z]+$\"}"), *i = parse(inst);
	struct sl_error err = {0};
	assert_true(jsonschema_validate(s, i, &err) < 0);
	assert_true(utf8_valid(err.message));
	assert_non_null(strstr(err.message, "..."));

	char obj[1024];
	snprintf(obj, sizeof(obj), "{\"%s\": 1}", key);
	_cleanup_json_ json_object *s2 = parse("{\"additionalProperties\": false}"),
				   *i2 = parse(obj);
	assert_true(jsonschema_validate(s2, i2, &err) < 0);
	assert_true(utf8_valid(err.message));
	assert_true(utf8_valid(err.path));
}

static void test_objects(void **state)
{
	(void)state;
	const char *o = "{\"type\": \"object\", \"required\": [\"a\"], \"properties\": {\"a\": "
			"{\"type\": \"integer\"}, \"b\": {}}, \"additionalProperties\": false, "
			"\"maxProperties\": 2}";
	expect_valid(o, "{\"a\": 1, \"b\": null}");
	expect_invalid(o, "{\"b\": 1}", "$.a", "$.a is required");
	expect_invalid(o, "{\"a\": 1, \"c\": 1}", "$.c",
		       "not an allowed member of $ (allowed: 'a', 'b')");
	expect_invalid(o, "{\"a\": 1, \"b\": 1, \"c\": 1}", "$", "at most 2 members");
	expect_invalid(o, "{\"a\": \"1\"}", "$.a", "$.a must be an integer, not a string");

	const char *pp = "{\"patternProperties\": {\"^x-\": {\"type\": \"string\"}}, "
			 "\"additionalProperties\": {\"type\": \"integer\"}, \"propertyNames\": "
			 "{\"maxLength\": 5}, \"minProperties\": 1}";
	expect_valid(pp, "{\"x-a\": \"s\", \"n\": 3}");
	expect_invalid(pp, "{\"x-a\": 3}", "$.x-a", "must be a string");
	expect_invalid(pp, "{\"n\": \"s\"}", "$.n", "must be an integer");
	expect_invalid(pp, "{\"toolong\": 1}", "$.toolong", "'toolong' is not an allowed name");
	expect_invalid(pp, "{}", "$", "at least 1 members");
	/* Odd keys are quoted in paths. */
	expect_invalid("{\"additionalProperties\": false}", "{\"a b\": 1}", "$['a b']",
		       "not an allowed member");

	expect_valid("{\"const\": \"schedlab.result/v1\"}", "\"schedlab.result/v1\"");
	expect_invalid("{\"const\": \"schedlab.result/v1\"}", "\"v2\"", "$",
		       "must be 'schedlab.result/v1' (it is 'v2')");
	expect_valid("{\"enum\": [1, \"a\", null]}", "1.0");
	expect_invalid("{\"enum\": [\"rt-migrate-test\", \"cyclictest\"]}", "\"x\"", "$",
		       "is not one of 'rt-migrate-test', 'cyclictest' (it is 'x')");
}

static void test_combinators_and_refs(void **state)
{
	(void)state;
	/* oneOf reports the branch that got furthest: here the third form,
	 * whose "name" matched before "content" was found missing. */
	const char *one = "{\"$defs\": {\"n\": {\"type\": \"string\"}}, \"oneOf\": ["
			  "{\"type\": \"object\", \"required\": [\"series\"], "
			  "\"additionalProperties\": false, \"properties\": {\"series\": "
			  "{\"$ref\": \"#/$defs/n\"}}},"
			  "{\"type\": \"object\", \"required\": [\"path\"], "
			  "\"additionalProperties\": false, \"properties\": {\"path\": {}}},"
			  "{\"type\": \"object\", \"required\": [\"name\", \"content\"], "
			  "\"additionalProperties\": false, \"properties\": {\"name\": {\"$ref\": "
			  "\"#/$defs/n\"}, \"content\": {}}}]}";
	expect_valid(one, "{\"series\": \"linux-6.1\"}");
	expect_valid(one, "{\"name\": \"a\", \"content\": \"b\"}");
	expect_invalid(one, "{\"name\": \"x.patch\"}", "$.content", "$.content is required");
	expect_invalid(one, "{\"series\": 3}", "$.series", "must be a string");
	expect_invalid("{\"oneOf\": [{\"type\": \"integer\"}, {\"minimum\": 0}]}", "1", "$",
		       "more than one");
	expect_valid("{\"anyOf\": [{\"type\": \"integer\"}, {\"minimum\": 0}]}", "1");
	expect_invalid("{\"anyOf\": [{\"type\": \"integer\"}, {\"type\": \"null\"}]}", "\"s\"", "$",
		       "must be");
	expect_invalid("{\"allOf\": [{\"type\": \"integer\"}, {\"minimum\": 5}]}", "3", "$",
		       "at least 5");
	expect_invalid("{\"not\": {\"type\": \"null\"}}", "null", "$", "not allowed");
	/* ~1 escapes '/' in a pointer. */
	expect_valid("{\"$defs\": {\"a/b\": {\"type\": \"integer\"}}, \"$ref\": \"#/$defs/a~1b\"}",
		     "1");

	/* Broken schemas are internal errors, not user errors. */
	struct sl_error err = {0};
	_cleanup_json_ json_object *loop = parse("{\"$defs\": {\"a\": {\"$ref\": \"#/$defs/b\"}, "
						 "\"b\": {\"$ref\": \"#/$defs/a\"}}, \"$ref\": "
						 "\"#/$defs/a\"}");
	_cleanup_json_ json_object *one_i = parse("1");
	assert_true(jsonschema_validate(loop, one_i, &err) < 0);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_non_null(strstr(err.message, "loops"));
	_cleanup_json_ json_object *missing = parse("{\"$ref\": \"#/$defs/nope\"}");
	assert_true(jsonschema_validate(missing, one_i, &err) < 0);
	assert_int_equal(err.kind, ERR_INTERNAL);
	_cleanup_json_ json_object *remote = parse("{\"$ref\": \"http://example.com/s.json\"}");
	assert_true(jsonschema_validate(remote, one_i, &err) < 0);
	assert_int_equal(err.kind, ERR_INTERNAL);
}

static void test_keyword_audit(void **state)
{
	(void)state;
	struct sl_error err = {0};
	static const char *const names[] = {"job", "result"};
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		_cleanup_json_ json_object *s = NULL;
		if (schema_load(names[i], &s, &err) < 0)
			fail_msg("%s", err.message);
		if (jsonschema_check_keywords(s, &err) < 0)
			fail_msg("%s schema: %s", names[i], err.message);
	}
	/* The audit itself must catch what it is for. */
	_cleanup_json_ json_object *bad =
	    parse("{\"properties\": {\"a\": {\"items\": {\"prefixItems\": [true]}}}}");
	assert_true(jsonschema_check_keywords(bad, &err) < 0);
	assert_non_null(strstr(err.message, "'prefixItems'"));
	_cleanup_json_ json_object *badref =
	    parse("{\"$defs\": {\"a\": {}}, \"items\": {\"$ref\": \"#/$defs/b\"}}");
	assert_true(jsonschema_check_keywords(badref, &err) < 0);
	assert_non_null(strstr(err.message, "'#/$defs/b'"));
	_cleanup_json_ json_object *badre = parse("{\"pattern\": \"a(\"}");
	assert_true(jsonschema_check_keywords(badre, &err) < 0);
	/* Property names that look like keywords are not keywords. */
	_cleanup_json_ json_object *ok = parse("{\"properties\": {\"format\": {}}}");
	assert_int_equal(jsonschema_check_keywords(ok, &err), 0);
}

static json_object *load_file(const char *rel)
{
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *path = fs_path_join(root, rel);
	json_object *o = NULL;
	struct sl_error err = {0};
	if (json_read_file_strict(path, 64 << 20, NULL, &o, &err) < 0)
		fail_msg("%s", err.message);
	return o;
}

static void test_examples_validate(void **state)
{
	(void)state;
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL, *result = NULL;
	assert_int_equal(schema_load("job", &job, &err), 0);
	assert_int_equal(schema_load("result", &result, &err), 0);

	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *dir = fs_path_join(root, "examples");
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		char rel[300];
		snprintf(rel, sizeof(rel), "examples/%s", de->d_name);
		_cleanup_json_ json_object *spec = load_file(rel);
		if (jsonschema_validate(job, spec, &err) < 0)
			fail_msg("%s: %s", rel, err.message);
		n++;
	}
	closedir(d);
	assert_true(n >= 1);

	_cleanup_json_ json_object *res = load_file("tests/data/result-example.json");
	if (jsonschema_validate(result, res, &err) < 0)
		fail_msg("result-example.json: %s", err.message);
	json_object *inner = NULL;
	assert_true(json_object_object_get_ex(res, "job", &inner));
	if (jsonschema_validate(job, inner, &err) < 0)
		fail_msg("result-example.json's job: %s", err.message);
}

/* Mutations of a valid job, each with the path and words the user must see. */
static void test_job_errors(void **state)
{
	(void)state;
	struct sl_error err = {0};
	_cleanup_json_ json_object *schema = NULL;
	assert_int_equal(schema_load("job", &schema, &err), 0);
	static const struct {
		const char *doc, *path, *needle;
	} cases[] = {
	    {"{\"name\": \"j\", \"kernels\": {\"k\": {\"source\": \"debian:linux-source-6.1\"}}, "
	     "\"guest\": {\"vcpus\": 65}, \"variants\": {\"v\": {\"kernel\": \"k\"}}, "
	     "\"workloads\": [{\"name\": \"w\", \"tool\": \"cyclictest\"}]}",
	     "$.guest.vcpus", "must be at most 64"},
	    {"{\"name\": \"j\", \"kernels\": {\"k\": {\"source\": \"s\"}}, \"variants\": "
	     "{\"patched\": {\"kernel\": \"k\", \"features\": [\"RT_PUSH\", \"HRTICK\", "
	     "\"rt_push\"]}}, \"workloads\": [{\"name\": \"w\", \"tool\": \"cyclictest\"}]}",
	     "$.variants.patched.features[2]", "must match the pattern"},
	    {"{\"name\": \"j\", \"kernels\": {\"k\": {\"source\": \"s\"}}, \"variants\": "
	     "{\"v\": {\"kernel\": \"k\"}}, \"workloads\": [{\"name\": \"w\", \"tool\": "
	     "\"schbench\"}]}",
	     "$.workloads[0].tool",
	     "is not one of 'rt-migrate-test', 'cyclictest', 'share', 'slice'"},
	    {"{\"name\": \"j\", \"kernels\": {\"k\": {\"source\": \"s\"}}, \"variants\": "
	     "{\"v\": {\"kernel\": \"k\", \"uid_shares\": {\"70000\": 1024}}}, \"workloads\": "
	     "[{\"name\": \"w\", \"tool\": \"share\"}]}",
	     "$.variants.v.uid_shares.70000", "is not an allowed name"},
	    {"{\"name\": \"j\", \"kernels\": {\"k\": {\"source\": \"s\"}}, \"variants\": "
	     "{\"v\": {\"kernel\": \"k\", \"sched_tunables\": {\"Base_slice_ns\": 1}}}, "
	     "\"workloads\": [{\"name\": \"w\", \"tool\": \"share\"}]}",
	     "$.variants.v.sched_tunables.Base_slice_ns", "is not an allowed name"},
	    {"{\"name\": \"j\", \"kernels\": {\"k\": {\"source\": \"s\"}}, \"variants\": "
	     "{\"v\": {\"kernel\": \"k\"}}, \"workloads\": [{\"name\": \"w\", \"tool\": "
	     "\"share\"}], \"repeat\": 51}",
	     "$.repeat", "must be at most 50"},
	    {"{\"name\": \"j\", \"kernels\": {\"k\": {\"source\": \"s\"}}, \"variants\": "
	     "{\"v\": {\"kernel\": \"k\"}}, \"workloads\": [{\"name\": \"w\", \"tool\": "
	     "\"share\"}], \"gates\": [{\"workload\": \"w\", \"metric\": \"share_error\", "
	     "\"thresold\": 1}]}",
	     "$.gates[0].thresold", "not an allowed member"},
	    /* A full-form job with a bad name: the full branch fits the members
	     * better than the shorthand (which would say "$.base is required"). */
	    {"{\"name\": \"-x\", \"kernels\": {\"k\": {\"source\": \"s\"}}, \"variants\": "
	     "{\"v\": {\"kernel\": \"k\"}}, \"workloads\": [{\"name\": \"w\", \"tool\": "
	     "\"share\"}]}",
	     "$.name", "must match the pattern"},
	    /* The shorthand, missing its workloads: its own branch is reported. */
	    {"{\"name\": \"ci\", \"base\": {\"source\": \"s\"}, \"patches\": [{\"name\": "
	     "\"fix.patch\", \"content\": \"diff\"}]}",
	     "$.workloads", "is required"},
	    {"{\"name\": \"ci\", \"base\": {\"source\": \"s\"}, \"patches\": [{\"name\": "
	     "\"fix.patch\"}], \"workloads\": [{\"name\": \"w\", \"tool\": \"share\"}]}",
	     "$.patches[0].content", "is required"},
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_json_ json_object *doc = parse(cases[i].doc);
		if (jsonschema_validate(schema, doc, &err) == 0)
			fail_msg("case %zu accepted", i);
		if (strcmp(err.path, cases[i].path) != 0 || !strstr(err.message, cases[i].needle))
			fail_msg("case %zu: path '%s' message '%s'; expected '%s' and '%s'", i,
				 err.path, err.message, cases[i].path, cases[i].needle);
	}
}

static void test_schema_load(void **state)
{
	(void)state;
	struct sl_error err = {0};
	json_object *s = NULL;
	assert_true(schema_load("nope", &s, &err) < 0);
	assert_null(s);
	assert_true(schema_load("../job", &s, &err) < 0);
	/* Each call hands out a private copy. */
	_cleanup_json_ json_object *a = NULL, *b = NULL;
	assert_int_equal(schema_load("job", &a, &err), 0);
	assert_int_equal(schema_load("job", &b, &err), 0);
	assert_ptr_not_equal(a, b);
	assert_true(json_object_equal(a, b));
}

/* Service threads load and validate at once: each gets its own copy, the
 * regex cache is shared. ASan would catch a race that corrupts memory. */
static void *validate_thread(void *arg)
{
	json_object *doc = arg;
	for (int i = 0; i < 30; i++) {
		json_object *s = NULL;
		struct sl_error err = {0};
		if (schema_load("result", &s, &err) < 0 || jsonschema_validate(s, doc, &err) < 0) {
			json_object_put(s);
			return (void *)1;
		}
		json_object_put(s);
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	pthread_t t[6];
	json_object *docs[6];
	for (int i = 0; i < 6; i++) {
		docs[i] = load_file("tests/data/result-example.json");
		assert_int_equal(pthread_create(&t[i], NULL, validate_thread, docs[i]), 0);
	}
	for (int i = 0; i < 6; i++) {
		void *ret = NULL;
		pthread_join(t[i], &ret);
		assert_null(ret);
		json_object_put(docs[i]);
	}
}

/* A schema that is not usable fails before any instance is looked at, with
 * the schema location and the reason; malformed keyword values do not crash
 * the validator (user schemas come through validate --schema). */
static void expect_schema_error(const char *schema, const char *path, const char *needle)
{
	_cleanup_json_ json_object *s = parse(schema), *i = parse("1");
	struct sl_error err = {0};
	if (jsonschema_check_schema(s, &err) == 0)
		fail_msg("%s should be rejected", schema);
	assert_int_equal(err.kind, ERR_INTERNAL);
	if (strcmp(err.path, path) != 0)
		fail_msg("path '%s', expected '%s' (%s)", err.path, path, err.message);
	if (!strstr(err.message, needle))
		fail_msg("message '%s' lacks '%s'", err.message, needle);
	memset(&err, 0, sizeof(err));
	assert_true(jsonschema_validate(s, i, &err) < 0);
	assert_int_equal(err.kind, ERR_INTERNAL);
}

static void test_schema_check(void **state)
{
	(void)state;
	expect_schema_error("{\"properties\": {\"a\": {\"pattern\": \"^\\\\a\"}}}",
			    "#.properties.a.pattern",
			    "'\\a' at offset 1 is not an ECMA-262 escape");
	expect_schema_error("{\"pattern\": \"(?i)x\"}", "#.pattern", "(?i");
	expect_schema_error("{\"pattern\": \"a(\"}", "#.pattern", "missing closing parenthesis");
	expect_schema_error("{\"allOf\": 5}", "#.allOf", "non-empty array of schemas");
	expect_schema_error("{\"anyOf\": []}", "#.anyOf", "non-empty array");
	expect_schema_error("{\"required\": [1]}", "#.required", "array of strings");
	expect_schema_error("{\"properties\": [1]}", "#.properties", "an object");
	expect_schema_error("{\"type\": \"int\"}", "#.type", "type name");
	expect_schema_error("{\"minLength\": -1}", "#.minLength", "non-negative integer");
	expect_schema_error("{\"pattern\": 5}", "#.pattern", "a string");
	expect_schema_error("{\"items\": [{}]}", "#.items", "prefixItems");
	/* A $ref target under a keyword the walk does not enter is checked too. */
	expect_schema_error("{\"x\": {\"enum\": 1}, \"$ref\": \"#/x\"}", "#/x.enum", "an array");
	/* Unknown keywords are ignored, whatever their value. */
	_cleanup_json_ json_object *ok = parse("{\"if\": 5, \"format\": \"email\"}");
	assert_int_equal(jsonschema_check_schema(ok, NULL), 0);
}

/* Strings are matched whole (an embedded NUL no longer hides a suffix), and a
 * pattern that backtracks catastrophically ends in an error, not a hang. */
static void test_pattern_engine(void **state)
{
	(void)state;
	expect_valid("{\"pattern\": \"^a\\\\u0000b$\"}", "\"a\\u0000b\"");
	expect_invalid("{\"pattern\": \"^[a-z]+$\"}", "\"ab\\u0000c\"", "$", "must match");
	_cleanup_json_ json_object *s = parse("{\"pattern\": \"^(a+)+$\"}"),
				   *i = parse("\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\"");
	struct sl_error err = {0};
	assert_true(jsonschema_validate(s, i, &err) < 0);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_non_null(strstr(err.message, "backtracks beyond the limit"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_types),
	    cmocka_unit_test(test_numbers_strings_arrays),
	    cmocka_unit_test(test_objects),
	    cmocka_unit_test(test_utf8_truncation),
	    cmocka_unit_test(test_combinators_and_refs),
	    cmocka_unit_test(test_keyword_audit),
	    cmocka_unit_test(test_schema_check),
	    cmocka_unit_test(test_pattern_engine),
	    cmocka_unit_test(test_examples_validate),
	    cmocka_unit_test(test_job_errors),
	    cmocka_unit_test(test_schema_load),
	    cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
