/* bisect_search (run/bisect_search.h) on commit lists with mocked
 * measurements: for every length up to 16 and every culprit, the search
 * names the culprit in at most ceil(log2 n) steps and never measures the
 * base or the whole; an inconclusive step counts good and makes the answer
 * uncertain (and, when it hides the culprit, the answer is a later commit,
 * said to be uncertain); an error stops the search. The real measurement
 * is e2e 46-bisect (patches) and 74-change-point-bisect (a commit range in the service). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "run/bisect_search.h"

struct mock {
	size_t n, culprit;	    /* the first commit whose prefix fails (1..n) */
	size_t inconclusive_at;	    /* a prefix that stays inconclusive, or 0 */
	size_t error_at;	    /* a prefix whose step errors, or 0 */
	size_t measured[32], steps; /* the prefixes asked for, in order */
};

static enum bisect_verdict measure(void *userdata, size_t k)
{
	struct mock *m = userdata;
	assert_true(k >= 1 && k < m->n); /* never the base, never the whole */
	assert_true(m->steps < 32);
	m->measured[m->steps++] = k;
	if (k == m->error_at)
		return BISECT_ERROR;
	if (k == m->inconclusive_at)
		return BISECT_INCONCLUSIVE;
	return k >= m->culprit ? BISECT_BAD : BISECT_GOOD;
}

static size_t ceil_log2(size_t n)
{
	size_t l = 0;
	while (((size_t)1 << l) < n)
		l++;
	return l;
}

static void test_every_culprit(void **state)
{
	(void)state;
	for (size_t n = 1; n <= 16; n++)
		for (size_t c = 1; c <= n; c++) {
			struct mock m = {.n = n, .culprit = c};
			struct bisect_answer a;
			bisect_search(n, measure, &m, &a);
			assert_int_equal(a.first_bad, c);
			assert_true(a.certain);
			assert_false(a.error);
			assert_int_equal(a.steps, m.steps);
			assert_true(a.steps <= ceil_log2(n));
			/* each prefix is measured once */
			for (size_t i = 0; i < m.steps; i++)
				for (size_t j = i + 1; j < m.steps; j++)
					assert_int_not_equal(m.measured[i], m.measured[j]);
		}
}

/* Three commits, the second the culprit (e2e 73's range): prefixes 1 then 2. */
static void test_three_commits(void **state)
{
	(void)state;
	struct mock m = {.n = 3, .culprit = 2};
	struct bisect_answer a;
	bisect_search(3, measure, &m, &a);
	assert_int_equal(a.first_bad, 2);
	assert_int_equal(m.steps, 2);
	assert_int_equal(m.measured[0], 1);
	assert_int_equal(m.measured[1], 2);
}

static void test_inconclusive(void **state)
{
	(void)state;
	/* an inconclusive step on the good side: still the culprit, but unsure */
	struct mock m = {.n = 8, .culprit = 6, .inconclusive_at = 4};
	struct bisect_answer a;
	bisect_search(8, measure, &m, &a);
	assert_int_equal(a.first_bad, 6);
	assert_false(a.certain);
	assert_false(a.error);
	/* an inconclusive step at the culprit: counted good, the answer is
	 * later and says it is unsure */
	struct mock h = {.n = 8, .culprit = 4, .inconclusive_at = 4};
	bisect_search(8, measure, &h, &a);
	assert_int_equal(a.first_bad, 5);
	assert_false(a.certain);
}

static void test_error_stops(void **state)
{
	(void)state;
	struct mock m = {.n = 8, .culprit = 3, .error_at = 2};
	struct bisect_answer a;
	bisect_search(8, measure, &m, &a);
	assert_true(a.error);
	assert_false(a.certain);
	assert_int_equal(m.measured[m.steps - 1], 2); /* nothing after the error */
	assert_int_equal(a.steps, m.steps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_culprit),
	    cmocka_unit_test(test_three_commits),
	    cmocka_unit_test(test_inconclusive),
	    cmocka_unit_test(test_error_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
