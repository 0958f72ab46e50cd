/* Statistics against values computed independently; each expected number
 * names its source. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "compare/sequential.h"
#include "compare/stats.h"
#include "helpers/job_fixture.h"
#include "util/macro.h"

#define assert_close(a, b, eps)                                                                    \
	do {                                                                                       \
		double _a = (a), _b = (b);                                                         \
		if (!(fabs(_a - _b) <= (eps)))                                                     \
			fail_msg("%s = %.17g, expected %.17g", #a, _a, _b);                        \
	} while (0)

static void test_summary(void **state)
{
	(void)state;
	struct stats_summary s;
	/* numpy.percentile docs: a = [[10, 7, 4], [3, 2, 1]]; percentile(a, 50) = 3.5. */
	const double a[] = {10, 7, 4, 3, 2, 1};
	assert_int_equal(stats_summarize(a, 6, &s), 0);
	assert_close(s.median, 3.5, 1e-12);
	/* Type 7 by hand: sorted 1 2 3 4 7 10, h = 5p: Q1 at 1.25 -> 2.25,
	 * Q3 at 3.75 -> 4 + 0.75 * 3 = 6.25. */
	assert_close(s.q1, 2.25, 1e-12);
	assert_close(s.q3, 6.25, 1e-12);
	assert_close(s.iqr, 4.0, 1e-12);
	assert_close(s.mean, 27.0 / 6, 1e-12);
	assert_close(s.min, 1, 0);
	assert_close(s.max, 10, 0);
	/* Input order is not changed. */
	assert_close(a[0], 10, 0);

	const double one[] = {42};
	assert_int_equal(stats_summarize(one, 1, &s), 0);
	assert_close(s.median, 42, 0);
	assert_close(s.iqr, 0, 0);

	const double bad[] = {1, NAN};
	assert_int_equal(stats_summarize(bad, 2, &s), -EINVAL);
	assert_int_equal(stats_summarize(a, 0, &s), -EINVAL);
	assert_int_equal(stats_summarize(a, STATS_MAX_VALUES + 1, &s), -EINVAL);
}

static void test_mann_whitney_exact(void **state)
{
	(void)state;
	double p;
	/* scipy.stats.mannwhitneyu docs: males = [19, 22, 16, 29, 24], females =
	 * [20, 11, 17, 12]; method="exact" gives U1 = 17, p = 0.1111111111111111
	 * (= 14/126 by enumeration). */
	const double males[] = {19, 22, 16, 29, 24}, females[] = {20, 11, 17, 12};
	assert_int_equal(stats_mann_whitney(males, 5, females, 4, &p), 0);
	assert_close(p, 0.1111111111111111, 1e-12);
	assert_int_equal(stats_mann_whitney(females, 4, males, 5, &p), 0);
	assert_close(p, 0.1111111111111111, 1e-12);

	/* Complete separation at 2 vs 2: 2 of the C(4,2) = 6 splits are as
	 * extreme, p = 1/3 (the smallest possible at this size). */
	const double inv_base[] = {3, 5}, inv_cand[] = {0, 0};
	assert_int_equal(stats_mann_whitney(inv_base, 2, inv_cand, 2, &p), 0);
	assert_close(p, 1.0 / 3, 1e-12);
	/* 3 vs 3 separated: 2/20. */
	const double x3[] = {1, 2, 3}, y3[] = {4, 5, 6};
	assert_int_equal(stats_mann_whitney(x3, 3, y3, 3, &p), 0);
	assert_close(p, 0.1, 1e-12);
	/* Identical samples: p = 1. */
	assert_int_equal(stats_mann_whitney(x3, 3, x3, 3, &p), 0);
	assert_close(p, 1.0, 1e-12);
	const double zeros[] = {0, 0, 0};
	assert_int_equal(stats_mann_whitney(zeros, 3, zeros, 3, &p), 0);
	assert_close(p, 1.0, 1e-12);
}

static void test_mann_whitney_normal(void **state)
{
	(void)state;
	double p;
	/* n1 + n2 = 22 > 20: normal approximation with tie and continuity
	 * correction. Expected by hand (python3, math.erfc): U = 32.5, tie term
	 * sum(t^3 - t) = 120, var = 121/12 * (23 - 120/462),
	 * z = (|32.5 - 60.5| - 0.5) / sqrt(var), p = erfc(z / sqrt 2)
	 * = 0.06935941883961047. */
	const double a[] = {1, 2, 2, 3, 4, 5, 5, 6, 7, 8, 9};
	const double b[] = {3, 4, 5, 5, 6, 7, 8, 9, 9, 10, 11};
	assert_int_equal(stats_mann_whitney(a, 11, b, 11, &p), 0);
	assert_close(p, 0.06935941883961047, 1e-12);

	/* The scipy docs' asymptotic value for males/females (continuity on, no
	 * ties) is 0.11134688653314041; the same formula on 21 vs 1 values: */
	double big[21];
	for (int i = 0; i < 21; i++)
		big[i] = i;
	const double one[] = {100};
	assert_int_equal(stats_mann_whitney(big, 21, one, 1, &p), 0);
	/* U = 0, mu = 10.5, var = 21 * 23 / 12, z = 10 / sqrt(40.25). */
	assert_close(p, erfc(10.0 / sqrt(40.25) / sqrt(2.0)), 1e-12);
}

