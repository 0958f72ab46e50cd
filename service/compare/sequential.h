/* Adaptive repeats without a hidden error rate: the looks at which a job may
 * stop, and the level each look's test must reach so that the chance of a
 * false `improved` or `regressed`, or a false `unchanged` or gate pass,
 * over all looks stays at most alpha
 * (docs/statistics.md, "Decisions and their error rate"). */
#pragma once

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
