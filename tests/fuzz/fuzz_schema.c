/* libFuzzer target: the JSON Schema validator with a schema from outside, as
 * `schedlab validate --schema` gets one. The first byte picks the mode:
 *   even: the rest is SCHEMA NUL DATA, both through json_parse_strict(); the
 *         schema is checked (jsonschema_check_schema) and DATA validated;
 *   odd:  the rest is one ECMA-262 pattern (any bytes), put into
 *         {"pattern": ...} and {"patternProperties": {...}} and run against a
 *         few strings and itself (the translator to PCRE2 and PCRE2).
 * Checks: a schema the check rejects is rejected by jsonschema_validate() too,
 * as ERR_INTERNAL; a failure has a message and valid UTF-8 in it; a schema
 * the check accepts never gives a schema error except the backtracking limit
 * or a $ref loop. */
#include <assert.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "job/jsonschema.h"
#include "proto/utf8.h"
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_message(const struct sl_error *err)
{
	size_t n = strlen(err->message);
	assert(n > 0);
	assert(utf8_valid(err->message, n, NULL));
}

static void run(json_object *schema, json_object *inst)
{
	struct sl_error cerr = {0}, verr = {0};
	int c = jsonschema_check_schema(schema, &cerr);
	int v = jsonschema_validate(schema, inst, &verr);
	if (c < 0) {
		check_message(&cerr);
		assert(cerr.kind == ERR_INTERNAL);
		assert(v < 0 && verr.kind == ERR_INTERNAL);
	}
	if (v < 0) {
		check_message(&verr);
		if (c == 0 && verr.kind == ERR_INTERNAL)
			assert(strstr(verr.message, "backtracks beyond the limit") ||
			       strstr(verr.message, "loops") || strstr(verr.message, "nests"));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 64 * 1024)
		return 0;
	const char *rest = (const char *)data + 1;
	size_t len = size - 1;
	if ((data[0] & 1) == 0) {
		const char *nul = memchr(rest, '\0', len);
		size_t slen = nul ? (size_t)(nul - rest) : len;
		json_object *schema = NULL, *inst = NULL;
		if (json_parse_strict(rest, slen, NULL, "schema", &schema, NULL) < 0)
			return 0;
		if (nul &&
		    json_parse_strict(nul + 1, len - slen - 1, NULL, "data", &inst, NULL) < 0)
			inst = NULL;
		run(schema, inst);
		json_object_put(schema);
		json_object_put(inst);
		return 0;
	}
	/* Patterns reach the validator from strict JSON: valid UTF-8. */
	if (!utf8_valid(rest, len, NULL))
		return 0;
	json_object *pat = json_object_new_string_len(rest, (int)len);
	json_object *s1 = json_object_new_object(), *s2 = json_object_new_object(),
		    *pp = json_object_new_object();
	json_object_object_add(s1, "pattern", json_object_get(pat));
	json_object_object_add(pp, json_object_get_string(pat), json_object_new_boolean(0));
	json_object_object_add(s2, "patternProperties", pp);
	static const char *const strings[] = {
	    "", "a", "42", "\xc3\xa9\xc3\xa9", "a\nb", "\xe2\x80\xa8", "x y", "\xf0\x9f\x98\x80"};
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		json_object *str = json_object_new_string(strings[i]);
		json_object *obj = json_object_new_object();
		json_object_object_add(obj, strings[i], json_object_new_int(1));
		run(s1, str);
		run(s2, obj);
		json_object_put(str);
		json_object_put(obj);
	}
	run(s1, pat);
	json_object_put(s1);
	json_object_put(s2);
	json_object_put(pat);
	return 0;
}