static void test_bootstrap(void **state)
{
	(void)state;
	double ci[2], ci2[2];
	/* Baseline [3, 5], candidate [0, 0]: resampled baseline medians are 3, 4
	 * or 5 with probabilities 1/4, 1/2, 1/4; the candidate's always 0. So the
	 * differences are -5, -4, -3 and the 2.5 % / 97.5 % quantiles are -5 and
	 * -3 for any seed: the CI excludes 0 at repeat 2. */
	const double base[] = {3, 5}, cand[] = {0, 0};
	assert_int_equal(stats_bootstrap_median_diff_ci(base, 2, cand, 2, 1, ci), 0);
	assert_close(ci[0], -5, 1e-12);
	assert_close(ci[1], -3, 1e-12);

	/* Reproducible for a seed, different across seeds on continuous data. */
	const double a[] = {169, 257, 201, 230, 188, 212}, b[] = {175, 240, 199, 222, 205, 190};
	uint64_t s1 = stats_seed_from_string("patched/cyclictest/latency_us.avg");
	assert_int_equal(stats_bootstrap_median_diff_ci(a, 6, b, 6, s1, ci), 0);
	assert_int_equal(stats_bootstrap_median_diff_ci(a, 6, b, 6, s1, ci2), 0);
	assert_close(ci[0], ci2[0], 0);
	assert_close(ci[1], ci2[1], 0);
	assert_true(ci[0] < 0 && ci[1] > 0);
	/* The CI lies within the range of possible median differences. */
	assert_true(ci[0] >= 175 - 257 && ci[1] <= 240 - 169);

	/* A clear shift: every resample's difference is +100. */
	const double c[] = {10, 11, 12}, d[] = {110, 111, 112};
	assert_int_equal(stats_bootstrap_median_diff_ci(c, 3, d, 3, 7, ci), 0);
	assert_true(ci[0] >= 98 && ci[1] <= 102);

	assert_int_equal(stats_bootstrap_median_diff_ci(c, 0, d, 3, 7, ci), -EINVAL);
	/* FNV-1a of "a" is 0xaf63dc4c8601ec8c (the published test vector). */
	assert_true(stats_seed_from_string("a") == 0xaf63dc4c8601ec8cULL);
}

/* min_p = 2 / C(n1 + n2, n1): 1/3 at 2+2, 0.1 at 3+3 (the A/A split of
 * docs/statistics.md), 2/70 at 4+4, 2/252 at 5+5; and the exact test reaches
 * it on a complete separation. */
static void test_min_p_and_cliffs_delta(void **state)
{
	(void)state;
	assert_close(stats_mann_whitney_min_p(2, 2), 1.0 / 3, 1e-12);
	assert_close(stats_mann_whitney_min_p(3, 3), 0.1, 1e-12);
	assert_close(stats_mann_whitney_min_p(4, 4), 2.0 / 70, 1e-12);
	assert_close(stats_mann_whitney_min_p(5, 5), 2.0 / 252, 1e-12);
	assert_close(stats_mann_whitney_min_p(1, 1), 1.0, 0);
	assert_close(stats_mann_whitney_min_p(0, 3), 1.0, 0);
	const double a[] = {7, 4, 6}, b[] = {2, 3, 3};
	double p, d;
	assert_int_equal(stats_mann_whitney(a, 3, b, 3, &p), 0);
	assert_close(p, stats_mann_whitney_min_p(3, 3), 1e-12);
	assert_int_equal(stats_cliffs_delta(a, 3, b, 3, &d), 0);
	assert_close(d, -1.0, 0);
	/* By hand: pairs (c, b) of {1, 2} against {1, 3}: 1=1, 1<3, 2>1, 2<3: (1 - 2) / 4. */
	const double x[] = {1, 3}, y[] = {1, 2};
	assert_int_equal(stats_cliffs_delta(x, 2, y, 2, &d), 0);
	assert_close(d, -0.25, 1e-12);
	assert_int_equal(stats_cliffs_delta(x, 0, y, 2, &d), -EINVAL);
}

