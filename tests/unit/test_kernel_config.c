/* The .config and fragment parser (kernel_config_parse) and the reading of
 * patch(1)'s output (kernel_tree_patch_explain), on text a build or a
 * submitter gave; tests/fuzz/fuzz_kernel_config.c looks for the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/kbuild-internal.h"

static void test_config_lines(void **state)
{
	(void)state;
	struct config_entry *v = NULL;
	size_t n = 0;
	struct sl_error err = {0};
	/* "# CONFIG_ is not set" names no option: a comment (the fuzzer found
	 * it taken for an option named "CONFIG_") */
	assert_int_equal(kernel_config_parse("# CONFIG_ is not set\n# CONFIG_HZ is not set\n"
					     "CONFIG_SMP=y # why\nCONFIG_X=\"a\\\"b\"\n",
					     "frag", true, &v, &n, &err),
			 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].name, "CONFIG_HZ");
	assert_string_equal(v[0].value, "n");
	assert_string_equal(v[1].name, "CONFIG_SMP");
	assert_string_equal(v[1].value, "y");
	assert_string_equal(v[2].value, "\"a\\\"b\"");
	free(v);
	v = NULL;
	assert_true(kernel_config_parse("CONFIG_=y\n", "frag", true, &v, &n, &err) < 0);
	assert_non_null(strstr(err.message, "Config fragment 'frag' line 1"));
	assert_null(v);
	/* lenient: the line is skipped */
	assert_int_equal(
	    kernel_config_parse("CONFIG_=y\nCONFIG_A=m\n", ".config", false, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	free(v);
}

static void test_patch_explain(void **state)
{
	(void)state;
	char why[300];
	kernel_tree_patch_explain("checking file kernel/sched/rt.c\nHunk #2 FAILED at 1234.\n"
				  "1 out of 2 hunks FAILED\n",
				  why, sizeof(why));
	assert_string_equal(why, "file 'kernel/sched/rt.c' hunk #2 FAILED at line 1234");
	kernel_tree_patch_explain("", why, sizeof(why));
	assert_string_equal(why, "patch(1) failed without saying which hunk");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config_lines),
	    cmocka_unit_test(test_patch_explain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
