/* Look schedules and per-look levels for adaptive repeats. See sequential.h. */
#include <math.h>
#include <stdio.h>

#include "compare/sequential.h"
#include "compare/stats.h"

size_t compare_look_schedule(int min, int max, int *out, size_t cap)
{
	size_t n = 0;
	if (min < 1)
		min = 1;
	if (max < min)
		max = min;
	for (int look = min; n < cap;) {
		out[n++] = look;
		if (look >= max)
			break;
		int next = (int)ceil(look * 1.5);
		if (next <= look)
			next = look + 1;
		look = next > max ? max : next;
	}
	return n;
}

double compare_alpha_per_look(double alpha, int min, int max)
{
	int looks[COMPARE_MAX_LOOKS];
	size_t n = compare_look_schedule(min, max, looks, COMPARE_MAX_LOOKS);
	if (n <= 1)
		return alpha;
	for (size_t k = 1; k <= n; k++) {
		double level = alpha / (double)k;
		size_t able = 0;
		/* A look spends when it can decide anything: a change (min_p
		 * <= level) or equivalence, whose interval at 1 - 2 x level is
		 * bounded once 1 / C(2n, n) = min_p / 2 <= level. */
		for (size_t i = 0; i < n; i++)
			able += stats_mann_whitney_min_p((size_t)looks[i], (size_t)looks[i]) / 2 <=
				level;
		if (able <= k)
			return level;
	}
	return alpha / (double)n;
}

double compare_alpha(const struct job *job)
{
	return compare_alpha_per_look(job->alpha, job->repeat_min, job->repeat);
}

int compare_repeats_needed(double alpha, int min, int max)
{
	bool plain = min >= max;
	for (int n = max < 2 ? 2 : max; n <= COMPARE_REPEATS_SEARCH_MAX; n++)
		if (stats_mann_whitney_min_p((size_t)n, (size_t)n) <=
		    compare_alpha_per_look(alpha, plain ? n : min, n))
			return n;
	return -1;
}

bool compare_repeat_warning(const struct job *job, char *buf, size_t sz)
{
	buf[0] = '\0';
	if (job->n_gates == 0)
		return false;
	double level = compare_alpha(job);
	double min_p = stats_mann_whitney_min_p((size_t)job->repeat, (size_t)job->repeat);
	if (min_p <= level)
		return false;
	int need = compare_repeats_needed(job->alpha, job->repeat_min, job->repeat);
	char fewest[96] = "";
	if (need > 0)
		snprintf(fewest, sizeof(fewest),
			 " %d runs a side is the fewest that can (\"repeat\": %d%s).", need, need,
			 job->repeat_min < job->repeat ? " as the maximum" : "");
	snprintf(buf, sz,
		 "with at most %d run(s) a side no gated metric can be shown to regress at the "
		 "level %.3g (the smallest Mann-Whitney p at %d against %d is %.3g): a "
		 "regression can only come out inconclusive.%s",
		 job->repeat, level, job->repeat, job->repeat, min_p, fewest);
	return true;
}
