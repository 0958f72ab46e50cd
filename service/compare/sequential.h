/* Adaptive repeats without a hidden error rate: the looks at which a job may
 * stop, and the level each look's test must reach so that the chance of a
 * false `improved` or `regressed` over all looks stays at most alpha
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
 * for the smallest K such that at most K looks can reach alpha / K at all (a
 * look whose smallest possible Mann-Whitney p is above the level cannot
 * reject, so it spends nothing: Bonferroni over the looks that can).
 * min == max is one look: alpha itself. */
double compare_alpha_per_look(double alpha, int min, int max);

/* The level a comparison in this job must reach: job->alpha divided over the
 * looks of job->repeat_min..job->repeat (adaptive repeats). */
double compare_alpha(const struct job *job);
