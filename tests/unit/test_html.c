/* The HTML buffer (its escaping is util/escape.c's, tested in
 * test_escape.c) and the deterministic number formatting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "report/html.h"

static void test_buffer(void **state)
{
	(void)state;
	struct html_buf *b = html_buf_new();

	assert_string_equal(html_buf_data(b), "");
	for (int i = 0; i < 1000; i++)
		html_buf_printf(b, "%d,", i);
	html_buf_puts(b, NULL);
	html_buf_escape_n(b, "<x>", 2);
	assert_int_equal(html_buf_len(b), strlen(html_buf_data(b)));
	assert_true(strncmp(html_buf_data(b), "0,1,2,", 6) == 0);
	assert_non_null(strstr(html_buf_data(b), "998,999,&lt;x"));
	/* A printf longer than the current capacity. */
	char big[5000];
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	html_buf_printf(b, "[%s]", big);
	char *s = html_buf_steal(b);
	assert_int_equal(s[strlen(s) - 1], ']');
	free(s);
	html_buf_free(NULL);
}

static void test_numbers(void **state)
{
	(void)state;
	char n[HTML_NUM_MAX];

	assert_string_equal(html_fmt_fixed(1.0, 1, n), "1");
	assert_string_equal(html_fmt_fixed(1.25, 1, n), "1.2"); /* round-half-even of binary 1.25 */
	assert_string_equal(html_fmt_fixed(-0.04, 1, n), "0");
	assert_string_equal(html_fmt_fixed(12.50, 2, n), "12.5");
	assert_string_equal(html_fmt_fixed(100, 0, n), "100");
	assert_string_equal(html_fmt_fixed(0.0 / 0.0, 1, n), "nan");
	assert_string_equal(html_fmt_fixed(-1.0 / 0.0, 1, n), "-inf");
	assert_string_equal(html_fmt_fixed(1e300, 1, n), "1000000000000000019884624838656");
	assert_string_equal(html_fmt_value(20011.0, n), "20011");
	assert_string_equal(html_fmt_value(169.234, n), "169.2");
	assert_string_equal(html_fmt_value(3.25, n), "3.25");
	assert_string_equal(html_fmt_value(0.0123, n), "0.0123");
	assert_string_equal(html_fmt_value(0.3333, n), "0.333");
	assert_string_equal(html_fmt_value(-4, n), "-4");
	assert_string_equal(html_fmt_value(0, n), "0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_buffer),
	    cmocka_unit_test(test_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
