/* run_key: "<variant>#<repeat>" written and read back, and everything that
 * is not exactly that text refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "run/run_key.h"

static void test_round_trip(void **state)
{
	(void)state;
	const char *texts[] = {"baseline#0", "patched#1", "a.b_c-d#49", "x#2147483647"};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct run_key k;
		char buf[RUN_KEY_STRLEN];
		assert_int_equal(run_key_parse(texts[i], &k), 0);
		assert_string_equal(run_key_format(&k, buf), texts[i]);
	}
	struct run_key k;
	assert_int_equal(run_key_parse("patched#12", &k), 0);
	assert_string_equal(k.variant, "patched");
	assert_int_equal(k.repeat, 12);
}

static void test_bad_text_is_refused(void **state)
{
	(void)state;
	const char *bad[] = {
	    "",	     "baseline", "#0",	   "baseline#",	   "baseline#-1",
	    "b#+1",  "b#01",	 "b#1x",   "b# 1",	   "b#1 ",
	    "a#b#1", "b##1",	 "b#0x10", "b#2147483648", "b#99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_key k = {.variant = "untouched", .repeat = 7};
		if (run_key_parse(bad[i], &k) != -EINVAL)
			fail_msg("'%s' was not refused", bad[i]);
		assert_string_equal(k.variant, "untouched");
		assert_int_equal(k.repeat, 7);
	}
	struct run_key k;
	assert_int_equal(run_key_parse(NULL, &k), -EINVAL);
}

static void test_long_variant_is_refused(void **state)
{
	(void)state;
	char text[RUN_KEY_VARIANT_MAX + 8];
	memset(text, 'v', RUN_KEY_VARIANT_MAX);
	strcpy(text + RUN_KEY_VARIANT_MAX, "#3");
	struct run_key k;
	assert_int_equal(run_key_parse(text, &k), 0);
	assert_int_equal(strlen(k.variant), RUN_KEY_VARIANT_MAX);
	char longer[RUN_KEY_VARIANT_MAX + 8];
	memset(longer, 'v', RUN_KEY_VARIANT_MAX + 1);
	strcpy(longer + RUN_KEY_VARIANT_MAX + 1, "#3");
	assert_int_equal(run_key_parse(longer, &k), -ENAMETOOLONG);
}

static void test_init(void **state)
{
	(void)state;
	struct run_key k;
	assert_int_equal(run_key_init("base", 2, &k), 0);
	char buf[RUN_KEY_STRLEN];
	assert_string_equal(run_key_format(&k, buf), "base#2");
	assert_int_equal(run_key_init("a#b", 0, &k), -EINVAL);
	assert_int_equal(run_key_init("", 0, &k), -EINVAL);
	assert_int_equal(run_key_init(NULL, 0, &k), -EINVAL);
	assert_int_equal(run_key_init("base", -1, &k), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_bad_text_is_refused),
	    cmocka_unit_test(test_long_variant_is_refused),
	    cmocka_unit_test(test_init),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
