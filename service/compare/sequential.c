/* Look schedules and per-look levels for adaptive repeats. See sequential.h. */
#include <math.h>

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
