/* The metrics plug-in for `perf bench sched messaging|pipe` (the workload
 * perf-bench-sched, Debian's linux-perf), from its default output format:
 *
 *   # Running 'sched/pipe' benchmark:
 *   # Executed 20000 pipe operations between two processes
 *
 *        Total time: 0.362 [sec]
 *
 *         18.103200 usecs/op
 *             55238 ops/sec
 *
 *   # Running 'sched/messaging' benchmark:
 *   # 20 sender and receiver processes per group
 *   # 2 groups == 80 processes run
 *
 *        Total time: 0.409 [sec]
 *
 * Metrics: time_s (lower is better) for both; pipe adds usec_per_op (lower)
 * and ops_per_s (higher). details: the benchmark, processes or threads, and
 * the counts the header lines give. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"

#define PB_MAX_COUNT 1000000000000UL /* operations, groups or tasks: absurd above */

struct pb_state {
	int n_running, n_time, n_usec, n_ops;
	char bench[16]; /* "messaging" or "pipe" */
	double time_s, usec_per_op, ops_per_s;
	char mode[16]; /* "processes" or "threads" */
	unsigned long operations, per_group, groups, tasks;
	bool have_operations, have_per_group, have_groups;
};

/* The line without its leading blanks, as a C string in buf (NULL when it
 * does not fit: no line perf prints is that long). */
static const char *pb_trim(const char *line, size_t len, char *buf, size_t cap)
{
	while (len > 0 && (*line == ' ' || *line == '\t'))
		line++, len--;
	if (len >= cap)
		return NULL;
	memcpy(buf, line, len);
	buf[len] = '\0';
	return buf;
}

/* The number before suffix at the end of s (e.g. "18.103200 usecs/op"):
 * 1 when s has that form, 0 when not, -1 when the number is not one. */
static int pb_number_before(const char *s, const char *suffix, double *ret)
{
	size_t n = strlen(s), k = strlen(suffix);
	if (n <= k || strcmp(s + n - k, suffix) != 0)
		return 0;
	return metrics_parse_nonneg(s, n - k, ret) < 0 ? -1 : 1;
}

static bool pb_mode_ok(const char *mode)
{
	return strcmp(mode, "processes") == 0 || strcmp(mode, "threads") == 0;
}

static int pb_line(const char *line, size_t len, void *ctx)
{
	struct pb_state *st = ctx;
	char buf[160], word[16], tail;
	unsigned long a, b;
	const char *s = pb_trim(line, len, buf, sizeof(buf));
	if (!s)
		return 0;
	if (sscanf(s, "# Running 'sched/%15[a-z]' benchmark%c", word, &tail) == 2 && tail == ':') {
		st->n_running++;
		snprintf(st->bench, sizeof(st->bench), "%s", word);
		return 0;
	}
	if (strncmp(s, "Total time: ", 12) == 0) {
		st->n_time++;
		int r = pb_number_before(s + 12, " [sec]", &st->time_s);
		return r == 1 ? 0 : 1;
	}
	int r = pb_number_before(s, " usecs/op", &st->usec_per_op);
	if (r != 0) {
		st->n_usec++;
		return r == 1 ? 0 : 1;
	}
	r = pb_number_before(s, " ops/sec", &st->ops_per_s);
	if (r != 0) {
		st->n_ops++;
		return r == 1 ? 0 : 1;
	}
	if (sscanf(s, "# Executed %lu pipe operations between two %15s%c", &a, word, &tail) == 2 &&
	    a <= PB_MAX_COUNT && pb_mode_ok(word)) {
		st->operations = a, st->have_operations = true;
		snprintf(st->mode, sizeof(st->mode), "%s", word);
	} else if (sscanf(s, "# %lu sender and receiver %15s per grou%c", &a, word, &tail) == 3 &&
		   tail == 'p' && a <= PB_MAX_COUNT && pb_mode_ok(word)) {
		st->per_group = a, st->have_per_group = true;
		snprintf(st->mode, sizeof(st->mode), "%s", word);
	} else if (sscanf(s, "# %lu groups == %lu %15s ru%c", &a, &b, word, &tail) == 4 &&
		   tail == 'n' && a <= PB_MAX_COUNT && b <= PB_MAX_COUNT && pb_mode_ok(word)) {
		st->groups = a, st->tasks = b, st->have_groups = true;
	}
	return 0;
}

