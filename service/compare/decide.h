/* The verdict of one comparison from its evidence: the Mann-Whitney p, the
 * Hodges-Lehmann shift and its distribution-free interval, the practical
 * threshold. The rule is at the top of decide.c and in docs/statistics.md
 * section 3. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "compare/stats.h"

#define DECIDE_REASON_MAX 160

struct decision_input {
	const char *better; /* "lower", "higher" or "none" */
	size_t na, nb;
	struct stats_shift shift; /* at the level 1 - 2 * alpha; unused when na or nb < 2 */
	double thr;		  /* the practical threshold T, >= 0, in the metric's unit */
	double p, alpha; /* two-sided Mann-Whitney p (NAN: none), the level it must reach */
	double min_p;	 /* the smallest p at na against nb */
	bool gated;
};

struct decision {
	/* "regressed", "improved", "changed", "unchanged", "undecided" or (a gate
	 * neither failed nor passed) "inconclusive" */
	const char *verdict;
	/* why the verdict is undecided or inconclusive, or why a gate passed
	 * without equivalence; "" otherwise. A phrase for a table cell:
	 * "interval crosses ±28.75". */
	char reason[DECIDE_REASON_MAX];
};

void compare_decide(const struct decision_input *in, struct decision *out);
