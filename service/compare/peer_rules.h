/* Other tools' decision rules, written from their descriptions so that
 * bench/verdict-peers.sh can replay them on the same runs as schedlab's own
 * rule (docs/statistics.md, "schedlab's rule against the peers' rules").
 * They are not used to decide anything in a job.
 *
 * Every rule takes a baseline sample a[0..na) and a candidate sample
 * b[0..nb), the metric's better direction ("lower", "higher" or "none", as
 * metrics_better() gives it), and answers what the peer would: the samples
 * differ, they are the same, or (for a peer that has such an answer) it
 * cannot tell yet. Returns 0, or -EINVAL for an empty sample, more than
 * STATS_MAX_VALUES values or a value that is not finite. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum peer_answer {
	PEER_SAME,
	PEER_CHANGED,
	PEER_UNDECIDED,
};

struct peer_verdict {
	enum peer_answer answer;
	int sign; /* +1 when the candidate is larger, -1 smaller, 0 neither */
	double p; /* the rule's p-value; NAN for a rule without one */
};

/* lkp-tests (the kernel test robot; lib/stats.rb): each side summarized by
 * its min, middle value (the sorted sample's element n / 2) and max; the
 * metric changed when one side's min lies above the other's middle value
 * and its middle value above the other's max. Changes of 1 % or less
 * (middle against middle) never count, nor under 5 % when key is false
 * (lkp's "key metrics" are the tests' own). Neither side with 3 samples:
 * lkp does not compare (same). No undecided answer. */
int peer_lkp(const double *a, size_t na, const double *b, size_t nb, bool key,
	     struct peer_verdict *ret);

/* mmtests (bin/lib/MMTests/Stat.pm, Compare.pm): each side's mean with a 95 %
 * Student-t confidence half-width t(0.975, n - 1) * s / sqrt(n); changed
 * when the means lie further apart than the two half-widths summed. A side
 * of 1 value has no interval (same). No undecided answer. */
int peer_mmtests(const double *a, size_t na, const double *b, size_t nb, struct peer_verdict *ret);

/* Chromium Pinpoint (dashboard/pinpoint/models/compare): p = min(Mann-Whitney,
 * Kolmogorov-Smirnov); different when p <= 0.01; same when p is above the
 * high threshold for the sample count (the average of na and nb) at
 * Pinpoint's default magnitude of 1 IQR (thresholds.py); unknown between.
 * With a better direction, a change toward it is "same", as Pinpoint does
 * once it knows the improvement direction. */
int peer_pinpoint(const double *a, size_t na, const double *b, size_t nb, const char *better,
		  struct peer_verdict *ret);

/* Pinpoint's high threshold at magnitude 1 IQR for a sample count of n
 * (n >= 1; from n = 30 on it is below 0.01, so every comparison decides). */
double peer_pinpoint_high_threshold(size_t n);

/* Mozilla PerfCompare: changed when the Mann-Whitney p <= 0.05 and
 * |Cliff's delta| >= 0.2. No undecided answer. */
int peer_perfcompare(const double *a, size_t na, const double *b, size_t nb,
		     struct peer_verdict *ret);

/* Firecracker's A/B gate (tools/ab_test.py): changed when a two-sided
 * permutation test of the difference of means gives p < 0.01 and that
 * difference exceeds 20 % of the baseline mean. Exact over every split when
 * there are at most 20000, else 9999 random splits (a fixed seed, so the
 * answer is reproducible). No undecided answer. */
int peer_firecracker(const double *a, size_t na, const double *b, size_t nb,
		     struct peer_verdict *ret);

/* The two-sample Kolmogorov-Smirnov statistic D = max |F_a - F_b| and its
 * asymptotic two-sided p: Q(lambda) = 2 sum_k (-1)^(k-1) exp(-2 k^2 lambda^2)
 * at lambda = (e + 0.12 + 0.11 / e) D, e = sqrt(na nb / (na + nb))
 * (Stephens' small-sample correction, as Numerical Recipes' probks and
 * Pinpoint use). Returns 0 or -EINVAL. */
int peer_kolmogorov_smirnov(const double *a, size_t na, const double *b, size_t nb, double *ret_d,
			    double *ret_p);

/* The name of an answer: "same", "changed" or "undecided". */
const char *peer_answer_name(enum peer_answer a);
