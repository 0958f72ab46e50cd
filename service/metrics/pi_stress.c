/* The metrics plug-ins for rt-tests' priority-inheritance tests.
 *
 * pi_stress runs groups of three threads (low, medium, high SCHED_FIFO
 * priority) through a forced priority inversion in a loop; a PI mutex lets
 * the high thread through each time. Its --json file holds "inversion", the
 * inversions completed; stdout says "Total inversion performed: N". When a
 * group makes no progress for several report intervals its watchdog prints
 * "WATCHDOG triggered: group G is deadlocked!" and the test stops with a
 * failure: such a run fails with that reason (pi_stress_failure_reason).
 * Metric: inversions_completed (higher is better: with a fixed --duration, more
 * inversions completed means faster PI hand-offs).
 *
 * pip_stress forces one inversion between processes on one CPU and prints
 * "Successfully used priority inheritance to handle an inversion" or "No
 * inversion incurred" (the timing did not produce one). Metric:
 * inversion_handled, 1 or 0 (better direction none: 0 is no failure). A
 * kernel whose PI is broken leaves the high process blocked behind the
 * medium one: the run times out. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/json_get.h"

#define PI_MAX_INVERSIONS 1e15

struct pi_state {
	int n_total;
	double total;
	bool bad;
	double duration_s;
	bool have_duration;
};

static int pi_line(const char *line, size_t len, void *ctx)
{
	struct pi_state *st = ctx;
	static const char total[] = "Total inversion performed: ";
	static const char dur[] = "Test Duration: ";
	if (len >= sizeof(total) - 1 && memcmp(line, total, sizeof(total) - 1) == 0) {
		st->n_total++;
		if (metrics_parse_nonneg(line + sizeof(total) - 1, len - (sizeof(total) - 1),
					 &st->total) < 0)
			st->bad = true;
	} else if (len >= sizeof(dur) - 1 && len < 128 && memcmp(line, dur, sizeof(dur) - 1) == 0) {
		char buf[128];
		unsigned long d, h, m, s;
		char tail;
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (sscanf(buf, "Test Duration: %lu days, %lu hours, %lu minutes, %lu seconds%c",
			   &d, &h, &m, &s, &tail) == 4 &&
		    d < 100000 && h < 24 && m < 60 && s < 60) {
			st->duration_s = (double)(((d * 24 + h) * 60 + m) * 60 + s);
			st->have_duration = true;
		}
	}
	return 0;
}

int metrics_pi_stress(const char *stdout_text, size_t stdout_len, const char *json_text,
		      json_object **ret_metrics, json_object **ret_details, struct sl_error *err)
{
	struct pi_state st = {0};
	int r = metrics_each_line(stdout_text, stdout_len, "pi_stress output", pi_line, &st, err);
	if (r < 0)
		return r;
	double inversions;
	const char *source;
	if (json_text) {
		_cleanup_json_ json_object *doc = NULL;
		r = metrics_parse_json(json_text, strlen(json_text), "pi_stress JSON file", &doc,
				       err);
		if (r < 0)
			return r;
		json_object *inv = json_member(doc, "inversion");
		if (!json_object_is_type(inv, json_type_int) || json_object_get_int64(inv) < 0)
			return error_set(err, ERR_INVALID, 0,
					 "pi_stress's JSON file has no count of inversions "
					 "(\"inversion\").");
		inversions = (double)json_object_get_int64(inv);
		source = "json";
	} else {
		if (st.n_total != 1 || st.bad)
			return error_set(err, ERR_INVALID, 0,
					 "pi_stress wrote no JSON file and its output has no one "
					 "'Total inversion performed' line with a count.");
		inversions = st.total;
		source = "stdout";
	}
	if (inversions > PI_MAX_INVERSIONS)
		return error_set(err, ERR_INVALID, 0,
				 "pi_stress reported %.0f inversions, which is absurd.",
				 inversions);
	_cleanup_json_ json_object *m = json_object_new_object();
	_cleanup_json_ json_object *d = json_object_new_object();
	json_object_object_add(m, "inversions_completed", metrics_number(inversions));
	json_object_object_add(d, "source", json_object_new_string(source));
	if (st.have_duration)
		json_object_object_add(d, "duration_s", metrics_number(st.duration_s));
	*ret_metrics = TAKE_PTR(m);
	*ret_details = TAKE_PTR(d);
	return 0;
}

static int pi_stress_parse(const struct metrics_output *out, json_object *workload_spec,
			   json_object **ret_metrics, json_object **ret_details,
			   struct sl_error *err)
{
	(void)workload_spec;
	return metrics_pi_stress(out->stdout_text, out->stdout_len, out->json_text, ret_metrics,
				 ret_details, err);
}

static const struct metrics_name pi_stress_names[] = {
    {"inversions_completed", "higher", false},
};

/* The first "WATCHDOG triggered: group G is deadlocked!" in text, if any. */
static bool find_deadlock(const char *text, long *ret_group)
{
	const char *w = text ? strstr(text, "WATCHDOG triggered: group ") : NULL;
	if (!w)
		return false;
	char *end = NULL;
	long g = strtol(w + 26, &end, 10);
	*ret_group =
	    end && end != w + 26 && strncmp(end, " is deadlocked", 14) == 0 && g >= 0 ? g : -1;
	return true;
}

