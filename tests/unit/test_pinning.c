/* Host CPU pinning's choice (guest/pinning.c, docs/guests.md "Pinning"):
 * vcpus + 1 free CPUs or no pinning with the counts; vCPUs on the highest
 * free CPUs, the emulator on the free rest; CPU lists both ways. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "guest/pinning.h"

static void map_of(const char *list, unsigned char *map)
{
	if (!*list) {
		memset(map, 0, PIN_MAP_BYTES);
		return;
	}
	assert_int_equal(pin_map_parse(list, map), 0);
}

static void test_choose(void **state)
{
	(void)state;
	unsigned char online[PIN_MAP_BYTES], taken[PIN_MAP_BYTES];
	struct guest_pinning pin;
	char list[PIN_LIST_MAX];

	/* 2 host CPUs: a 1-vCPU guest on CPU 1, the emulator on CPU 0. */
	map_of("0-1", online);
	map_of("", taken);
	pinning_choose(online, taken, 1, &pin);
	assert_true(pin.pinned);
	assert_int_equal(pin.vcpu_cpu[0], 1);
	assert_string_equal(pin.emulator, "0");
	/* A 2-vCPU guest there: nothing to spare. */
	pinning_choose(online, taken, 2, &pin);
	assert_false(pin.pinned);
	assert_non_null(strstr(pin.reason, "2 online CPU(s), 0 of them held"));
	assert_non_null(strstr(pin.reason, "need 3 free"));

	/* 8 CPUs, 6-7 held by another guest, 3 offline: vCPUs on 5 and 4, the
	 * emulator on the free rest. */
	map_of("0-2,4-7", online);
	map_of("6-7", taken);
	pinning_choose(online, taken, 2, &pin);
	assert_true(pin.pinned);
	assert_int_equal(pin.vcpu_cpu[0], 5);
	assert_int_equal(pin.vcpu_cpu[1], 4);
	assert_string_equal(pin.emulator, "0-2");
	/* 5 free: a 4-vCPU guest fits, a 5-vCPU one does not. */
	pinning_choose(online, taken, 4, &pin);
	assert_true(pin.pinned);
	assert_string_equal(pin.emulator, "0");
	pinning_choose(online, taken, 5, &pin);
	assert_false(pin.pinned);
	assert_non_null(strstr(pin.reason, "7 online CPU(s), 2 of them held"));
	/* A held CPU that is offline does not count twice. */
	map_of("3,6-7", taken);
	pinning_choose(online, taken, 5, &pin);
	assert_false(pin.pinned);

	/* The highest CPUs of a big host. */
	map_of("0-1023", online);
	map_of("1023", taken);
	pinning_choose(online, taken, 2, &pin);
	assert_int_equal(pin.vcpu_cpu[0], 1022);
	assert_int_equal(pin.vcpu_cpu[1], 1021);
	assert_string_equal(pin.emulator, "0-1020");
	pin_map_format(online, list, sizeof(list));
	assert_string_equal(list, "0-1023");
}

static void test_lists(void **state)
{
	(void)state;
	unsigned char map[PIN_MAP_BYTES];
	char list[PIN_LIST_MAX];
	assert_int_equal(pin_map_parse("0-3,8,10-11\n", map), 0);
	pin_map_format(map, list, sizeof(list));
	assert_string_equal(list, "0-3,8,10-11");
	const char *bad[] = {"", "3-1", "1024", "0,,1", "a", "0-", "-1", "1 2", "0-1023,"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(pin_map_parse(bad[i], map), -EINVAL);
	/* A buffer too short keeps whole entries. */
	assert_int_equal(pin_map_parse("0,2,4,6", map), 0);
	pin_map_format(map, list, 6);
	assert_string_equal(list, "0,2,4");
	memset(map, 0, sizeof(map));
	pin_map_format(map, list, sizeof(list));
	assert_string_equal(list, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_choose),
	    cmocka_unit_test(test_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
