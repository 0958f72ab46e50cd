/* A load's metrics (docs/workloads.md "Loads"): the agent's workload frame
 * for a load carries a "load" object (agent/load.h) with the output of its
 * last completed iterations, how often it started, completed and failed, and
 * its CPU time over the measured window. Each iteration's output goes
 * through the tool's own parser; the load's metrics are their means (its
 * throughput: hackbench's loops_per_s, burn's ops_per_s, stress-ng's
 * bogo_ops_per_s.S, ...), plus load.cpu_fraction, load.iterations,
 * load.restarts and load.failures. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/json_get.h"

#define LOAD_MAX_OUTPUTS 64	   /* the agent keeps 16 */
#define LOAD_MAX_COUNT	 (1 << 30) /* starts, completions, failures */
#define LOAD_MAX_CPU_US	 (1LL << 50)
#define LOAD_MAX_CPUS	 1024
/* Below this the window is too short to judge CPU use: the measured
 * workloads failed at once, which fails the run anyway. */
#define LOAD_MIN_WINDOW_MS 500

/* An integer member in [0, max] into *ret, or -1. */
static int load_int(json_object *load, const char *key, long long max, long long *ret)
{
	json_object *v = json_member(load, key);
	if (!json_object_is_type(v, json_type_int))
		return -1;
	long long x = json_object_get_int64(v);
	if (x < 0 || x > max)
		return -1;
	*ret = x;
	return 0;
}

struct load_counts {
	long long starts, completed, failures, cpu_us, window_ms, cpus;
};

static int load_counts(json_object *load, struct load_counts *c, struct sl_error *err)
{
	static const struct {
		const char *key;
		long long max;
		size_t off;
	} f[] = {
	    {"starts", LOAD_MAX_COUNT, offsetof(struct load_counts, starts)},
	    {"completed", LOAD_MAX_COUNT, offsetof(struct load_counts, completed)},
	    {"failures", LOAD_MAX_COUNT, offsetof(struct load_counts, failures)},
	    {"cpu_us", LOAD_MAX_CPU_US, offsetof(struct load_counts, cpu_us)},
	    {"window_ms", LOAD_MAX_CPU_US / 1000, offsetof(struct load_counts, window_ms)},
	    {"cpus", LOAD_MAX_CPUS, offsetof(struct load_counts, cpus)},
	};
	for (size_t i = 0; i < ELEMENTSOF(f); i++)
		if (load_int(load, f[i].key, f[i].max, (long long *)((char *)c + f[i].off)) < 0)
			return error_set(err, ERR_INVALID, 0,
					 "The load's '%s' is not an integer from 0 to %lld.",
					 f[i].key, f[i].max);
	if (c->cpus == 0)
		return error_set(err, ERR_INVALID, 0, "The load's 'cpus' is 0.");
	return 0;
}

double metrics_load_cpu_fraction(json_object *payload, bool *ret_ok)
{
	struct load_counts c;
	struct sl_error err = {0};
	json_object *load = json_member(payload, "load");
	*ret_ok = json_object_is_type(load, json_type_object) && load_counts(load, &c, &err) == 0 &&
		  c.window_ms >= LOAD_MIN_WINDOW_MS;
	if (!*ret_ok)
		return 0;
	return (double)c.cpu_us / ((double)c.window_ms * 1000.0 * (double)c.cpus);
}

bool metrics_load_shortfall(json_object *payload, json_object *workload_spec, char *buf, size_t len)
{
	bool ok = false;
	double frac = metrics_load_cpu_fraction(payload, &ok);
	json_object *m = json_member(workload_spec, "min_cpu");
	double floor =
	    json_object_is_type(m, json_type_double) || json_object_is_type(m, json_type_int)
		? json_object_get_double(m)
		: 0.5;
	json_object *load = json_member(payload, "load");
	if (!json_object_is_type(load, json_type_object))
		return false;
	if (!ok) {
		snprintf(buf, len,
			 "its CPU use over the measured window is missing or out of bounds");
		return true;
	}
	if (frac >= floor)
		return false;
	json_object *lf = json_member(load, "last_failure");
	long long cpus = json_object_get_int64(json_member(load, "cpus"));
	snprintf(buf, len,
		 "it used %.0f %% of its %lld CPU(s) over the measured window, under its floor of "
		 "%.0f %% (min_cpu)%s%.100s%s",
		 frac * 100, cpus, floor * 100,
		 json_object_is_type(lf, json_type_string) ? "; it failed: " : "",
		 json_object_is_type(lf, json_type_string) ? json_object_get_string(lf) : "",
		 json_object_is_type(lf, json_type_string) ? "" : "; it slept or was starved");
	return true;
}

