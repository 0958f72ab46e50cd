/* The payload of a workload frame (docs/contracts.md section 2): what one
 * workload (or load) did, its output and, on a schedstat kernel, the
 * counters around it. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/resource.h>

#include "agent/plan.h"
#include "agent/run.h"
#include "agent/taskstats.h"

/* /proc/schedstat before and after a workload (plan "schedstat"): at most
 * SCHEDSTAT_MAX bytes each, NULL when not asked for or unreadable. */
#define SCHEDSTAT_MAX (64 * 1024)
struct schedstat_snap {
	char *before, *after;
	size_t before_len, after_len;
	/* getrusage(RUSAGE_CHILDREN) before and after: the workload's tasks,
	 * each counted when reaped (by the workload, or by the agent as their
	 * subreaper), threads included */
	struct rusage ru_before, ru_after;
	bool ru;
	/* each of the workload's tasks as it exited (taskstats) */
	struct agent_taskstats_sum tasks;
	bool has_tasks;
};

/* /proc/schedstat under root into a malloc'd buffer, or NULL. */
void schedstat_read(const char *root, char **ret, size_t *ret_len);

json_object *strv_to_json(char *const *v, size_t n);

/* A JSON string of data cleaned to UTF-8, or NULL when data is NULL. */
json_object *string_or_null(const char *data, size_t len);

/* The workload frame's payload; keep caps the captured text (0: all). */
json_object *workload_json(size_t index, const struct plan_workload *w,
			   const struct run_result *res, const char *json_file, size_t json_len,
			   const char *error, size_t keep, const struct schedstat_snap *ss);
