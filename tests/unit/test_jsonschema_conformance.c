/* The JSON Schema validator against the official JSON-Schema-Test-Suite
 * (Debian's json-schema-test-suite: drafts 3 to 7; scripts/packages-test.txt
 * installs it) and against schedlab's own cases in the same format
 * (tests/data/jsonschema/: 2020-12-only keywords, ECMA-262 patterns, JSON
 * pointers), and prints passed/failed per keyword.
 *
 * From the suite, the draft-7 files run for every keyword the validator
 * claims (jsonschema.h) whose meaning did not change in 2020-12. Every other
 * file, group or case is on an explicit list below with the reason; a file
 * in the suite's directory that is on neither list fails the test, and so
 * does a skip entry that no longer matches anything, so nothing is skipped
 * silently. SCHEDLAB_JSON_SCHEMA_TEST_SUITE overrides the draft-7 directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "job/jsonschema.h"
#include "util/fs.h"
#include "util/json.h"

#define SUITE_DEFAULT_DIR "/usr/share/json-schema-test-suite/tests/draft7"

/* Draft-7 files whose keyword the validator claims, with the same meaning in
 * 2020-12. boolean_schema and default: boolean schemas and an annotation. */
static const char *const suite_files[] = {
    "additionalProperties.json",
    "allOf.json",
    "anyOf.json",
    "boolean_schema.json",
    "const.json",
    "default.json",
    "enum.json",
    "exclusiveMaximum.json",
    "exclusiveMinimum.json",
    "items.json",
    "maxItems.json",
    "maxLength.json",
    "maxProperties.json",
    "maximum.json",
    "minItems.json",
    "minLength.json",
    "minProperties.json",
    "minimum.json",
    "not.json",
    "oneOf.json",
    "pattern.json",
    "patternProperties.json",
    "properties.json",
    "propertyNames.json",
    "ref.json",
    "required.json",
    "type.json",
    "uniqueItems.json",
};

/* Draft-7 files not run, and why. */
static const struct {
	const char *file, *reason;
} skipped_files[] = {
    {"additionalItems.json", "additionalItems is not claimed (2020-12 replaced it with "
			     "prefixItems/items)"},
    {"contains.json", "contains is not claimed"},
    {"definitions.json", "validates against the remote draft-07 meta-schema (remote $ref)"},
    {"dependencies.json", "dependencies is not claimed (2020-12 split it into "
			  "dependentRequired/dependentSchemas)"},
    {"if-then-else.json", "if/then/else is not claimed"},
    {"multipleOf.json", "multipleOf is not claimed"},
    {"refRemote.json", "remote $ref is not claimed"},
    {"optional", "optional: format, bignum, content, zero-terminated floats and the "
		 "ECMA-262 regex format are not claimed (tests/data/jsonschema/pattern.json "
		 "has the ECMA-262 pattern cases)"},
};

/* Groups (case == NULL) or single cases not run, and why. */
static const struct {
	const char *file, *group, *test, *reason;
} skipped_cases[] = {
    {"items.json", "an array of schemas for items", NULL,
     "the array form of items is draft 7's tuple form; 2020-12 calls it prefixItems, which "
     "is not claimed"},
    {"items.json", "items with boolean schemas", NULL,
     "the array form of items (2020-12: prefixItems, not claimed)"},
    {"ref.json", "relative pointer ref to array", NULL,
     "uses the array form of items (2020-12: prefixItems, not claimed); a pointer into an "
     "array is an own case in tests/data/jsonschema/ref.json"},
    {"ref.json", "ref overrides any sibling keywords", NULL,
     "draft 7 only: there $ref hides its siblings, in 2020-12 they apply (own case in "
     "tests/data/jsonschema/ref.json)"},
    {"ref.json", "remote ref, containing refs itself", NULL,
     "remote $ref (the draft-07 meta-schema) is not claimed"},
    {"ref.json", "Recursive references between schemas", NULL,
     "$id-based resolution of relative references is not claimed"},
};

struct tally {
	char keyword[64];
	int passed, failed, skipped;
};

