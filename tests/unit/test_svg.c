/* Golden tests of the SVG module: the same calls give the same bytes as the
 * files in tests/data/svg/ (REGEN=1 rewrites them), plus escaping, limits and
 * argument checks. Run from tests/ (tests/run.sh does). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/svg.h"
#include "util/fs.h"

static void check_golden(const char *name, const char *svg)
{
	_cleanup_free_ char *path = fs_path_join("data/svg", name);
	_cleanup_free_ char *want = NULL;
	struct sl_error err = {0};
	const char *regen = getenv("REGEN");

	if (regen && strcmp(regen, "1") == 0) {
		assert_int_equal(fs_write_file_atomic(path, svg, strlen(svg), &err), 0);
		return;
	}
	if (fs_read_file(path, 4 << 20, &want, NULL, &err) < 0)
		fail_msg("%s (run with REGEN=1 to create it)", err.message);
	if (strcmp(want, svg) != 0) {
		size_t i = 0;
		while (want[i] && want[i] == svg[i])
			i++;
		fail_msg("%s differs from the rendered SVG at byte %zu: want '%.40s', got '%.40s'",
			 path, i, want + i, svg + i);
	}
}

static char *render_and_free(struct svg_plot *p)
{
	char *svg = svg_plot_render(p);
	svg_plot_free(p);
	return svg;
}

/* Two overlaid latency histograms on a log count axis, p99 and max marked. */
static struct svg_plot *make_histogram(void)
{
	struct svg_plot *p = svg_plot_new(760, 300);
	double edges[41], a[40], b[40];

	for (int i = 0; i <= 40; i++)
		edges[i] = i * 25.0;
	for (int i = 0; i < 40; i++) {
		a[i] = i < 4 ? 0 : (double)(int)(20000.0 / ((i - 3) * (i - 3)));
		b[i] = i < 2 ? 0 : (double)(int)(30000.0 / ((i - 1) * (i - 1) * (i - 1)));
	}
	svg_plot_title(p, "cyclictest latency");
	svg_plot_x_axis(p, SVG_LINEAR, "latency (µs)");
	svg_plot_y_axis(p, SVG_LOG10, "samples");
	int s0 = svg_plot_add_series(p, "baseline", 0, false);
	int s1 = svg_plot_add_series(p, "patched", 1, true);
	assert_int_equal(svg_plot_histogram(p, s0, edges, a, 40, SVG_HIST_STEP), 0);
	assert_int_equal(svg_plot_histogram(p, s1, edges, b, 40, SVG_HIST_STEP), 0);
	assert_int_equal(svg_plot_vline(p, s0, 612.5, "baseline p99 612.5"), 0);
	assert_int_equal(svg_plot_vline(p, s1, 310, "patched p99 310"), 0);
	assert_int_equal(svg_plot_vline(p, s0, 990, "baseline max 990"), 0);
	return p;
}

static void test_histogram_golden(void **state)
{
	(void)state;
	_cleanup_free_ char *svg = render_and_free(make_histogram());
	check_golden("histogram.svg", svg);
	assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(svg, "latency (µs)"));
	/* Log axis: decade ticks, "10k" style labels. */
	assert_non_null(strstr(svg, ">10k</text>"));
}

static void test_deterministic(void **state)
{
	(void)state;
	_cleanup_free_ char *a = render_and_free(make_histogram());
	_cleanup_free_ char *b = render_and_free(make_histogram());
	assert_string_equal(a, b);
}

