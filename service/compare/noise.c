/* Noisy runs and the job's noise policy. See noise.h. */
#include <math.h>

#include "compare/noise.h"

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static bool is_number(json_object *v)
{
	return json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int);
}

const char *noise_policy_name(enum job_noise_policy p)
{
	return p == JOB_NOISE_KEEP ? "keep" : p == JOB_NOISE_FAIL ? "fail" : "exclude";
}

double noise_run_wait_pct(json_object *run)
{
	json_object *v = get(get(run, "host_interference"), "vcpu_wait_pct");
	return is_number(v) ? json_object_get_double(v) : NAN;
}

bool noise_run_is_noisy(json_object *run)
{
	return json_object_get_boolean(get(run, "noisy"));
}

bool noise_mark_run(json_object *run, double limit_pct)
{
	double w = noise_run_wait_pct(run);
	bool noisy = isfinite(w) && w > limit_pct;
	json_object_object_add(run, "noisy", json_object_new_boolean(noisy));
	return noisy;
}
