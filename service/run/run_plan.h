/* The agent's plan for one run (docs/contracts.md section 1), built from the
 * typed job and one variant. Pure: no I/O, unit-tested. */
#pragma once

#include <stdbool.h>
#include "job/job.h"
#include "util/error.h"

/* Guest path of a tool's binary, or NULL for an unknown tool. */
const char *plan_tool_path(const char *tool);

/* Builds the plan for the variant of that name in job (borrowed) into *ret
 * (new reference). Workload i writes its rt-tests JSON to /tmp/w<i>.json.
 * Errors: no such variant (ERR_INTERNAL), an unknown tool (ERR_INVALID). */
int plan_build(const struct job *job, const char *variant, const char *run_id, json_object **ret,
	       struct sl_error *err);

/* The run's deadline in seconds: workload timeouts plus a boot allowance
 * that is larger under TCG. */
int plan_deadline_s(json_object *plan, bool tcg);
