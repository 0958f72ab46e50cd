/* The arguments a job may pass to each workload tool (docs/workloads.md,
 * "Workload arguments"). A tool's arguments go to a program in the guest, so
 * for the tools that need it schedlab accepts only a known, bounded set of
 * options: every run ends (a duration or a count is required where the tool
 * would otherwise run forever), nothing waits on a terminal, nothing needs
 * what the guest kernel lacks (it has no networking, so hackbench must use
 * pipes), and the output file schedlab adds itself (--json, --yaml) cannot be
 * given twice. */
#pragma once

#include <stddef.h>

#include "util/error.h"

/* Checks args (an array of strings, borrowed; the schema has bounded it) for
 * tool. path is the workload's JSON path ("$.workloads[2]"); an error names
 * "<path>.args" and the argument. Tools without rules here (rt-migrate-test,
 * cyclictest, share, slice) accept any arguments. Returns 0 or -EINVAL with
 * err filled (ERR_INVALID). */
int workload_args_check(const char *tool, json_object *args, const char *path,
			struct sl_error *err);
