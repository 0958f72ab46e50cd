/* The metrics plug-in for rt-tests' hackbench: groups of senders and
 * receivers pass messages over pipes (or sockets); the tool prints the
 * wall time of the whole exchange:
 *
 *   Running in threaded mode with 2 groups using 10 file descriptors each (== 20 tasks)
 *   Each sender will pass 100 messages of 100 bytes
 *   Time: 0.166
 *
 * Metric: time_s (lower is better), and messages_per_s (higher) when the
 * header lines give the message count: groups x fds senders, each sending
 * loops messages to each of fds receivers. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"

struct hb_state {
	int n_time;
	double time_s;
	bool have_mode, have_loops;
	char mode[16];
	unsigned long groups, fds, tasks, loops, bytes;
};

static bool starts(const char *line, size_t len, const char *prefix, size_t *ret_plen)
{
	size_t n = strlen(prefix);
	*ret_plen = n;
	return len >= n && memcmp(line, prefix, n) == 0;
}

static int hb_line(const char *line, size_t len, void *ctx)
{
	struct hb_state *st = ctx;
	char buf[160];
	size_t pl;
	if (starts(line, len, "Time: ", &pl)) {
		st->n_time++;
		if (metrics_parse_nonneg(line + pl, len - pl, &st->time_s) < 0)
			return 1; /* not a number */
		return 0;
	}
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, line, len);
	buf[len] = '\0';
	char mode[16], tail;
	unsigned long g, f, t, l, b;
	if (sscanf(buf,
		   "Running in %15s mode with %lu groups using %lu file descriptors each "
		   "(== %lu tasks%c",
		   mode, &g, &f, &t, &tail) == 5 &&
	    tail == ')') {
		/* "file descriptors" counts both ends: fds senders and fds
		 * receivers per group (-f 10 prints 20) */
		snprintf(st->mode, sizeof(st->mode), "%s", mode);
		st->groups = g, st->fds = f / 2, st->tasks = t;
		st->have_mode = g > 0 && g <= 100000 && f >= 2 && f <= 100000 && t <= 100000000;
	} else if (sscanf(buf, "Each sender will pass %lu messages of %lu bytes%c", &l, &b,
			  &tail) == 2) {
		st->loops = l, st->bytes = b;
		st->have_loops = l <= 1000000000;
	}
	return 0;
}

int metrics_hackbench(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
		      json_object **ret_details, struct sl_error *err)
{
	struct hb_state st = {0};
	int r = metrics_each_line(stdout_text, stdout_len, "hackbench output", hb_line, &st, err);
	if (r == 1)
		return error_set(err, ERR_INVALID, 0,
				 "hackbench's 'Time:' line does not hold a number of seconds.");
	if (r < 0)
		return r;
	if (st.n_time != 1)
		return error_set(err, ERR_INVALID, 0,
				 "hackbench's output has %d 'Time:' lines; one was expected.",
				 st.n_time);
	if (st.time_s > 1e6)
		return error_set(err, ERR_INVALID, 0, "hackbench reported %.0f s, which is absurd.",
				 st.time_s);
	_cleanup_json_ json_object *m = json_object_new_object();
	_cleanup_json_ json_object *d = json_object_new_object();
	json_object_object_add(m, "time_s", metrics_number(st.time_s));
	if (st.have_mode) {
		json_object_object_add(d, "mode", json_object_new_string(st.mode));
		json_object_object_add(d, "groups", json_object_new_int64((int64_t)st.groups));
		json_object_object_add(d, "fds", json_object_new_int64((int64_t)st.fds));
		json_object_object_add(d, "tasks", json_object_new_int64((int64_t)st.tasks));
	}
	if (st.have_loops) {
		json_object_object_add(d, "loops", json_object_new_int64((int64_t)st.loops));
		json_object_object_add(d, "message_bytes",
				       json_object_new_int64((int64_t)st.bytes));
	}
	/* a load's throughput (docs/workloads.md "Loads"): each sender's loops
	 * per second, the inverse of hackbench's seconds per loop */
	if (st.have_loops && st.time_s > 0)
		json_object_object_add(m, "loops_per_s",
				       metrics_number((double)st.loops / st.time_s));
	if (st.have_mode && st.have_loops && st.time_s > 0) {
		double msgs =
		    (double)st.groups * (double)st.fds * (double)st.fds * (double)st.loops;
		json_object_object_add(d, "messages", metrics_number(msgs));
		json_object_object_add(m, "messages_per_s", metrics_number(msgs / st.time_s));
	}
	*ret_metrics = TAKE_PTR(m);
	*ret_details = TAKE_PTR(d);
	return 0;
}

static int hackbench_parse(const struct metrics_output *out, json_object *workload_spec,
			   json_object **ret_metrics, json_object **ret_details,
			   struct sl_error *err)
{
	(void)workload_spec;
	return metrics_hackbench(out->stdout_text, out->stdout_len, ret_metrics, ret_details, err);
}

static const struct metrics_name hackbench_names[] = {
    {"time_s", "lower", false},
    {"messages_per_s", "higher", false},
    {"loops_per_s", "higher", false}, /* under a load (load.c) */
};

/* Its loops per second is the default gate of hackbench as a load
 * (job/suite.c). time_s, the gate of hackbench measured, keeps the 25 %
 * default until an A/A on a quiet host shows its spread (docs/workloads.md). */
static void hackbench_threshold(const char *metric, struct metric_threshold *t)
{
	metrics_throughput_gate(metric, "loops_per_s", true, t);
}

const struct metrics_plugin metrics_plugin_hackbench = {
    .tool = "hackbench",
    METRICS_NAMES(hackbench_names),
    .parse = hackbench_parse,
    .threshold = hackbench_threshold,
};