/* Adds each metric of m to sums (name -> [sum, count]). */
static void accumulate(json_object *sums, json_object *m)
{
	json_object_object_foreach(m, name, val)
	{
		json_object *acc = json_member(sums, name);
		if (!acc) {
			acc = json_object_new_array();
			json_object_array_add(acc, json_object_new_double(0));
			json_object_array_add(acc, json_object_new_int(0));
			json_object_object_add(sums, name, acc);
		}
		double s = json_object_get_double(json_object_array_get_idx(acc, 0));
		int n = json_object_get_int(json_object_array_get_idx(acc, 1));
		json_object_array_put_idx(acc, 0,
					  json_object_new_double(s + json_object_get_double(val)));
		json_object_array_put_idx(acc, 1, json_object_new_int(n + 1));
	}
}

/* load.cpu_fraction, .iterations, .restarts and .failures say whether the
 * load loaded (metrics_load_shortfall()), not how good a kernel is. */
static const struct metrics_name load_names[] = {
    {"load.*", "none", false},
};

const struct metrics_name *metrics_load_name(const char *metric)
{
	return metrics_name_find(load_names, ELEMENTSOF(load_names), metric);
}

int metrics_load(const struct metrics_plugin *p, json_object *load, json_object *workload_spec,
		 json_object **ret_metrics, json_object **ret_details, struct sl_error *err)
{
	struct load_counts c;
	int r = load_counts(load, &c, err);
	if (r < 0)
		return r;
	json_object *outs = json_member(load, "outputs"), *jsons = json_member(load, "json_files");
	size_t n = json_object_is_type(outs, json_type_array) ? json_object_array_length(outs) : 0;
	if (!json_object_is_type(outs, json_type_array) || n > LOAD_MAX_OUTPUTS ||
	    (jsons && (!json_object_is_type(jsons, json_type_array) ||
		       json_object_array_length(jsons) != n)))
		return error_set(
		    err, ERR_INVALID, 0,
		    "The load's 'outputs' must be an array of at most %d strings, with "
		    "'json_files' of the same length.",
		    LOAD_MAX_OUTPUTS);
	_cleanup_json_ json_object *sums = json_object_new_object();
	_cleanup_json_ json_object *last = NULL;
	int unparsed = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(outs, i);
		json_object *j = jsons ? json_object_array_get_idx(jsons, i) : NULL;
		if (!json_object_is_type(o, json_type_string))
			return error_set(err, ERR_INVALID, 0,
					 "The load's outputs[%zu] is not a string.", i);
		struct metrics_output out = {
		    .stdout_text = json_object_get_string(o),
		    .stdout_len = (size_t)json_object_get_string_len(o),
		    .json_text =
			json_object_is_type(j, json_type_string) ? json_object_get_string(j) : NULL,
		    .stderr_text = "",
		};
		json_object *m = NULL, *d = NULL;
		r = p->parse(&out, workload_spec, &m, &d, err);
		/* the last iteration may be the one the stop ended: hackbench
		 * exits 0 on SIGTERM without its Time: line */
		if (r < 0 && i + 1 == n && n > 1) {
			unparsed++;
			continue;
		}
		if (r < 0)
			return r;
		accumulate(sums, m);
		json_object_put(m);
		json_object_put(last);
		last = d;
	}
	_cleanup_json_ json_object *metrics = json_object_new_object();
	json_object_object_foreach(sums, name, acc)
	{
		double s = json_object_get_double(json_object_array_get_idx(acc, 0));
		int k = json_object_get_int(json_object_array_get_idx(acc, 1));
		json_object_object_add(metrics, name, metrics_number(s / k));
	}
	bool ok = false;
	json_object *payload = json_object_new_object();
	json_object_object_add(payload, "load", json_object_get(load));
	double frac = metrics_load_cpu_fraction(payload, &ok);
	json_object_put(payload);
	if (ok)
		json_object_object_add(metrics, "load.cpu_fraction", metrics_number(frac));
	json_object_object_add(metrics, "load.iterations", json_object_new_int64(c.completed));
	json_object_object_add(metrics, "load.restarts",
			       json_object_new_int64(c.starts > 0 ? c.starts - 1 : 0));
	json_object_object_add(metrics, "load.failures", json_object_new_int64(c.failures));
	json_object *details = last ? TAKE_PTR(last) : json_object_new_object();
	json_object_object_add(details, "load_iterations_parsed",
			       json_object_new_int64((int64_t)n - unparsed));
	json_object_object_add(details, "load_cpu_s", metrics_number((double)c.cpu_us / 1e6));
	json_object_object_add(details, "load_window_s", metrics_number((double)c.window_ms / 1e3));
	json_object_object_add(details, "load_cpus", json_object_new_int64(c.cpus));
	*ret_metrics = TAKE_PTR(metrics);
	*ret_details = details;
	return 0;
}
