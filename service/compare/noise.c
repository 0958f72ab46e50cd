/* Noisy runs and the job's noise policy. See noise.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "compare/noise.h"
#include "util/json_get.h"

const char *noise_policy_name(enum job_noise_policy p)
{
	return p == JOB_NOISE_KEEP ? "keep" : p == JOB_NOISE_FAIL ? "fail" : "exclude";
}

double noise_run_wait_pct(json_object *run)
{
	return json_member_number_or(json_member(run, "host_interference"), "vcpu_wait_pct", NAN);
}

bool noise_run_is_noisy(json_object *run)
{
	return json_object_get_boolean(json_member(run, "noisy"));
}

double noise_run_others_pct(json_object *run)
{
	return json_member_number_or(json_member(run, "host_interference"), "others_busy_pct", NAN);
}

bool noise_is_noisy(double wait_pct, double others_pct, double limit_pct)
{
	bool others_known = isfinite(others_pct);
	return (isfinite(wait_pct) && wait_pct > limit_pct &&
		!(others_known && others_pct <= NOISE_OTHERS_LIMIT_PCT)) ||
	       (others_known && others_pct > NOISE_OTHERS_BUSY_PCT);
}

bool noise_mark_run(json_object *run, double limit_pct)
{
	bool noisy = noise_is_noisy(noise_run_wait_pct(run), noise_run_others_pct(run), limit_pct);
	json_object_object_add(run, "noisy", json_object_new_boolean(noisy));
	return noisy;
}

/* The p-quantile of the k waits in w (sorted in place), or NAN. */
static double wait_quantile(double *w, size_t k, double p)
{
	if (!w || k == 0 || !(p >= 0 && p <= 1))
		return NAN;
	gsl_sort(w, 1, k);
	return gsl_stats_quantile_from_sorted_data(w, 1, k, p); /* type 7 */
}

/* The p-quantile of host_interference.<field> over the runs that ended ok. */
static double runs_quantile(json_object *runs, const char *field, double p)
{
	size_t n = json_object_is_type(runs, json_type_array) ? json_object_array_length(runs) : 0;
	double *w = calloc(n ? n : 1, sizeof(*w));
	size_t k = 0;
	for (size_t i = 0; w && i < n; i++) {
		json_object *run = json_object_array_get_idx(runs, i);
		json_object *st = json_member(run, "status");
		double x = json_member_number_or(json_member(run, "host_interference"), field, NAN);
		if (json_object_is_type(st, json_type_string) &&
		    strcmp(json_object_get_string(st), "ok") == 0 && isfinite(x))
			w[k++] = x;
	}
	double q = wait_quantile(w, k, p);
	free(w);
	return q;
}

double noise_runs_wait_quantile(json_object *runs, double p)
{
	return runs_quantile(runs, "vcpu_wait_pct", p);
}

double noise_model_others_pct(const struct model_run *run)
{
	return json_member_number_or(run->host_interference, "others_busy_pct", NAN);
}

double noise_model_wait_pct(const struct model_run *run)
{
	return json_member_number_or(run->host_interference, "vcpu_wait_pct", NAN);
}

static double model_quantile(const struct model_run *runs, size_t n, const char *field, double p)
{
	double *w = calloc(n ? n : 1, sizeof(*w));
	size_t k = 0;
	for (size_t i = 0; w && i < n; i++) {
		double x = json_member_number_or(runs[i].host_interference, field, NAN);
		if (runs[i].status && strcmp(runs[i].status, "ok") == 0 && isfinite(x))
			w[k++] = x;
	}
	double q = wait_quantile(w, k, p);
	free(w);
	return q;
}

double noise_model_wait_quantile(const struct model_run *runs, size_t n, double p)
{
	return model_quantile(runs, n, "vcpu_wait_pct", p);
}

double noise_model_others_quantile(const struct model_run *runs, size_t n, double p)
{
	return model_quantile(runs, n, "others_busy_pct", p);
}

double noise_runs_median_wait(json_object *runs)
{
	return noise_runs_wait_quantile(runs, 0.5);
}

double noise_runs_median_others(json_object *runs)
{
	return runs_quantile(runs, "others_busy_pct", 0.5);
}

bool noise_hang_is_kernels(double baseline_median_wait, double baseline_median_others,
			   double limit_pct)
{
	return isfinite(baseline_median_wait) && baseline_median_wait <= limit_pct &&
	       !(isfinite(baseline_median_others) &&
		 baseline_median_others > NOISE_OTHERS_BUSY_PCT);
}
