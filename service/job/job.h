/* A job: the user's spec, validated against results-schema/job.schema.json,
 * plus the checks a schema cannot express (references between variants and
 * kernels, the CI shorthand, limits), and its expansion into the form that is
 * run and stored ("the spec as it was run").
 *
 * Patches and config fragments in a spec are one of:
 *   {"series": "linux-6.1"}            the built-in series under guest-kernel/
 *   {"path": "fix.patch"}              a file relative to the job file (CLI only)
 *   {"name": "fix.patch", "content": "..."}   inline (what the service accepts)
 */
#pragma once

#include <stdbool.h>
#include "util/error.h"

enum job_origin {
	JOB_ORIGIN_CLI,	    /* local files may be named, relative to base_dir */
	JOB_ORIGIN_SERVICE, /* untrusted: no local paths, only built-ins and inline content */
};

struct job_limits {
	int max_vcpus;		/* 64 */
	int max_repeat;		/* 50 */
	int max_patches;	/* 200 */
	size_t max_patch_bytes; /* 4 MiB each */
	int max_guest_seconds;	/* total guest time budget per job (repeat x variants x timeouts) */
};

/* The defaults above. */
const struct job_limits *job_default_limits(void);

/* Validates spec (borrowed) and returns, in *ret_expanded, a new reference to
 * the expanded spec: shorthand expanded, defaults filled in. On failure err
 * names the JSON path and the reason. base_dir is used only for
 * JOB_ORIGIN_CLI paths. */
int job_expand(json_object *spec, enum job_origin origin, const char *base_dir,
	       const struct job_limits *limits, json_object **ret_expanded, struct sl_error *err);
