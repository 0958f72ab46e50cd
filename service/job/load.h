/* Loads in a job (docs/workloads.md "Loads"): which tools can be one, the
 * floor on their CPU use, and their default gates. */
#pragma once

#include <stdbool.h>
#include <json-c/json.h>

#include "util/error.h"

/* Whether workload w (a spec entry) is a load. */
bool job_workload_is_load(json_object *w);

/* Checks the loads among the expanded workloads (an array, edited in
 * place): each is a tool that can be one, burn runs for a bounded time
 * unless it is a load, at least one workload is not a load, and each load
 * without min_cpu gets the default, 0.5 / the number of loads. 0 or
 * -EINVAL with err naming the field. */
int job_loads_expand(json_object *workloads, struct sl_error *err);
