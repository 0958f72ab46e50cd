/* The agent's plan for one run (docs/contracts.md section 1), built from the
 * typed job and one variant. Pure: no I/O, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "job/job.h"
#include "util/error.h"

/* Guest path of a tool's binary, or NULL for an unknown tool. */
const char *plan_tool_path(const char *tool);

/* The host programs the job's initramfs needs under /usr/bin: the default
 * rt-tests (initramfs_default_tools()) and the tools added on demand
 * (stress-ng) that job runs. Writes at most cap - 1 paths and a NULL to out
 * (static strings); returns how many. The host path is the guest path. */
size_t plan_initramfs_tools(const struct job *job, const char **out, size_t cap);

/* Builds the plan for the variant of that name in job (borrowed) into *ret
 * (new reference). Workload i writes its rt-tests JSON to /tmp/w<i>.json.
 * Errors: no such variant (ERR_INTERNAL), an unknown tool (ERR_INVALID). */
int plan_build(const struct job *job, const char *variant, const char *run_id, json_object **ret,
	       struct sl_error *err);

/* The run's deadline in seconds: workload timeouts plus a boot allowance
 * that is larger under TCG. */
int plan_deadline_s(json_object *plan, bool tcg);

/* The loader's path in the guest (absolute) for variant v with a sched_ext
 * scheduler: SCHED_EXT_GUEST_DIR/<kernel>/<scheduler> for an example of the
 * tree, SCHED_EXT_GUEST_DIR/<kernel>/<tag>/<NAME> for the user's own
 * (job/sched_ext_source.h: the tag keeps two versions of NAME apart). */
void plan_sched_ext_loader_path(const struct job_variant *v, char *buf, size_t len);
