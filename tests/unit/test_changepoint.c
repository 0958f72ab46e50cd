/* Change points across nights (compare/changepoint.h) on synthetic series:
 * nightly medians with noise like an A/A spread (3 % of the level, normal,
 * plus an occasional outlier night), a step, a flat series, counts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "compare/changepoint.h"

#define NIGHTS 30

/* 30 nights around level 100: normal noise with sd = 3 (the A/A spread
 * of a nightly median), every night an outlier of +25 % with probability
 * 1/30; from night index step_at on, the level is multiplied by 1 + step. */
static void nights(unsigned long seed, size_t step_at, double step, double *x)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, seed);
	for (size_t i = 0; i < NIGHTS; i++) {
		double level = i >= step_at ? 100 * (1 + step) : 100;
		x[i] = level + gsl_ran_gaussian(r, 3.0);
		if (gsl_rng_uniform(r) < 1.0 / 30)
			x[i] += 25;
	}
	gsl_rng_free(r);
}

static void test_step_found_at_its_night(void **state)
{
	(void)state;
	double x[NIGHTS];
	struct changepoint cp[CHANGEPOINT_MAX_FOUND];
	size_t n, found = 0, placed = 0;

	/* A 10 % step at night 15 (index 14) is found in at least 19 of 20
	 * noise draws and at night 15 +- 1 in at least 18 (outlier nights
	 * before the step can hide it or pull it by two: bench/changepoint.sh
	 * measured 99.7 % found and 94 % placed over 300 draws); in the first
	 * draw, exactly there, once. */
	for (unsigned long seed = 1; seed <= 20; seed++) {
		nights(seed, 14, 0.10, x);
		assert_int_equal(changepoint_detect(x, NIGHTS, NULL, cp, CHANGEPOINT_MAX_FOUND, &n),
				 0);
		if (n == 0 && seed != 1)
			continue;
		if (n != 1)
			fail_msg("seed %lu: %zu change points", seed, n);
		found++;
		if (cp[0].at >= 13 && cp[0].at <= 15)
			placed++;
		else if (seed == 1)
			fail_msg("seed %lu: change at index %zu, expected 14 +- 1", seed, cp[0].at);
		assert_true(cp[0].p <= 0.01);
		assert_true(cp[0].change > 5 && cp[0].change < 15);
		assert_true(cp[0].ci_lo > 0 && cp[0].ci_lo <= cp[0].change &&
			    cp[0].change <= cp[0].ci_hi);
		assert_true(cp[0].relative_change > 0.05);
		assert_int_equal(cp[0].from, 0);
		assert_int_equal(cp[0].to, NIGHTS);
	}
	assert_true(found >= 19);
	assert_true(placed >= 18);
	/* A drop is found the same way, with a negative change. */
	nights(7, 20, -0.10, x);
	assert_int_equal(changepoint_detect(x, NIGHTS, NULL, cp, CHANGEPOINT_MAX_FOUND, &n), 0);
	assert_int_equal(n, 1);
	assert_true(cp[0].at >= 19 && cp[0].at <= 21);
	assert_true(cp[0].change < 0 && cp[0].ci_hi < 0);
}

static void test_flat_series_has_none(void **state)
{
	(void)state;
	double x[NIGHTS];
	struct changepoint cp[CHANGEPOINT_MAX_FOUND];
	size_t n, alarms = 0;

	/* The canonical flat series has no change point, and over 100 noise
	 * draws at most 3 have one (alpha is 0.01 per series; the measured
	 * rate over 2000 draws is in docs/statistics.md). */
	for (unsigned long seed = 1; seed <= 100; seed++) {
		nights(1000 + seed, NIGHTS, 0, x);
		assert_int_equal(changepoint_detect(x, NIGHTS, NULL, cp, CHANGEPOINT_MAX_FOUND, &n),
				 0);
		if (seed == 1)
			assert_int_equal(n, 0);
		alarms += n > 0;
	}
	assert_true(alarms <= 3);

	/* A constant series has none. */
	for (size_t i = 0; i < NIGHTS; i++)
		x[i] = 42;
	assert_int_equal(changepoint_detect(x, NIGHTS, NULL, cp, CHANGEPOINT_MAX_FOUND, &n), 0);
	assert_int_equal(n, 0);
}

