/* The three renderings of each golden result under tests/data (the summary
 * table, the JUnit XML and the HTML report) compared byte for byte with the
 * outputs committed in tests/data/report-golden/: a change to how report/
 * reads a result must not change what it writes. Run from tests/ (tests/run.sh
 * does). SCHEDLAB_GOLDEN_WRITE=1 rewrites the expected files instead, for a
 * change that means to alter the output (review the diff). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/junit.h"
#include "report/report.h"
#include "report/summary.h"
#include "util/fs.h"

#define GOLDEN_MAX (16 << 20)

static json_object *load(const char *path)
{
	_cleanup_free_ char *text = NULL;
	struct sl_error err = {0};

	if (fs_read_file(path, GOLDEN_MAX, &text, NULL, &err) < 0)
		fail_msg("%s", err.message);
	json_object *o = json_tokener_parse(text);
	if (!o)
		fail_msg("'%s' is not JSON", path);
	return o;
}

/* Compares out with the committed file name, or writes it when asked. */
static void check(const char *name, const char *out)
{
	_cleanup_free_ char *path = NULL, *want = NULL;
	struct sl_error err = {0};
	size_t len = 0;

	assert_true(asprintf(&path, "data/report-golden/%s", name) > 0);
	if (getenv("SCHEDLAB_GOLDEN_WRITE")) {
		if (fs_write_file_atomic(path, out, strlen(out), &err) < 0)
			fail_msg("%s", err.message);
		return;
	}
	if (fs_read_file(path, GOLDEN_MAX, &want, &len, &err) < 0)
		fail_msg("%s", err.message);
	if (len != strlen(out) || memcmp(want, out, len) != 0) {
		size_t i = 0;
		while (i < len && out[i] && want[i] == out[i])
			i++;
		fail_msg("%s differs from the committed output at byte %zu: got '%.60s', want "
			 "'%.60s'",
			 name, i, out + (out[i] ? i : strlen(out)), want + i);
	}
}

static void golden(const char *stem, const char *path)
{
	_cleanup_json_ json_object *r = load(path);
	_cleanup_free_ char *text = NULL, *xml = NULL, *html = NULL, *name = NULL;
	struct sl_error err = {0};
	size_t len = 0;

	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	if (summary_print(f, r, &err) < 0)
		fail_msg("summary_print(%s): %s", path, err.message);
	fprintf(f, "exit code %d\n", summary_exit_code(r));
	assert_int_equal(fclose(f), 0);
	assert_true(asprintf(&name, "%s.summary.txt", stem) > 0);
	check(name, text);
	free(name);

	if (junit_from_result(r, &xml, &err) < 0)
		fail_msg("junit_from_result(%s): %s", path, err.message);
	assert_true(asprintf(&name, "%s.junit.xml", stem) > 0);
	check(name, xml);
	free(name);

	if (report_html(r, &html, &err) < 0)
		fail_msg("report_html(%s): %s", path, err.message);
	assert_true(asprintf(&name, "%s.html", stem) > 0);
	check(name, html);
}

static void test_result(void **state)
{
	(void)state;
	golden("result", "data/report/result.json");
}

static void test_real_rtmigrate(void **state)
{
	(void)state;
	golden("real-rtmigrate", "data/report/real-rtmigrate.json");
}

static void test_hostile(void **state)
{
	(void)state;
	golden("hostile", "data/report/hostile.json");
}

static void test_example(void **state)
{
	(void)state;
	golden("result-example", "data/result-example.json");
}

/* A result the model refuses (a run whose status is a number): each entry
 * point fails with the field's path and writes nothing, never crashes. */
static void test_malformed(void **state)
{
	(void)state;
	_cleanup_json_ json_object *r = load("data/report/result.json");
	json_object *variants = json_object_object_get(r, "variants");
	json_object_object_foreach(variants, vname, v)
	{
		json_object *run0 = json_object_array_get_idx(json_object_object_get(v, "runs"), 0);
		assert_non_null(run0);
		json_object_object_add(run0, "status", json_object_new_int(3));
		_cleanup_free_ char *path = NULL, *xml = NULL, *html = NULL, *text = NULL;
		assert_true(asprintf(&path, "variants.%s.runs[0].status", vname) > 0);
		struct sl_error err = {0};
		size_t len = 0;

		FILE *f = open_memstream(&text, &len);
		assert_non_null(f);
		assert_int_equal(summary_print(f, r, &err), -EINVAL);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(len, 0);
		assert_int_equal(err.kind, ERR_INVALID);
		if (!strstr(err.message, path))
			fail_msg("summary_print: '%s' does not name %s", err.message, path);

		memset(&err, 0, sizeof(err));
		assert_int_equal(junit_from_result(r, &xml, &err), -EINVAL);
		assert_null(xml);
		if (!strstr(err.message, path))
			fail_msg("junit_from_result: '%s' does not name %s", err.message, path);

		memset(&err, 0, sizeof(err));
		assert_int_equal(report_html(r, &html, &err), -EINVAL);
		assert_null(html);
		if (!strstr(err.message, path))
			fail_msg("report_html: '%s' does not name %s", err.message, path);
		break;
	}
	/* Not an object at all. */
	_cleanup_json_ json_object *arr = json_object_new_array();
	struct sl_error err = {0};
	char *out = NULL;
	assert_int_equal(junit_from_result(arr, &out, &err), -EINVAL);
	assert_int_equal(report_html(arr, &out, &err), -EINVAL);
	assert_null(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_result),    cmocka_unit_test(test_real_rtmigrate),
	    cmocka_unit_test(test_hostile),   cmocka_unit_test(test_example),
	    cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
