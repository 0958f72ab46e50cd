/* The metrics plug-in for schedlab's own workloads (share, slice, wakeup): the tool
 * prints one JSON object with a "metrics" object of {name: number} and an
 * optional "details" object. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/json_get.h"

int metrics_own_tool(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
		     json_object **ret_details, struct sl_error *err)
{
	/* The tool prints one JSON object; tolerate a banner before it by
	 * taking the text from the last line that starts with '{'. */
	size_t start = 0;
	while (start < stdout_len && strchr(" \t\r\n", stdout_text[start]))
		start++;
	if (start < stdout_len && stdout_text[start] != '{') {
		for (size_t i = stdout_len; i > 0; i--)
			if (stdout_text[i - 1] == '\n' && i < stdout_len && stdout_text[i] == '{') {
				start = i;
				break;
			}
	}
	if (start >= stdout_len)
		return error_set(err, ERR_INVALID, 0, "The workload printed no JSON object.");

	_cleanup_json_ json_object *doc = NULL;
	int r = metrics_parse_json(stdout_text + start, stdout_len - start, "workload's output",
				   &doc, err);
	if (r < 0)
		return r;
	json_object *m = json_member(doc, "metrics");
	if (!json_object_is_type(m, json_type_object))
		return error_set(err, ERR_INVALID, 0,
				 "The workload's output has no \"metrics\" object.");
	if (json_object_object_length(m) > METRICS_MAX_COUNT)
		return error_set(err, ERR_INVALID, 0,
				 "The workload reported %d metrics; at most %d are accepted.",
				 json_object_object_length(m), METRICS_MAX_COUNT);

	_cleanup_json_ json_object *metrics = json_object_new_object();
	json_object_object_foreach(m, name, val)
	{
		if (!metrics_name_ok(name))
			return error_set(err, ERR_INVALID, 0,
					 "The workload reported a metric named '%.64s', which is "
					 "not of the form [a-z0-9_.]{1,128}.",
					 name);
		bool num = json_object_is_type(val, json_type_int) ||
			   json_object_is_type(val, json_type_double);
		if (!num || !isfinite(json_object_get_double(val)))
			return error_set(err, ERR_INVALID, 0,
					 "The workload's metric '%s' is not a finite number.",
					 name);
		json_object_object_add(metrics, name,
				       json_object_is_type(val, json_type_int)
					   ? json_object_new_int64(json_object_get_int64(val))
					   : metrics_number(json_object_get_double(val)));
	}
	json_object *details = NULL;
	json_object *d = json_member(doc, "details");
	size_t dlen = 0;
	if (json_object_is_type(d, json_type_object))
		json_object_to_json_string_length(d, JSON_C_TO_STRING_PLAIN, &dlen);
	if (dlen > METRICS_MAX_DETAILS_BYTES) {
		/* a guest's JSON goes into the stored result: only bounded */
		char note[128];
		snprintf(note, sizeof(note),
			 "the tool's details were %zu bytes, over the limit of %d", dlen,
			 METRICS_MAX_DETAILS_BYTES);
		details = json_object_new_object();
		json_object_object_add(details, "dropped", json_object_new_string(note));
	} else if (dlen > 0) {
		details = json_object_get(d);
	} else {
		details = json_object_new_object();
	}
	*ret_metrics = TAKE_PTR(metrics);
	*ret_details = details;
	return 0;
}

static int own_tool_parse(const struct metrics_output *out, json_object *workload_spec,
			  json_object **ret_metrics, json_object **ret_details,
			  struct sl_error *err)
{
	(void)workload_spec;
	return metrics_own_tool(out->stdout_text, out->stdout_len, ret_metrics, ret_details, err);
}

/* share (workloads/share.c): each uid's CPU fraction describes the split
 * (none); share_error, the largest distance of one from its fair share, is
 * better lower. */
static const struct metrics_name share_names[] = {
    {"cpu_fraction.*", "none", false},
    {"share_error", "lower", false},
};

/* A CPU fraction and share's error (the largest distance of one from its
 * fair share) are fractions of 1 whatever the baseline: 5 points of a CPU,
 * not a share of a median that may be near 0. */
static void share_threshold(const char *metric, struct metric_threshold *t)
{
	if (strncmp(metric, "cpu_fraction.", 13) == 0 || strcmp(metric, "share_error") == 0)
		*t = (struct metric_threshold){.floor_abs = 0.05, .rel = 0};
}

const struct metrics_plugin metrics_plugin_share = {
    .tool = "share",
    METRICS_NAMES(share_names),
    .parse = own_tool_parse,
    .threshold = share_threshold,
};

/* slice (workloads/slice.c): run segments, the waits between them and how
 * far a segment overran the slice the scheduler predicted, all better
 * lower; segments counts them (none). */
static const struct metrics_name slice_names[] = {
    {"slice_us.mean", "lower", false},	      {"slice_us.p99", "lower", true},
    {"slice_us.max", "lower", true},	      {"wait_us.p99", "lower", true},
    {"slice_overrun_us.p50", "lower", false}, {"slice_overrun_us.mean", "lower", false},
    {"slice_overrun_us.p99", "lower", true},  {"segments", "none", false},
};

/* Its mean overrun is a default gate's latency metric. */
static void slice_threshold(const char *metric, struct metric_threshold *t)
{
	metrics_latency_gate(metric, "slice_overrun_us.mean", NULL, t);
}

const struct metrics_plugin metrics_plugin_slice = {
    .tool = "slice",
    METRICS_NAMES(slice_names),
    .parse = own_tool_parse,
    .threshold = slice_threshold,
};

/* wakeup (workloads/wakeup.c): latencies better lower, requests_per_s its
 * throughput. p90 is no tail: its default threshold stayed 25 %. */
static const struct metrics_name wakeup_names[] = {
    {"wakeup_latency_us.p50", "lower", false},	{"wakeup_latency_us.p90", "lower", false},
    {"wakeup_latency_us.p99", "lower", true},	{"wakeup_latency_us.p99.9", "lower", true},
    {"request_latency_us.p50", "lower", false}, {"request_latency_us.p99", "lower", true},
    {"requests_per_s", "higher", false},
};

/* Its median wake-up latency and its throughput are default gates. */
static void wakeup_threshold(const char *metric, struct metric_threshold *t)
{
	metrics_latency_gate(metric, "wakeup_latency_us.p50", NULL, t);
	metrics_throughput_gate(metric, "requests_per_s", false, t);
}

const struct metrics_plugin metrics_plugin_wakeup = {
    .tool = "wakeup",
    METRICS_NAMES(wakeup_names),
    .parse = own_tool_parse,
    .threshold = wakeup_threshold,
};

/* burn (workloads/burn.c): a CPU (+ tmpfs I/O) load; ops_per_s is its
 * throughput, cpu_fraction how much of its threads' CPUs it got (none). */
static const struct metrics_name burn_names[] = {
    {"ops_per_s", "higher", false},
    {"cpu_fraction", "none", false},
};

/* Its throughput is the default gate of burn as a load. */
static void burn_threshold(const char *metric, struct metric_threshold *t)
{
	metrics_throughput_gate(metric, "ops_per_s", true, t);
}

const struct metrics_plugin metrics_plugin_burn = {
    .tool = "burn",
    METRICS_NAMES(burn_names),
    .parse = own_tool_parse,
    .threshold = burn_threshold,
};
