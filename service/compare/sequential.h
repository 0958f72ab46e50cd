/* Adaptive repeats without a hidden error rate: the looks at which a job may
 * stop, and the level each look's test must reach so that the chance of a
 * false `improved` or `regressed`, or a false `unchanged` or gate pass,
 * over all looks stays at most alpha
 * (docs/statistics.md, "Decisions and their error rate"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job/job.h"

#define COMPARE_MAX_LOOKS 32

/* The repeat counts at which an adaptive job looks at its data: min, then
 * about 1.5 times the previous count (at least one more), and max last.
 * Writes at most cap counts to out and returns how many; min >= 1,
 * max >= min. */
size_t compare_look_schedule(int min, int max, int *out, size_t cap);

/* The per-look level for alpha spread over the looks of min..max: alpha / K
 * for the smallest K such that at most K looks can decide anything at
 * alpha / K (a look that can neither reject, its smallest Mann-Whitney p
 * above the level, nor bound an equivalence interval at 1 - 2 x level,
 * spends nothing: Bonferroni over the looks that can). The bound holds for
 * false changes and for false equivalence ("unchanged", a gate's pass)
 * alike.
 * min == max is one look: alpha itself. */
double compare_alpha_per_look(double alpha, int min, int max);

/* The level a comparison in this job must reach: job->alpha divided over the
 * looks of job->repeat_min..job->repeat (adaptive repeats). */
double compare_alpha(const struct job *job);

#define COMPARE_REPEATS_SEARCH_MAX 100

/* The smallest largest-repeat n >= max (and >= 2) at which a job of
 * alpha can decide a change: Mann-Whitney's smallest p at n against n
 * reaches the per-look level of min..n (of n alone for a plain repeat
 * count, min >= max). -1 above COMPARE_REPEATS_SEARCH_MAX. */
int compare_repeats_needed(double alpha, int min, int max);

/* Whether job's repeats can never decide a gate (its largest repeat count
 * cannot reach its per-look level): then buf gets one sentence saying so
 * and naming the fewest runs a side that can, for `schedlab validate`,
 * `schedlab test --dry-run`, the service's answer to a submit and the
 * job's first progress line. The job stays valid: such a job can still
 * pass (equivalence needs fewer runs) and a user may want only that. */
bool compare_repeat_warning(const struct job *job, char *buf, size_t sz);
