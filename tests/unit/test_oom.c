/* Out of memory is returned, not aborted (CODING-STYLE.md "Out of
 * memory"): an html_buf whose allocation fails stays failed, drops later
 * appends, fails what it is drawn into, and html_buf_steal() gives NULL.
 * The allocation is made to fail by asking for more than the allocator
 * gives (ASan returns NULL instead of stopping, see below). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "report/html.h"
#include "report/svg.h"

/* ASan's allocator otherwise ends the program on an impossible size. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static void test_html_buf_oom(void **state)
{
	(void)state;
	struct html_buf *b = html_buf_new();

	html_buf_puts(b, "<p>kept until the failure</p>");
	assert_false(html_buf_failed(b));
	/* never read: the reservation fails first */
	html_buf_putn(b, "x", SIZE_MAX / 4);
	assert_true(html_buf_failed(b));
	assert_string_equal(html_buf_data(b), "");
	html_buf_puts(b, "dropped");
	html_buf_printf(b, "%d", 42);
	html_buf_escape(b, "<dropped>");
	assert_int_equal(html_buf_len(b), 0);
	assert_null(html_buf_steal(b));
}

static void test_failure_spreads(void **state)
{
	(void)state;
	struct html_buf *o = html_buf_new();
	struct svg_plot *p = svg_plot_new(300, 200);
	double x[] = {1, 2}, y[] = {3, 4};

	int s = svg_plot_add_series(p, "a", 0, false);
	assert_int_equal(svg_plot_line(p, s, x, y, 2), 0);
	html_buf_putn(o, "x", SIZE_MAX / 4);
	/* a plot drawn into a failed buffer leaves it failed */
	svg_plot_render_to(p, o);
	assert_true(html_buf_failed(o));
	assert_null(html_buf_steal(o));
	/* the plot itself is fine */
	char *svg = svg_plot_render(p);
	assert_non_null(svg);
	assert_non_null(strstr(svg, "<svg"));
	free(svg);
	svg_plot_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_html_buf_oom),
	    cmocka_unit_test(test_failure_spreads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