struct run {
	struct tally t[96];
	size_t nt;
	bool skip_used[ELEMENTSOF(skipped_cases)];
	int failed;
};

static struct tally *tally_for(struct run *run, const char *file)
{
	char kw[64];
	snprintf(kw, sizeof(kw), "%s", file);
	char *dot = strrchr(kw, '.');
	if (dot)
		*dot = '\0';
	for (size_t i = 0; i < run->nt; i++)
		if (strcmp(run->t[i].keyword, kw) == 0)
			return &run->t[i];
	assert_true(run->nt < ELEMENTSOF(run->t));
	struct tally *t = &run->t[run->nt++];
	memset(t, 0, sizeof(*t));
	snprintf(t->keyword, sizeof(t->keyword), "%s", kw);
	return t;
}

static const char *case_skip_reason(struct run *run, const char *file, const char *group,
				    const char *test)
{
	for (size_t i = 0; i < ELEMENTSOF(skipped_cases); i++)
		if (strcmp(skipped_cases[i].file, file) == 0 &&
		    strcmp(skipped_cases[i].group, group) == 0 &&
		    (!skipped_cases[i].test || strcmp(skipped_cases[i].test, test) == 0)) {
			run->skip_used[i] = true;
			return skipped_cases[i].reason;
		}
	return NULL;
}

/* Runs every case of one file in the suite's format: [{description, schema,
 * tests: [{description, data, valid}]}]. origin names the source in output. */
static void run_file(struct run *run, const char *dir, const char *file, const char *origin)
{
	_cleanup_free_ char *path = fs_path_join(dir, file);
	_cleanup_json_ json_object *doc = NULL;
	struct sl_error err = {0};
	if (json_read_file_strict(path, 16 << 20, "test file", &doc, &err) < 0)
		fail_msg("%s", err.message);
	assert_true(json_object_is_type(doc, json_type_array));
	struct tally *t = tally_for(run, file);
	for (size_t g = 0; g < json_object_array_length(doc); g++) {
		json_object *grp = json_object_array_get_idx(doc, g), *schema, *tests, *o;
		const char *gdesc = json_object_object_get_ex(grp, "description", &o)
					? json_object_get_string(o)
					: "";
		assert_true(json_object_object_get_ex(grp, "schema", &schema));
		assert_true(json_object_object_get_ex(grp, "tests", &tests));
		/* Own cases only: the schema itself must be rejected, before
		 * and whatever the instance. */
		bool schema_error = json_object_object_get_ex(grp, "schema_error", &o) &&
				    json_object_get_boolean(o);
		for (size_t i = 0; i < json_object_array_length(tests); i++) {
			json_object *tc = json_object_array_get_idx(tests, i), *data, *valid;
			const char *tdesc = json_object_object_get_ex(tc, "description", &o)
						? json_object_get_string(o)
						: "";
			assert_true(json_object_object_get_ex(tc, "data", &data));
			assert_true(json_object_object_get_ex(tc, "valid", &valid));
			const char *why = case_skip_reason(run, file, gdesc, tdesc);
			if (why) {
				t->skipped++;
				continue;
			}
			struct sl_error verr = {0};
			int r = jsonschema_validate(schema, data, &verr);
			bool want = json_object_get_boolean(valid);
			bool ok = r == 0 ? want && !schema_error
					 : !want && (verr.kind == ERR_INVALID) != schema_error;
			if (schema_error && ok && jsonschema_check_schema(schema, NULL) == 0)
				ok = false;
			if (ok) {
				t->passed++;
				continue;
			}
			t->failed++;
			run->failed++;
			printf("# FAIL %s %s: '%s' / '%s': expected %s, got %s%s%s\n", origin, file,
			       gdesc, tdesc,
			       schema_error ? "a schema error"
			       : want	    ? "valid"
					    : "invalid",
			       r == 0			  ? "valid"
			       : verr.kind == ERR_INVALID ? "invalid"
							  : "a schema error",
			       r == 0 ? "" : ": ", r == 0 ? "" : verr.message);
		}
	}
}