static void test_box_golden(void **state)
{
	(void)state;
	struct svg_plot *p = svg_plot_new(640, 300);
	const char *cats[] = {"prio 60", "prio 61", "prio 62"};
	double v[3][2][8] = {
	    {{20100, 20110, 20150, 20090, 20300, 20120, 20140, 20105},
	     {30, 28, 35, 40, 31, 29, 33, 30}},
	    {{12, 15, 14, 20011, 13, 16, 12, 14}, {14, 12, 13, 15, 12, 13, 14, 13}},
	    {{26, 22, 28, 25, 24, 27, 23, 26}, {25, 26, 24, 23, 27, 22, 25, 24}},
	};

	svg_plot_title(p, "rt-migrate-test start delay");
	assert_int_equal(svg_plot_x_categories(p, cats, 3), 0);
	svg_plot_y_axis(p, SVG_LOG10, "start delay (µs)");
	int s0 = svg_plot_add_series(p, "baseline", 0, false);
	int s1 = svg_plot_add_series(p, "patched", 1, false);
	for (size_t c = 0; c < 3; c++) {
		assert_int_equal(svg_plot_box(p, s0, c, v[c][0], 8), 0);
		assert_int_equal(svg_plot_box(p, s1, c, v[c][1], 8), 0);
	}
	/* Three values: strip and median only. */
	assert_int_equal(svg_plot_strip(p, s1, 0, v[0][1], 3), 0);
	_cleanup_free_ char *svg = render_and_free(p);
	check_golden("box.svg", svg);
	assert_non_null(strstr(svg, ">prio 61</text>"));
}

static void test_bars_golden(void **state)
{
	(void)state;
	struct svg_plot *p = svg_plot_new(520, 280);
	const char *cats[] = {"uid 1000", "uid 1001"};

	svg_plot_title(p, "CPU share per uid");
	assert_int_equal(svg_plot_x_categories(p, cats, 2), 0);
	svg_plot_y_axis(p, SVG_LINEAR, "fraction of CPU");
	svg_plot_y_range(p, 0, 1);
	svg_plot_target_label(p, "expected");
	svg_plot_bar_labels(p, true);
	int s0 = svg_plot_add_series(p, "baseline", 0, false);
	int s1 = svg_plot_add_series(p, "patched", 1, false);
	assert_int_equal(svg_plot_bar(p, s0, 0, 0.5), 0);
	assert_int_equal(svg_plot_bar(p, s0, 1, 0.5), 0);
	assert_int_equal(svg_plot_bar(p, s1, 0, 0.655), 0);
	assert_int_equal(svg_plot_bar(p, s1, 1, 0.345), 0);
	assert_int_equal(svg_plot_bar_target(p, s0, 0, 0.5), 0);
	assert_int_equal(svg_plot_bar_target(p, s0, 1, 0.5), 0);
	assert_int_equal(svg_plot_bar_target(p, s1, 0, 2.0 / 3), 0);
	assert_int_equal(svg_plot_bar_target(p, s1, 1, 1.0 / 3), 0);
	assert_int_equal(svg_plot_hline(p, -1, 0.5, "even split"), 0);
	_cleanup_free_ char *svg = render_and_free(p);
	check_golden("bars.svg", svg);
	assert_non_null(strstr(svg, ">expected</text>"));
	assert_non_null(strstr(svg, ">0.25</text>"));
	assert_non_null(strstr(svg, ">0.655</text>"));
}

static void test_trend_golden(void **state)
{
	(void)state;
	struct svg_plot *p = svg_plot_new(760, 280);
	double t[6], med[6], lo[6], hi[6], base[6];
	double rx[1], ry[1];

	for (int i = 0; i < 6; i++) {
		t[i] = 1795910400.0 + i * 86400.0; /* 2026-11-29 onwards */
		med[i] = i < 4 ? 180 + i : 240 + i;
		lo[i] = med[i] - 12;
		hi[i] = med[i] + 15;
		base[i] = 200 + (i % 2) * 3;
	}
	rx[0] = t[4];
	ry[0] = med[4];
	svg_plot_title(p, "cyclictest latency_us.p99 (patched)");
	svg_plot_x_axis(p, SVG_TIME, "finished (UTC)");
	svg_plot_y_axis(p, SVG_LINEAR, "µs");
	int sc = svg_plot_add_series(p, "candidate median, 95% CI", 1, false);
	int sb = svg_plot_add_series(p, "baseline median", 0, true);
	int sr = svg_plot_add_series(p, "regression", 5, false);
	assert_int_equal(svg_plot_band(p, sc, t, lo, hi, 6), 0);
	assert_int_equal(svg_plot_line(p, sc, t, med, 6), 0);
	assert_int_equal(svg_plot_line(p, sb, t, base, 6), 0);
	assert_int_equal(svg_plot_points(p, sr, rx, ry, 1, SVG_MARK_TRIANGLE), 0);
	_cleanup_free_ char *svg = render_and_free(p);
	check_golden("trend.svg", svg);
	assert_non_null(strstr(svg, ">2026-11-29</text>"));
	assert_non_null(strstr(svg, "<polygon"));
}

