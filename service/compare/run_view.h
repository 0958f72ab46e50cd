/* Reading a run record (result.schema.json #/$defs/run) the way the
 * comparison and the calibration both need it. */
#pragma once

#include <json-c/json.h>

/* The entry of run's workloads[] whose name is name (borrowed), or NULL
 * when run has no such workload or no workloads array. */
json_object *run_view_workload(json_object *run, const char *name);
