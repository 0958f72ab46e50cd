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
		for (size_t i = 0; i < n; i++)
			able += stats_mann_whitney_min_p((size_t)looks[i], (size_t)looks[i]) <= level;
		if (able <= k)
			return level;
	}
	return alpha / (double)n;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

void compare_repeat_bounds(json_object *spec, int *ret_min, int *ret_max)
{
	json_object *r = get(spec, "repeat");
	int min = 3, max = 3;
	if (json_object_is_type(r, json_type_int)) {
		min = max = json_object_get_int(r);
	} else if (json_object_is_type(r, json_type_object)) {
		json_object *lo = get(r, "min"), *hi = get(r, "max");
		min = json_object_is_type(lo, json_type_int) ? json_object_get_int(lo) : 3;
		max = json_object_is_type(hi, json_type_int) ? json_object_get_int(hi) : min;
	}
	if (min < 1)
		min = 1;
	*ret_min = min;
	*ret_max = max < min ? min : max;
}

double compare_alpha(json_object *spec)
{
	json_object *a = get(spec, "alpha");
	double alpha = COMPARE_DEFAULT_ALPHA;
	if ((json_object_is_type(a, json_type_double) || json_object_is_type(a, json_type_int)) &&
	    json_object_get_double(a) > 0 && json_object_get_double(a) < 1)
		alpha = json_object_get_double(a);
	int min, max;
	compare_repeat_bounds(spec, &min, &max);
	return compare_alpha_per_look(alpha, min, max);
}
