/* One run's record in a result (docs/contracts.md section 6), filled from
 * the agent's frames. Pure JSON in, JSON out: unit-tested without guests. */
#pragma once

#include "util/error.h"

/* Fills run (borrowed; already holding "status" from the guest) from frames
 * (array of {"kind": "hello"|"workload"|"summary", "payload": {...}}):
 * "workloads" with per-workload status and metrics, "features_applied", and
 * "agent_errors". An ok run becomes "error" with a "reason" when the summary
 * is missing, the agent reports an error (e.g. a feature the kernel does not
 * know), a workload is missing, failed, timed out, or its output does not
 * parse. spec is the expanded job (its workloads give tools and options). */
void run_record_fill(json_object *run, json_object *spec, json_object *frames);

/* Sets run.status = status and run.reason = reason unless the run already
 * failed (the first failure is the one reported). */
void run_record_fail(json_object *run, const char *status, const char *reason);