static void test_escaping(void **state)
{
	(void)state;
	struct svg_plot *p = svg_plot_new(400, 200);
	const char *cats[] = {"<b>\"x\"</b>&'"};

	svg_plot_title(p, "<script>alert(1)</script>");
	svg_plot_x_axis(p, SVG_LINEAR, "a<b");
	assert_int_equal(svg_plot_x_categories(p, cats, 1), 0);
	int s = svg_plot_add_series(p, "</svg><img src=x onerror=alert(1)>", 2, false);
	assert_int_equal(svg_plot_bar(p, s, 0, 1), 0);
	assert_int_equal(svg_plot_hline(p, s, 0.5, "<i>"), 0);
	_cleanup_free_ char *svg = render_and_free(p);
	assert_null(strstr(svg, "<script"));
	assert_null(strstr(svg, "<img"));
	assert_null(strstr(svg, "<b>"));
	assert_null(strstr(svg, "<i>"));
	assert_non_null(strstr(svg, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(svg, "&lt;b&gt;&quot;x&quot;&lt;/b&gt;&amp;&#39;"));
	/* Exactly one closing tag: the injected one is text. */
	assert_ptr_equal(strstr(svg, "</svg>"), strrchr(svg, '<'));
}

static void test_limits(void **state)
{
	(void)state;
	struct svg_plot *p = svg_plot_new(10, 100000); /* clamped */
	double v = 1;

	for (int i = 0; i < SVG_MAX_SERIES; i++)
		assert_int_equal(svg_plot_add_series(p, "s", i, false), i);
	assert_int_equal(svg_plot_add_series(p, "one too many", 0, false), -E2BIG);
	assert_int_equal(svg_plot_bar(p, 0, 0, 1), -EINVAL); /* no categories */
	assert_int_equal(svg_plot_line(p, 99, &v, &v, 1), -EINVAL);
	assert_int_equal(svg_plot_line(p, -1, &v, &v, 1), -EINVAL);
	assert_int_equal(svg_plot_line(p, 0, &v, &v, SVG_MAX_POINTS + 1), -E2BIG);
	for (int i = 0; i < SVG_MAX_ELEMENTS; i++)
		assert_int_equal(svg_plot_vline(p, 0, i, "x"), 0);
	assert_int_equal(svg_plot_vline(p, 0, 1, "x"), -E2BIG);
	_cleanup_free_ char *svg = render_and_free(p);
	assert_non_null(strstr(svg, "width=\"120\" height=\"4000\""));
}

static void test_empty_and_nonfinite(void **state)
{
	(void)state;
	struct svg_plot *p = svg_plot_new(300, 200);
	double x[3] = {1, 2, 3}, y[3] = {0.0 / 0.0, 1.0 / 0.0, -5};

	svg_plot_y_axis(p, SVG_LOG10, "log");
	int s = svg_plot_add_series(p, NULL, 0, false);
	assert_int_equal(svg_plot_line(p, s, x, y, 3), 0);
	_cleanup_free_ char *svg = render_and_free(p);
	assert_null(strstr(svg, "nan"));
	assert_null(strstr(svg, "inf"));
	_cleanup_free_ char *empty = render_and_free(svg_plot_new(300, 200));
	assert_non_null(strstr(empty, "</svg>"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_histogram_golden), cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_box_golden),	     cmocka_unit_test(test_bars_golden),
	    cmocka_unit_test(test_trend_golden),     cmocka_unit_test(test_escaping),
	    cmocka_unit_test(test_limits),	     cmocka_unit_test(test_empty_and_nonfinite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