/* The look schedule of adaptive repeats and the level of each look. */
static void test_sequential_looks(void **state)
{
	(void)state;
	int looks[COMPARE_MAX_LOOKS];
	size_t n = compare_look_schedule(3, 20, looks, COMPARE_MAX_LOOKS);
	const int want[] = {3, 5, 8, 12, 18, 20};
	assert_int_equal(n, 6);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(looks[i], want[i]);
	assert_int_equal(compare_look_schedule(4, 4, looks, COMPARE_MAX_LOOKS), 1);
	assert_int_equal(compare_look_schedule(1, 2, looks, COMPARE_MAX_LOOKS), 2);
	/* 3..20: the look at 3 cannot reject (min_p 0.1); the other five can
	 * reach 0.05 / 5 = 0.01 (min_p at 5 is 0.0079). */
	assert_close(compare_alpha_per_look(0.05, 3, 20), 0.01, 1e-12);
	/* One look: alpha itself. */
	assert_close(compare_alpha_per_look(0.05, 5, 5), 0.05, 0);
	/* 3..4: only the look at 4 can reject (0.029 <= 0.05), but the look
	 * at 3 can show equivalence at 0.05 (its 90 % interval is bounded:
	 * 1/20 <= 0.05), so K = 1 is not enough; at K = 2 (0.025) the look at
	 * 3 can do neither and the look at 4 can bound one (1/70 <= 0.025). */
	assert_close(compare_alpha_per_look(0.05, 3, 4), 0.025, 1e-15);
	/* The job's alpha over its looks: 0.1 over 3..20 is 0.1 / 5. */
	struct job job = {.alpha = 0.1, .repeat_min = 3, .repeat = 20};
	assert_close(compare_alpha(&job), 0.02, 1e-12);
	_cleanup_job_ struct job *plain =
	    job_fixture("{\"name\":\"t\",\"baseline\":\"a\",\"kernels\":" JOB_FIXTURE_KERNELS ","
			"\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
			"\"workloads\":[{\"tool\":\"cyclictest\"}],\"repeat\":4}");
	assert_non_null(plain);
	assert_close(plain->alpha, 0.05, 0);
	assert_close(compare_alpha(plain), 0.05, 0);

	/* Told before the run: 3 a side at 0.05 can never decide a gate (min_p
	 * 0.1); a plain 4 can (0.029), adaptive 3..4 cannot (0.025 per look),
	 * 3..5 can (0.0079 <= 0.025). A job without gates is not warned. */
	assert_int_equal(compare_repeats_needed(0.05, 3, 3), 4);
	assert_int_equal(compare_repeats_needed(0.05, 3, 4), 5);
	assert_int_equal(compare_repeats_needed(0.005, 5, 5), 6); /* 0.0079, then 0.0022 */
	char warn[400];
	struct job three = {.alpha = 0.05, .repeat_min = 3, .repeat = 3, .n_gates = 1};
	assert_true(compare_repeat_warning(&three, warn, sizeof(warn)));
	assert_non_null(strstr(warn, "the smallest Mann-Whitney p at 3 against 3 is 0.1"));
	assert_non_null(strstr(warn, "4 runs a side is the fewest that can (\"repeat\": 4)"));
	struct job five = {.alpha = 0.05, .repeat_min = 5, .repeat = 20, .n_gates = 1};
	assert_false(compare_repeat_warning(&five, warn, sizeof(warn)));
	three.n_gates = 0;
	assert_false(compare_repeat_warning(&three, warn, sizeof(warn)));
}