static bool pi_stress_failure_reason(const struct metrics_output *out, char *buf, size_t len)
{
	long g = -1;
	/* stdout is NUL-terminated by json-c; the watchdog writes to stderr */
	if (!find_deadlock(out->stderr_text, &g) && !find_deadlock(out->stdout_text, &g))
		return false;
	if (g >= 0)
		snprintf(buf, len,
			 "pi_stress found a deadlock: its watchdog saw inversion group %ld make "
			 "no progress (priority inheritance did not let the high thread run)",
			 g);
	else
		snprintf(buf, len, "pi_stress found a deadlock: its watchdog triggered");
	return true;
}

const struct metrics_plugin metrics_plugin_pi_stress = {
    .tool = "pi_stress",
    METRICS_NAMES(pi_stress_names),
    .parse = pi_stress_parse,
    .failure_reason = pi_stress_failure_reason,
};

struct pip_state {
	int handled, none;
};

static int pip_line(const char *line, size_t len, void *ctx)
{
	struct pip_state *st = ctx;
	static const char yes[] = "Successfully used priority inheritance to handle an inversion";
	static const char no[] = "No inversion incurred";
	if (len == sizeof(yes) - 1 && memcmp(line, yes, len) == 0)
		st->handled++;
	else if (len == sizeof(no) - 1 && memcmp(line, no, len) == 0)
		st->none++;
	return 0;
}

int metrics_pip_stress(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
		       json_object **ret_details, struct sl_error *err)
{
	struct pip_state st = {0};
	int r = metrics_each_line(stdout_text, stdout_len, "pip_stress output", pip_line, &st, err);
	if (r < 0)
		return r;
	if (st.handled + st.none != 1)
		return error_set(err, ERR_INVALID, 0,
				 "pip_stress's output does not say once whether priority "
				 "inheritance handled an inversion (%d verdict lines).",
				 st.handled + st.none);
	_cleanup_json_ json_object *m = json_object_new_object();
	json_object_object_add(m, "inversion_handled", json_object_new_int(st.handled));
	*ret_metrics = TAKE_PTR(m);
	*ret_details = json_object_new_object();
	return 0;
}

static int pip_stress_parse(const struct metrics_output *out, json_object *workload_spec,
			    json_object **ret_metrics, json_object **ret_details,
			    struct sl_error *err)
{
	(void)workload_spec;
	return metrics_pip_stress(out->stdout_text, out->stdout_len, ret_metrics, ret_details, err);
}

/* 1 or 0: a pass or fail of one run, not a quantity to improve. */
static const struct metrics_name pip_stress_names[] = {
    {"inversion_handled", "none", false},
};

const struct metrics_plugin metrics_plugin_pip_stress = {
    .tool = "pip_stress",
    METRICS_NAMES(pip_stress_names),
    .parse = pip_stress_parse,
};
