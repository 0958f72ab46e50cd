/* The metrics plug-in for rt-tests' cyclicdeadline: SCHED_DEADLINE threads
 * (runtime 60 % of the period, periods interval, interval + step, ...) wake
 * each period and measure how late they ran against the period's start.
 * Its --json file holds per thread {"cycles", "min", "max", "avg"} in
 * microseconds:
 *
 *   "num_threads": 2, "thread": {"0": {"cycles": 2008, "min": 25,
 *   "max": 993720, "avg": 446022.52}, "1": {...}}
 *
 * Metrics: latency_us.min (the least of the threads' minimums), latency_us.avg
 * (the cycle-weighted mean of their averages), latency_us.max (the largest
 * maximum), all lower is better, and cycles (none). cyclicdeadline counts no
 * overruns (a thread that cannot finish its runtime in its period falls
 * behind, which shows as a latency that grows over the run and so as a
 * large max and avg). */
#include <inttypes.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/json_get.h"

#define CD_MAX_LATENCY_US 1e12

/* A number member within [0, CD_MAX_LATENCY_US]: a count or a latency. */
static bool bounded_member(json_object *o, const char *key, double *ret)
{
	return json_member_number(o, key, ret) && *ret >= 0 && *ret <= CD_MAX_LATENCY_US;
}

int metrics_cyclicdeadline(const char *json_text, json_object **ret_metrics,
			   json_object **ret_details, struct sl_error *err)
{
	if (!json_text)
		return error_set(err, ERR_INVALID, 0, "cyclicdeadline wrote no JSON file.");
	_cleanup_json_ json_object *doc = NULL;
	int r =
	    metrics_parse_json(json_text, strlen(json_text), "cyclicdeadline JSON file", &doc, err);
	if (r < 0)
		return r;
	json_object *threads = json_member(doc, "thread");
	json_object *nt = json_member(doc, "num_threads");
	if (!json_object_is_type(threads, json_type_object) ||
	    !json_object_is_type(nt, json_type_int))
		return error_set(err, ERR_INVALID, 0,
				 "cyclicdeadline's JSON file has no \"thread\" object and "
				 "\"num_threads\".");
	int n = json_object_object_length(threads);
	if (n < 1 || n > METRICS_MAX_THREADS || json_object_get_int64(nt) != n)
		return error_set(err, ERR_INVALID, 0,
				 "cyclicdeadline's JSON file reports %d threads (num_threads "
				 "%" PRId64 "); 1 to %d matching ones are accepted.",
				 n, json_object_get_int64(nt), METRICS_MAX_THREADS);
	double min = INFINITY, max = 0, sum = 0, cycles = 0;
	_cleanup_json_ json_object *per = json_object_new_object();
	json_object_object_foreach(threads, id, t)
	{
		double c, tmin, tmax, tavg;
		char idc[16];
		if (strlen(id) > 3 || strspn(id, "0123456789") != strlen(id) ||
		    !bounded_member(t, "cycles", &c) || !bounded_member(t, "min", &tmin) ||
		    !bounded_member(t, "max", &tmax) || !bounded_member(t, "avg", &tavg) ||
		    c != floor(c))
			return error_set(err, ERR_INVALID, 0,
					 "cyclicdeadline's thread '%.8s' lacks numeric cycles, "
					 "min, max and avg.",
					 id);
		snprintf(idc, sizeof(idc), "%s", id);
		json_object *o = json_object_new_object();
		json_object_object_add(o, "cycles", metrics_number(c));
		json_object_object_add(o, "min_us", metrics_number(tmin));
		json_object_object_add(o, "avg_us", metrics_number(tavg));
		json_object_object_add(o, "max_us", metrics_number(tmax));
		json_object_object_add(per, idc, o);
		min = fmin(min, tmin);
		max = fmax(max, tmax);
		sum += tavg * c;
		cycles += c;
	}
	if (cycles < 1)
		return error_set(err, ERR_INVALID, 0, "cyclicdeadline's threads ran no cycles.");
	_cleanup_json_ json_object *m = json_object_new_object();
	json_object_object_add(m, "latency_us.min", metrics_number(min));
	json_object_object_add(m, "latency_us.avg", metrics_number(sum / cycles));
	json_object_object_add(m, "latency_us.max", metrics_number(max));
	json_object_object_add(m, "cycles", metrics_number(cycles));
	_cleanup_json_ json_object *d = json_object_new_object();
	json_object_object_add(d, "threads", TAKE_PTR(per));
	*ret_metrics = TAKE_PTR(m);
	*ret_details = TAKE_PTR(d);
	return 0;
}

static int cyclicdeadline_parse(const struct metrics_output *out, json_object *workload_spec,
				json_object **ret_metrics, json_object **ret_details,
				struct sl_error *err)
{
	(void)workload_spec;
	return metrics_cyclicdeadline(out->json_text, ret_metrics, ret_details, err);
}

/* Its latencies are better lower; cycles counts how many it measured. */
static const struct metrics_name cyclicdeadline_names[] = {
    {"latency_us.min", "lower", false},
    {"latency_us.avg", "lower", false},
    {"latency_us.max", "lower", true},
    {"cycles", "none", false},
};

/* cyclicdeadline ends with "FATAL: <why>" on stderr when it cannot run: its
 * calibration of the work loop missed the runtime ("Failed to perform task
 * within runtime: Missed by 6019 us": under TCG a vCPU stalled by the host
 * does this now and then), or runtimes under 2 ms without HRTICK. */
static bool cyclicdeadline_failure_reason(const struct metrics_output *out, char *buf, size_t len)
{
	const char *f = out->stderr_text ? strstr(out->stderr_text, "FATAL: ") : NULL;
	if (!f)
		return false;
	f += 7;
	char why[160];
	size_t n = 0;
	for (; f[n] && f[n] != '\n' && n + 1 < sizeof(why); n++)
		why[n] = f[n] >= ' ' && f[n] < 0x7f ? f[n] : '?';
	why[n] = '\0';
	snprintf(buf, len, "cyclicdeadline stopped: %s", why);
	return true;
}

/* Its latency_us.avg is read like cyclictest's, a default gate's metric
 * (it has no histogram, so no p99). */
static void cyclicdeadline_threshold(const char *metric, struct metric_threshold *t)
{
	metrics_latency_gate(metric, "latency_us.avg", NULL, t);
}

const struct metrics_plugin metrics_plugin_cyclicdeadline = {
    .tool = "cyclicdeadline",
    METRICS_NAMES(cyclicdeadline_names),
    .parse = cyclicdeadline_parse,
    .threshold = cyclicdeadline_threshold,
    .failure_reason = cyclicdeadline_failure_reason,
};