/* The Hodges-Lehmann shift and its interval, worked by hand. */
static void test_hl_shift_by_hand(void **state)
{
	(void)state;
	struct stats_shift sh;
	/* 3 v 3: the nine differences b_j - a_i of {1, 2, 3} and {5, 7, 10} are
	 * 2 3 4 4 5 6 7 8 9; the estimate is the 5th, 5. U's null distribution
	 * at 3 v 3 puts 1/20 on U = 0, so at tail 0.05 k = 1 (P(U <= 0) = 0.05)
	 * and the 90 % interval is [d_(1), d_(9)] = [2, 9]; at tail 0.025 no k
	 * reaches the level: unbounded. */
	const double a3[] = {1, 2, 3}, b3[] = {5, 7, 10};
	assert_int_equal(stats_mw_shift_rank(3, 3, 0.05), 1);
	assert_int_equal(stats_mw_shift_rank(3, 3, 0.025), 0);
	assert_int_equal(stats_hl_shift(a3, 3, b3, 3, 0.05, &sh), 0);
	assert_close(sh.estimate, 5, 0);
	assert_true(sh.bounded);
	assert_close(sh.lo, 2, 0);
	assert_close(sh.hi, 9, 0);
	assert_close(sh.level, 0.9, 1e-12);
	assert_int_equal(stats_hl_shift(a3, 3, b3, 3, 0.025, &sh), 0);
	assert_false(sh.bounded);
	assert_true(isinf(sh.lo) && isinf(sh.hi));
	/* 5 v 5: the counts of U = 0, 1, 2, 3, 4, 5 are 1, 1, 2, 3, 5, 7 of
	 * C(10, 5) = 252 (partitions of u into at most 5 parts of at most 5),
	 * so P(U <= 4) = 12/252 = 0.048 <= 0.05 < P(U <= 5) = 19/252: k = 5.
	 * At tail 0.01: P(U <= 1) = 2/252 = 0.0079, P(U <= 2) = 0.016: k = 2.
	 * With a = {0, 1, 2, 3, 4} and b = a + 10 the 25 differences are
	 * 10 + j - i: 6 once, 7 twice, 8 three times, 9 four, 10 five, 11
	 * four, 12 three, 13 twice, 14 once; d_(5) = 8, d_(21) = 12. */
	const double a5[] = {0, 1, 2, 3, 4}, b5[] = {10, 11, 12, 13, 14};
	assert_int_equal(stats_mw_shift_rank(5, 5, 0.05), 5);
	assert_int_equal(stats_mw_shift_rank(5, 5, 0.01), 2);
	assert_int_equal(stats_hl_shift(a5, 5, b5, 5, 0.05, &sh), 0);
	assert_close(sh.estimate, 10, 0);
	assert_close(sh.lo, 8, 0);
	assert_close(sh.hi, 12, 0);
	/* Unequal sizes are symmetric; the normal approximation above
	 * STATS_HL_EXACT_MAX agrees with the exact k near the switch. */
	assert_int_equal(stats_mw_shift_rank(3, 5, 0.05), stats_mw_shift_rank(5, 3, 0.05));
	size_t exact = stats_mw_shift_rank(40, 40, 0.05);
	size_t approx = stats_mw_shift_rank(41, 40, 0.05);
	assert_true(approx + 25 >= exact && approx <= exact + 60);
	assert_int_equal(stats_hl_shift(a5, 0, b5, 5, 0.05, &sh), -EINVAL);
	assert_int_equal(stats_hl_shift(a5, 5, b5, 5, 0.5, &sh), -EINVAL);
}

/* Coverage by simulation: a shift of 3 between two normal samples, 4000
 * times per n; the 90 % interval (tail 0.05) must cover it at least 90 %
 * of the time, less three standard errors of the simulation (0.014). The
 * exact coverage is 1 - 2 P(U <= k - 1): 0.900 at 3 v 3, 0.905 at 5 v 5. The
 * percentile bootstrap of the median difference it replaced covers far
 * less at 3 v 3 (printed for the record). */
static void test_hl_shift_coverage(void **state)
{
	(void)state;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 20261206);
	static const size_t ns[] = {3, 5, 8};
	for (size_t t = 0; t < ELEMENTSOF(ns); t++) {
		size_t n = ns[t], covered = 0, boot_covered = 0, trials = 4000;
		for (size_t i = 0; i < trials; i++) {
			double a[8], b[8];
			for (size_t j = 0; j < n; j++) {
				a[j] = gsl_ran_gaussian(rng, 1.0);
				b[j] = 3.0 + gsl_ran_gaussian(rng, 1.0);
			}
			struct stats_shift sh;
			assert_int_equal(stats_hl_shift(a, n, b, n, 0.05, &sh), 0);
			covered += sh.bounded && sh.lo <= 3.0 && 3.0 <= sh.hi;
			if (n == 3 && i < 400) {
				double ci[2];
				assert_int_equal(stats_bootstrap_median_diff_ci(a, n, b, n, i, ci),
						 0);
				boot_covered += ci[0] <= 3.0 && 3.0 <= ci[1];
			}
		}
		double cov = (double)covered / (double)trials;
		print_message("n = %zu: coverage %.3f (nominal 0.90)\n", n, cov);
		if (n == 3)
			print_message("n = 3: the 95 %% bootstrap covered %.3f\n",
				      (double)boot_covered / 400.0);
		assert_true(cov >= 0.90 - 0.014);
	}
	gsl_rng_free(rng);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_summary),
	    cmocka_unit_test(test_min_p_and_cliffs_delta),
	    cmocka_unit_test(test_sequential_looks),
	    cmocka_unit_test(test_mann_whitney_exact),
	    cmocka_unit_test(test_mann_whitney_normal),
	    cmocka_unit_test(test_bootstrap),
	    cmocka_unit_test(test_hl_shift_by_hand),
	    cmocka_unit_test(test_hl_shift_coverage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
