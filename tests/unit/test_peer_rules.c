/* The peers' decision rules (compare/peer_rules.h), each pinned to a case
 * worked by hand; the working is in the comment above each check. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <cmocka.h>

#include "compare/peer_rules.h"
#include "compare/stats.h"

#define assert_close(a, b, eps)                                                                    \
	do {                                                                                       \
		double _a = (a), _b = (b);                                                         \
		if (!(fabs(_a - _b) <= (eps)))                                                     \
			fail_msg("%s = %.17g, expected %.17g", #a, _a, _b);                        \
	} while (0)

static const double one_to_five[] = {1, 2, 3, 4, 5};

static void test_lkp(void **state)
{
	(void)state;
	struct peer_verdict v;
	/* a = 10..14: min 10, middle (element 5 / 2 = 2) 12, max 14. b = 13..17:
	 * min 13 > 12 and middle 15 > 14, so b lies above; 15 / 12 = 1.25. */
	const double a[] = {14, 10, 12, 11, 13}, b[] = {13, 14, 15, 16, 17};
	assert_int_equal(peer_lkp(a, 5, b, 5, true, &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	assert_int_equal(v.sign, 1);
	assert_true(isnan(v.p));
	/* b = 12.5, 13, 14, 15, 16: min 12.5 > 12, but the middle 14 is not above
	 * a's max 14. The ranges overlap too much. */
	const double b_overlap[] = {12.5, 13, 14, 15, 16};
	assert_int_equal(peer_lkp(a, 5, b_overlap, 5, true, &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	/* Separated but small: middles 100.2 and 100.7, 100.7 / 100.2 = 1.00499,
	 * at most 1 %. */
	const double c[] = {100.0, 100.1, 100.2, 100.3, 100.4};
	const double d[] = {100.5, 100.6, 100.7, 100.8, 100.9};
	assert_int_equal(peer_lkp(c, 5, d, 5, true, &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	/* Middles 101 and 105: 105 / 101 = 1.0396. A key metric counts it; a
	 * metric that is not key needs 5 %. */
	const double e[] = {100, 100.5, 101, 101.5, 102}, f[] = {104, 104.5, 105, 105.5, 106};
	assert_int_equal(peer_lkp(e, 5, f, 5, true, &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	assert_int_equal(peer_lkp(e, 5, f, 5, false, &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	/* Mirror image: the candidate below. */
	assert_int_equal(peer_lkp(b, 5, a, 5, true, &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	assert_int_equal(v.sign, -1);
	/* Two samples a side: lkp does not compare, however far apart. */
	const double g[] = {1, 2}, h[] = {100, 101};
	assert_int_equal(peer_lkp(g, 2, h, 2, true, &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	/* Three on one side is enough: 1, 2 against 100, 101, 102. */
	const double h3[] = {100, 101, 102};
	assert_int_equal(peer_lkp(g, 2, h3, 3, true, &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	const double bad[] = {1, NAN};
	assert_int_equal(peer_lkp(bad, 2, a, 5, true, &v), -EINVAL);
	assert_int_equal(peer_lkp(a, 0, b, 5, true, &v), -EINVAL);
}

static void test_mmtests(void **state)
{
	(void)state;
	struct peer_verdict v;
	/* a = 1..5: mean 3, s = sqrt(10 / 4) = 1.58114, t(0.975, 4) = 2.77645,
	 * half-width 2.77645 * 1.58114 / sqrt(5) = 1.96324. b = a + shift has the
	 * same half-width: the two sum to 3.92649. A shift of 4 is beyond, 3.9
	 * is not. */
	const double b4[] = {5, 6, 7, 8, 9}, b39[] = {4.9, 5.9, 6.9, 7.9, 8.9};
	assert_int_equal(peer_mmtests(one_to_five, 5, b4, 5, &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	assert_int_equal(v.sign, 1);
	assert_int_equal(peer_mmtests(one_to_five, 5, b39, 5, &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	assert_int_equal(v.sign, 1);
	/* One value a side has no interval: same. */
	const double x[] = {1}, y[] = {1000};
	assert_int_equal(peer_mmtests(x, 1, y, 1, &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
}

static void test_kolmogorov_smirnov(void **state)
{
	(void)state;
	double d, p;
	/* 1..5 against 6..10: D = 1; e = sqrt(25 / 10) = 1.58114, lambda =
	 * (1.58114 + 0.12 + 0.11 / 1.58114) * 1 = 1.77071; Q = 2 (exp(-2 *
	 * 1.77071^2) - exp(-8 * 1.77071^2) + ...) = 2 (0.00189068 - 1.3e-11) =
	 * 0.00378135. */
	const double b[] = {6, 7, 8, 9, 10};
	assert_int_equal(peer_kolmogorov_smirnov(one_to_five, 5, b, 5, &d, &p), 0);
	assert_close(d, 1.0, 1e-15);
	assert_close(p, 0.0037813540593701, 1e-12);
	/* Ties across the samples: a = 1, 1, 2 and b = 1, 2, 2. After 1, F_a =
	 * 2/3 and F_b = 1/3; after 2 both are 1: D = 1/3 (a walk that stepped
	 * one value at a time would see 2/3 - 0 first). e = sqrt(9 / 6), lambda
	 * = 0.478186, Q = 0.976213. */
	const double ta[] = {1, 1, 2}, tb[] = {1, 2, 2};
	assert_int_equal(peer_kolmogorov_smirnov(ta, 3, tb, 3, &d, &p), 0);
	assert_close(d, 1.0 / 3, 1e-15);
	assert_close(p, 0.9762126488644777, 1e-9);
	/* Equal samples: D = 0, p = 1. */
	assert_int_equal(peer_kolmogorov_smirnov(b, 5, b, 5, &d, &p), 0);
	assert_close(d, 0, 0);
	assert_close(p, 1, 0);
}

static void test_pinpoint(void **state)
{
	(void)state;
	struct peer_verdict v;
	/* thresholds.py, magnitude 1.0: n = 10 gives .5708, from 30 on .0091. */
	assert_close(peer_pinpoint_high_threshold(10), 0.5708, 0);
	assert_close(peer_pinpoint_high_threshold(30), 0.0091, 0);
	assert_close(peer_pinpoint_high_threshold(500), 0.0091, 0);
	assert_close(peer_pinpoint_high_threshold(0), 1.0, 0);
	double a[10], far[10], near[10], mid[10];
	for (int i = 0; i < 10; i++) {
		a[i] = i + 1;
		far[i] = i + 11;   /* 11..20: no overlap */
		near[i] = i + 1.5; /* each just above its a */
		mid[i] = i + 4;	   /* 4..13 */
	}
	/* 1..10 against 11..20: Mann-Whitney exact p = 2 / C(20, 10) =
	 * 1.08e-5 (KS: D = 1, lambda = 2.40526, p = 1.9e-5); min <= 0.01:
	 * different. */
	assert_int_equal(peer_pinpoint(a, 10, far, 10, "none", &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	assert_close(v.p, 2.0 / 184756, 1e-12);
	assert_int_equal(peer_pinpoint(a, 10, far, 10, "lower", &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	/* Higher is better and the candidate went up: an improvement, "same". */
	assert_int_equal(peer_pinpoint(a, 10, far, 10, "higher", &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	/* Interleaved: U = 1 + 2 + ... + 10 = 55 of a mean 50 (sd 13.23, p about
	 * 0.7); KS D = 0.1, lambda = 0.24, p = 1. Above .5708: same. */
	assert_int_equal(peer_pinpoint(a, 10, near, 10, "none", &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	assert_true(v.p > 0.5708);
	/* 4..13: U = 72 + 7 ties / 2 = 75.5, z = (75.5 - 50 - 0.5) / 13.2 = 1.89,
	 * p about 0.06; KS D = 0.3, lambda = 0.72158, p = 0.675. 0.01 < 0.06 <=
	 * .5708: unknown, Pinpoint would add 10 runs a side. */
	assert_int_equal(peer_pinpoint(a, 10, mid, 10, "none", &v), 0);
	assert_int_equal(v.answer, PEER_UNDECIDED);
	assert_true(v.p > 0.03 && v.p < 0.09);
}

static void test_perfcompare(void **state)
{
	(void)state;
	struct peer_verdict v;
	/* 1..5 against 6..10: exact p = 2 / C(10, 5) = 2 / 252 = 0.00794, delta
	 * = 1. Both pass: changed. */
	const double b[] = {6, 7, 8, 9, 10};
	assert_int_equal(peer_perfcompare(one_to_five, 5, b, 5, &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	assert_close(v.p, 2.0 / 252, 1e-12);
	/* 3.5..7.5: b beats a in 3 + 4 + 5 + 5 + 5 = 22 of 25 pairs, delta =
	 * (22 - 3) / 25 = 0.76, but p = 2 * P(U <= 3) = 2 * (1 + 1 + 2 + 3) / 252
	 * = 0.0556 > 0.05: same. */
	const double c[] = {3.5, 4.5, 5.5, 6.5, 7.5};
	assert_int_equal(peer_perfcompare(one_to_five, 5, c, 5, &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	assert_close(v.p, 14.0 / 252, 1e-12);
	assert_int_equal(v.sign, 1);
}

static void test_firecracker(void **state)
{
	(void)state;
	struct peer_verdict v;
	/* 100..104 against 125..129: of the 252 splits of the ten values, only
	 * the observed one puts a mean difference as large as 25 on b's side:
	 * two-sided p = 2 / 252 = 0.00794 < 0.01, and 25 > 0.2 * 102 = 20.4. */
	const double a[] = {100, 101, 102, 103, 104};
	const double far[] = {125, 126, 127, 128, 129}, near[] = {110, 111, 112, 113, 114};
	assert_int_equal(peer_firecracker(a, 5, far, 5, &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	assert_close(v.p, 2.0 / 252, 1e-12);
	/* 110..114: as significant (p = 2 / 252), but 10 is under 20.4: same. */
	assert_int_equal(peer_firecracker(a, 5, near, 5, &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	assert_close(v.p, 2.0 / 252, 1e-12);
	/* 1..5 against 2..6: mean difference 1. Splits with an a-sum of 15 or
	 * less: of the 252, by direct count (values 1..6 with 2..5 doubled)
	 * more than 1 %; p is far above 0.01. */
	const double shifted[] = {2, 3, 4, 5, 6};
	assert_int_equal(peer_firecracker(one_to_five, 5, shifted, 5, &v), 0);
	assert_int_equal(v.answer, PEER_SAME);
	assert_true(v.p > 0.1);
	/* 20 a side is C(40, 20) splits: sampled, and the observed split still
	 * sits at the edge: p = 2 / 10000. */
	double x[20], y[20];
	for (int i = 0; i < 20; i++) {
		x[i] = 100 + i;
		y[i] = 200 + i;
	}
	assert_int_equal(peer_firecracker(x, 20, y, 20, &v), 0);
	assert_int_equal(v.answer, PEER_CHANGED);
	assert_close(v.p, 2.0 / 10000, 1e-12);
}

static void test_answer_names(void **state)
{
	(void)state;
	assert_string_equal(peer_answer_name(PEER_SAME), "same");
	assert_string_equal(peer_answer_name(PEER_CHANGED), "changed");
	assert_string_equal(peer_answer_name(PEER_UNDECIDED), "undecided");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lkp),
	    cmocka_unit_test(test_mmtests),
	    cmocka_unit_test(test_kolmogorov_smirnov),
	    cmocka_unit_test(test_pinpoint),
	    cmocka_unit_test(test_perfcompare),
	    cmocka_unit_test(test_firecracker),
	    cmocka_unit_test(test_answer_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