int metrics_perf_bench_sched(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
			     json_object **ret_details, struct sl_error *err)
{
	struct pb_state st = {0};
	int r =
	    metrics_each_line(stdout_text, stdout_len, "perf bench's output", pb_line, &st, err);
	if (r == 1)
		return error_set(err, ERR_INVALID, 0,
				 "perf bench's 'Total time', 'usecs/op' or 'ops/sec' line does not "
				 "hold a number.");
	if (r < 0)
		return r;
	if (st.n_running != 1 ||
	    (strcmp(st.bench, "messaging") != 0 && strcmp(st.bench, "pipe") != 0))
		return error_set(err, ERR_INVALID, 0,
				 "perf bench's output does not name one benchmark, "
				 "sched/messaging or sched/pipe.");
	if (st.n_time != 1)
		return error_set(err, ERR_INVALID, 0,
				 "perf bench's output has %d 'Total time' lines; one was expected.",
				 st.n_time);
	if (st.n_usec > 1 || st.n_ops > 1)
		return error_set(err, ERR_INVALID, 0,
				 "perf bench's output repeats its 'usecs/op' or 'ops/sec' line.");
	if (st.time_s > 1e6 || st.usec_per_op > 1e12 || st.ops_per_s > 1e12)
		return error_set(err, ERR_INVALID, 0,
				 "perf bench reported %.0f s (or a rate) that is absurd.",
				 st.time_s);
	_cleanup_json_ json_object *m = json_object_new_object();
	_cleanup_json_ json_object *d = json_object_new_object();
	json_object_object_add(m, "time_s", metrics_number(st.time_s));
	json_object_object_add(d, "benchmark", json_object_new_string(st.bench));
	bool pipe = strcmp(st.bench, "pipe") == 0;
	if (pipe && st.n_usec == 1)
		json_object_object_add(m, "usec_per_op", metrics_number(st.usec_per_op));
	if (pipe && st.n_ops == 1)
		json_object_object_add(m, "ops_per_s", metrics_number(st.ops_per_s));
	if (st.mode[0])
		json_object_object_add(d, "mode", json_object_new_string(st.mode));
	if (pipe && st.have_operations)
		json_object_object_add(d, "operations",
				       json_object_new_int64((int64_t)st.operations));
	if (!pipe && st.have_per_group)
		json_object_object_add(d, "senders_per_group",
				       json_object_new_int64((int64_t)st.per_group));
	if (!pipe && st.have_groups) {
		json_object_object_add(d, "groups", json_object_new_int64((int64_t)st.groups));
		json_object_object_add(d, "tasks", json_object_new_int64((int64_t)st.tasks));
	}
	*ret_metrics = TAKE_PTR(m);
	*ret_details = TAKE_PTR(d);
	return 0;
}

static int perf_bench_parse(const struct metrics_output *out, json_object *workload_spec,
			    json_object **ret_metrics, json_object **ret_details,
			    struct sl_error *err)
{
	(void)workload_spec;
	return metrics_perf_bench_sched(out->stdout_text, out->stdout_len, ret_metrics, ret_details,
					err);
}

static const struct metrics_name perf_bench_names[] = {
    {"time_s", "lower", false},
    {"usec_per_op", "lower", false},
    {"ops_per_s", "higher", false},
};

const struct metrics_plugin metrics_plugin_perf_bench_sched = {
    .tool = "perf-bench-sched",
    METRICS_NAMES(perf_bench_names),
    .parse = perf_bench_parse,
};
