/* The strict UTF-8 validator shared by host and agent (workloads/proto/utf8.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proto/utf8.h"

static void test_valid(void **state)
{
	static const char *const good[] = {
	    "",
	    "plain ASCII",
	    "caf\xc3\xa9",			       /* U+00E9 */
	    "\xc2\x80",				       /* U+0080, smallest 2-byte */
	    "\xdf\xbf",				       /* U+07FF */
	    "\xe0\xa0\x80",			       /* U+0800, smallest 3-byte */
	    "\xed\x9f\xbf",			       /* U+D7FF, just below the surrogates */
	    "\xee\x80\x80",			       /* U+E000, just above them */
	    "\xef\xbf\xbf",			       /* U+FFFF */
	    "\xf0\x90\x80\x80",			       /* U+10000, smallest 4-byte */
	    "\xf4\x8f\xbf\xbf",			       /* U+10FFFF, the last code point */
	    "mixed \xe2\x82\xac 10 \xf0\x9f\x98\x80!", /* euro sign, emoji */
	};
	(void)state;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		size_t bad = 99;
		if (!utf8_valid(good[i], strlen(good[i]), &bad))
			fail_msg("good input %zu rejected at %zu", i, bad);
		assert_int_equal(bad, 99);
	}
	/* NUL is a valid one-byte sequence */
	assert_true(utf8_valid("a\0b", 3, NULL));
	assert_int_equal(utf8_seq_len("\xe2\x82\xac", 3), 3);
	assert_int_equal(utf8_seq_len("\xe2\x82\xac", 2), 0);
	assert_int_equal(utf8_seq_len("x", 0), 0);
}

static void test_invalid(void **state)
{
	static const struct {
		const char *s;
		size_t bad;
	} cases[] = {
	    {"\x80", 0},	     /* lone continuation byte */
	    {"ab\xbf", 2},	     /* lone continuation byte, later */
	    {"\xc0\xaf", 0},	     /* overlong '/' */
	    {"\xc1\xbf", 0},	     /* overlong */
	    {"\xe0\x80\xaf", 0},     /* overlong, 3 bytes */
	    {"\xe0\x9f\xbf", 0},     /* overlong U+07FF */
	    {"\xf0\x80\x80\xaf", 0}, /* overlong, 4 bytes */
	    {"\xf0\x8f\xbf\xbf", 0}, /* overlong U+FFFF */
	    {"\xed\xa0\x80", 0},     /* U+D800, a surrogate */
	    {"x\xed\xbf\xbf", 1},    /* U+DFFF */
	    {"\xf4\x90\x80\x80", 0}, /* U+110000 */
	    {"\xf5\x80\x80\x80", 0}, /* lead byte past U+10FFFF */
	    {"\xff", 0},	     /* never in UTF-8 */
	    {"\xfe", 0},
	    {"ok \xe2\x82", 3}, /* cut off at the end */
	    {"\xc3(", 0},	/* continuation byte missing */
	    {"\xe2\x28\xa1", 0},
	    {"\xf0\x90\x28\xbc", 0},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t bad = 99;
		if (utf8_valid(cases[i].s, strlen(cases[i].s), &bad))
			fail_msg("bad input %zu accepted", i);
		if (bad != cases[i].bad)
			fail_msg("bad input %zu: offset %zu, expected %zu", i, bad, cases[i].bad);
	}
	assert_false(utf8_valid("\x80", 1, NULL));
}

/* Every 1- and 2-byte input against the definition: U+0000..U+007F as one
 * byte, U+0080..U+07FF as two (lead 0xC2..0xDF). */
static void test_exhaustive_short(void **state)
{
	unsigned char b[2];
	(void)state;

	for (unsigned i = 0; i < 256; i++) {
		b[0] = (unsigned char)i;
		assert_true(utf8_valid((char *)b, 1, NULL) == (i < 0x80));
		for (unsigned j = 0; j < 256; j++) {
			b[1] = (unsigned char)j;
			bool want = (i < 0x80 && j < 0x80) ||
				    (i >= 0xC2 && i <= 0xDF && (j & 0xC0) == 0x80);
			assert_true(utf8_valid((char *)b, 2, NULL) == want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_invalid),
	    cmocka_unit_test(test_exhaustive_short),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
