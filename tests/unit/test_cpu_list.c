/* CPU lists (util/cpu_list.h): the kernel's and libvirt's "0-1,4" parsed to
 * a mask and printed back in the shortest form; anything else refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/cpu_list.h"
#include "util/macro.h"

static void test_round_trip(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
		uint64_t mask;
	} ok[] = {
	    {"0", "0", 1},
	    {"0-1", "0-1", 3},
	    {"0-1\n", "0-1", 3},
	    {"0,1,2,4", "0-2,4", 0x17},
	    {"3,0-1", "0-1,3", 0xb},
	    {"0-63", "0-63", UINT64_MAX},
	    {"63", "63", UINT64_C(1) << 63},
	};
	for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
		uint64_t m = 0;
		char buf[CPU_LIST_TEXT_MAX];
		assert_int_equal(cpu_list_parse(ok[i].in, &m), 0);
		assert_true(m == ok[i].mask);
		cpu_list_format(m, buf, sizeof(buf));
		assert_string_equal(buf, ok[i].out);
	}
	char buf[CPU_LIST_TEXT_MAX];
	cpu_list_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* every other CPU of 64: the longest list fits */
	uint64_t alt = UINT64_C(0x5555555555555555);
	cpu_list_format(alt, buf, sizeof(buf));
	uint64_t back = 0;
	assert_int_equal(cpu_list_parse(buf, &back), 0);
	assert_true(back == alt);
}

static void test_rejects(void **state)
{
	(void)state;
	static const char *const bad[] = {"",	    "\n",  "a",	  "1-0", "0-",	 "-1",
					  "0,",	    ",0",  "0 1", "64",	 "0-64", "1000",
					  "0-1\nx", "0;1", "0x1", "+1",	 "0--1"};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		uint64_t m = 7;
		if (cpu_list_parse(bad[i], &m) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_true(m == 7);
	}
	assert_int_equal(cpu_list_parse(NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
