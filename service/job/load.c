/* Loads in a job; see load.h. */
#include <stdio.h>
#include <string.h>

#include "job/job-internal.h"
#include "job/load.h"
#include "util/macro.h"

/* Tools that can run as a load: they keep CPUs busy and report a
 * throughput (share reports only its hogs' split). */
static const char *const load_tools[] = {"hackbench", "stress-ng", "perf-bench-sched", "share",
					 "burn"};

bool job_workload_is_load(json_object *w)
{
	json_object *v = json_member(w, "load");
	return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* Whether args hold "--seconds 0" or "--seconds=0" (burn's "until stopped"). */
static bool burn_unbounded(json_object *args)
{
	size_t n = json_object_is_type(args, json_type_array) ? json_object_array_length(args) : 0;
	bool bounded = false;
	for (size_t i = 0; i < n; i++) {
		const char *a = json_object_get_string(json_object_array_get_idx(args, i));
		const char *v = NULL;
		if (a && strcmp(a, "--seconds") == 0 && i + 1 < n)
			v = json_object_get_string(json_object_array_get_idx(args, i + 1));
		else if (a && strncmp(a, "--seconds=", 10) == 0)
			v = a + 10;
		if (v)
			bounded = strcmp(v, "0") != 0;
	}
	return !bounded;
}

int job_loads_expand(json_object *workloads, struct sl_error *err)
{
	size_t n = json_object_array_length(workloads), loads = 0;
	char path[128];

	for (size_t i = 0; i < n; i++) {
		json_object *w = json_object_array_get_idx(workloads, i);
		const char *tool = json_member_string(w, "tool");
		if (!job_workload_is_load(w)) {
			snprintf(path, sizeof(path), "$.workloads[%zu].args", i);
			if (tool && strcmp(tool, "burn") == 0 &&
			    burn_unbounded(json_member(w, "args")))
				return error_set_path(
				    err, ERR_INVALID, path,
				    "burn runs until it is stopped without "
				    "--seconds N (N > 0); only a load is stopped.");
			snprintf(path, sizeof(path), "$.workloads[%zu].min_cpu", i);
			if (json_member(w, "min_cpu"))
				return error_set_path(err, ERR_INVALID, path,
						      "min_cpu is a load's floor; this workload is "
						      "not a load.");
			continue;
		}
		loads++;
		bool ok = false;
		for (size_t t = 0; tool && t < ELEMENTSOF(load_tools); t++)
			ok |= strcmp(tool, load_tools[t]) == 0;
		snprintf(path, sizeof(path), "$.workloads[%zu].load", i);
		if (!ok)
			return error_set_path(
			    err, ERR_INVALID, path,
			    "The tool '%s' cannot be a load; a load is hackbench, "
			    "stress-ng, perf-bench-sched, share or burn.",
			    tool ? tool : "");
	}
	if (loads == 0)
		return 0;
	if (loads == n)
		return error_set_path(err, ERR_INVALID, "$.workloads",
				      "Every workload is a load; a job needs at least one measured "
				      "workload for the loads to run beside.");
	for (size_t i = 0; i < n; i++) {
		json_object *w = json_object_array_get_idx(workloads, i);
		if (!job_workload_is_load(w) || json_member(w, "min_cpu"))
			continue;
		char text[16];
		snprintf(text, sizeof(text), "%.3g", 0.5 / (double)loads);
		json_object_object_add(w, "min_cpu",
				       json_object_new_double_s(0.5 / (double)loads, text));
	}
	return 0;
}
