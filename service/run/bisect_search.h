/* The search of a bisection: over a series of n steps (patches
 * or commits) whose whole fails and whose base passes, the first k whose
 * prefix of k fails, by binary search. What a prefix's verdict is comes
 * from the caller (measure: build and measure the first k against the base
 * with the job's rules); the search only decides which prefix to measure
 * next. An inconclusive prefix counts good and makes the answer uncertain
 * (a noisy step must not send the search down a half silently: it says
 * so); an error stops the search. At most ceil(log2 n) measurements.
 * cli/bisect.c (`schedlab test --bisect`) measures with real runs; the
 * unit test with a mock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum bisect_verdict {
	BISECT_GOOD,	     /* the prefix passes */
	BISECT_BAD,	     /* the prefix fails (a regression, a build break, a hang) */
	BISECT_INCONCLUSIVE, /* neither after every repeat the job allows */
	BISECT_ERROR,	     /* the step could not be measured */
};

struct bisect_answer {
	size_t first_bad; /* 1..n; n when nothing earlier was shown bad */
	size_t steps;	  /* prefixes measured */
	bool certain;	  /* no step was inconclusive, none errored */
	bool error;	  /* a step errored: first_bad is not an answer */
};

/* measure(userdata, k) for 1 <= k < n gives the verdict of the first k. */
typedef enum bisect_verdict (*bisect_measure_fn)(void *userdata, size_t k);

/* Searches 1..n (n >= 1; n == 1 needs no step) and fills *ret. */
void bisect_search(size_t n, bisect_measure_fn measure, void *userdata, struct bisect_answer *ret);