static void test_two_steps_and_counts(void **state)
{
	(void)state;
	struct changepoint cp[CHANGEPOINT_MAX_FOUND];
	size_t n;
	/* Inversion counts: 0-1 for 12 nights, 5-7 for 10, back to 0-1. */
	const double x[] = {0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 5, 6, 7, 5,
			    6, 6, 7, 5, 6, 5, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0};
	size_t len = sizeof(x) / sizeof(x[0]);

	assert_int_equal(changepoint_detect(x, len, NULL, cp, CHANGEPOINT_MAX_FOUND, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(cp[0].at, 12);
	assert_int_equal(cp[1].at, 22);
	assert_true(cp[0].change > 4 && cp[1].change < -4);
	/* A level of 0 before: the relative change is infinite, not NaN. */
	assert_true(isinf(cp[0].relative_change) && cp[0].relative_change > 0);
	assert_int_equal(cp[1].from, 12);
	assert_int_equal(cp[1].to, len);

	/* max bounds what is reported. */
	assert_int_equal(changepoint_detect(x, len, NULL, cp, 1, &n), 0);
	assert_int_equal(n, 1);
}

static void test_small_shift_below_magnitude(void **state)
{
	(void)state;
	double x[NIGHTS];
	struct changepoint cp[CHANGEPOINT_MAX_FOUND];
	struct changepoint_opts o;
	size_t n;

	/* A 3 % shift with almost no noise is significant but below the
	 * default 5 % magnitude; with the magnitude lowered it is found. */
	for (size_t i = 0; i < NIGHTS; i++)
		x[i] = (i >= 15 ? 103 : 100) + 0.01 * (double)(i % 3);
	assert_int_equal(changepoint_detect(x, NIGHTS, NULL, cp, CHANGEPOINT_MAX_FOUND, &n), 0);
	assert_int_equal(n, 0);
	changepoint_opts_default(&o);
	o.min_relative_change = 0.02;
	assert_int_equal(changepoint_detect(x, NIGHTS, &o, cp, CHANGEPOINT_MAX_FOUND, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cp[0].at, 15);
}

static void test_window_determinism_and_bad_input(void **state)
{
	(void)state;
	static double x[300];
	struct changepoint a[CHANGEPOINT_MAX_FOUND], b[CHANGEPOINT_MAX_FOUND];
	size_t na, nb;

	/* Only the newest CHANGEPOINT_MAX_POINTS are judged; indices refer to
	 * the whole series. A step at 20 lies outside the window, one at 250
	 * inside. */
	for (size_t i = 0; i < 300; i++)
		x[i] = (i >= 20 ? 50 : 0) + (i >= 250 ? 50 : 0) + (double)(i % 4);
	assert_int_equal(changepoint_detect(x, 300, NULL, a, CHANGEPOINT_MAX_FOUND, &na), 0);
	assert_int_equal(na, 1);
	assert_int_equal(a[0].at, 250);
	assert_int_equal(a[0].from, 300 - CHANGEPOINT_MAX_POINTS);
	assert_int_equal(changepoint_detect(x, 300, NULL, b, CHANGEPOINT_MAX_FOUND, &nb), 0);
	assert_int_equal(nb, na);
	assert_memory_equal(a, b, sizeof(a[0]) * na);

	/* Too short, not finite, bad options. */
	assert_int_equal(changepoint_detect(x, 5, NULL, a, CHANGEPOINT_MAX_FOUND, &na), 0);
	assert_int_equal(na, 0);
	x[3] = NAN;
	assert_int_equal(changepoint_detect(x, 300, NULL, a, CHANGEPOINT_MAX_FOUND, &na), -EINVAL);
	x[3] = 3;
	struct changepoint_opts o;
	changepoint_opts_default(&o);
	o.alpha = 0.001; /* unreachable with 499 permutations */
	assert_int_equal(changepoint_detect(x, 300, &o, a, CHANGEPOINT_MAX_FOUND, &na), -EINVAL);
	changepoint_opts_default(&o);
	o.min_segment = 1;
	assert_int_equal(changepoint_detect(x, 300, &o, a, CHANGEPOINT_MAX_FOUND, &na), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_step_found_at_its_night),
	    cmocka_unit_test(test_flat_series_has_none),
	    cmocka_unit_test(test_two_steps_and_counts),
	    cmocka_unit_test(test_small_shift_below_magnitude),
	    cmocka_unit_test(test_window_determinism_and_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