static bool listed(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(suite_files); i++)
		if (strcmp(suite_files[i], name) == 0)
			return true;
	for (size_t i = 0; i < ELEMENTSOF(skipped_files); i++)
		if (strcmp(skipped_files[i].file, name) == 0)
			return true;
	return false;
}

static void print_tally(struct run *run, const char *title)
{
	int p = 0, f = 0, s = 0;
	printf("# %s\n", title);
	for (size_t i = 0; i < run->nt; i++) {
		struct tally *t = &run->t[i];
		printf("#   %-22s %3d passed, %d failed%s", t->keyword, t->passed, t->failed,
		       t->skipped ? "," : "\n");
		if (t->skipped)
			printf(" %d skipped (listed)\n", t->skipped);
		p += t->passed;
		f += t->failed;
		s += t->skipped;
	}
	printf("#   %-22s %3d passed, %d failed, %d skipped\n", "total", p, f, s);
}

static void test_official_suite_draft7(void **state)
{
	(void)state;
	const char *dir = getenv("SCHEDLAB_JSON_SCHEMA_TEST_SUITE");
	if (!dir || !*dir)
		dir = SUITE_DEFAULT_DIR;
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("The JSON-Schema-Test-Suite is not at %s: install json-schema-test-suite "
			 "(scripts/setup.sh --with-tests) or set SCHEDLAB_JSON_SCHEMA_TEST_SUITE.",
			 dir);
	struct dirent *e;
	int unlisted = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || listed(e->d_name))
			continue;
		printf("# FAIL %s is in the suite but neither run nor skipped with a reason\n",
		       e->d_name);
		unlisted++;
	}
	closedir(d);
	for (size_t i = 0; i < ELEMENTSOF(skipped_files); i++)
		printf("# not run: %s: %s\n", skipped_files[i].file, skipped_files[i].reason);

	struct run *run = calloc(1, sizeof(*run));
	assert_non_null(run);
	for (size_t i = 0; i < ELEMENTSOF(suite_files); i++)
		run_file(run, dir, suite_files[i], "draft7");
	for (size_t i = 0; i < ELEMENTSOF(skipped_cases); i++) {
		if (!run->skip_used[i]) {
			printf("# FAIL the skip entry %s '%s' matches no case\n",
			       skipped_cases[i].file, skipped_cases[i].group);
			run->failed++;
		} else
			printf("# skipped: %s '%s'%s%s: %s\n", skipped_cases[i].file,
			       skipped_cases[i].group, skipped_cases[i].test ? " / " : "",
			       skipped_cases[i].test ? skipped_cases[i].test : "",
			       skipped_cases[i].reason);
	}
	print_tally(run, "JSON-Schema-Test-Suite draft 7, per keyword:");
	int failed = run->failed + unlisted;
	int total = 0;
	for (size_t i = 0; i < run->nt; i++)
		total += run->t[i].passed;
	free(run);
	assert_int_equal(failed, 0);
	assert_true(total > 200); /* the suite was really read */
}

static void test_own_cases_2020_12(void **state)
{
	(void)state;
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *dir = fs_path_join(root, "tests/data/jsonschema");
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("cannot open %s", dir);
	char names[32][64];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < ELEMENTSOF(names))
		if (strlen(e->d_name) > 5 && strlen(e->d_name) < sizeof(names[0]) &&
		    strcmp(e->d_name + strlen(e->d_name) - 5, ".json") == 0)
			memcpy(names[n++], e->d_name, strlen(e->d_name) + 1);
	closedir(d);
	qsort(names, n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
	struct run *run = calloc(1, sizeof(*run));
	assert_non_null(run);
	for (size_t i = 0; i < n; i++)
		run_file(run, dir, names[i], "own");
	print_tally(run, "schedlab's own cases (tests/data/jsonschema), per keyword:");
	int failed = run->failed, total = 0;
	for (size_t i = 0; i < run->nt; i++)
		total += run->t[i].passed;
	free(run);
	assert_int_equal(failed, 0);
	assert_true(total > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_official_suite_draft7),
	    cmocka_unit_test(test_own_cases_2020_12),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
