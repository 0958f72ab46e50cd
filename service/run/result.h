/* The result document (results-schema/result.schema.json, docs/contracts.md):
 * what a job measured, assembled piece by piece as the runner gets there.
 * Keys come in the order a reader meets them: schema, job, kernels,
 * environment, order, variants (each with its runs), placement,
 * comparisons, verdict, verdict_reasons, started_at, finished_at. The runs
 * themselves are run_record.h's. Every function takes the result borrowed
 * and adds to it; none fails but result_compare(). */
#pragma once

#include "guest/guest.h"
#include "job/job.h"
#include "kernel/kbuild.h"
#include "run/run_key.h"
#include "util/error.h"

/* A new result {schema, job, kernels: {}} for job (borrowed; "job" is its
 * expanded spec, job->spec, of which the result takes a reference). The
 * caller owns the reference returned. */
json_object *result_new(const struct job *job);

/* Adds kernels.<name>: art's build metadata, whether it came from the
 * cache, and "build": {"status": "ok"}. art is borrowed. */
void result_add_kernel(json_object *result, const char *name, const struct kbuild_artifact *art);

/* Adds kernels.<name> for a kernel that did not build: {key, source, build}
 * with build {status: err->code, message: err->message, patch (for
 * patch_does_not_apply), option (for config_option_dropped), log_excerpt}
 * (contract A, docs/kernel-builds.md). source, err and f are borrowed; f
 * may be NULL (then the excerpt is ""). */
void result_add_kernel_failed(json_object *result, const char *name, const char *source,
			      const struct sl_error *err, const struct kbuild_failure *f);

/* Adds environment (environment.h) as seen through host (may be NULL). */
void result_set_environment(json_object *result, struct guest_host *host, const char *accelerator);

/* Adds order (the n keys, formatted) and variants: for each variant of
 * job its kernel, features and an empty runs array for result_add_run(). */
void result_begin_runs(json_object *result, const struct job *job, const struct run_key *order,
		       size_t n);

/* Appends the n keys of order, formatted, to result.order: the rounds that
 * adaptive repeats and noisy reruns add come after the first. */
void result_add_order(json_object *result, const struct run_key *order, size_t n);

/* Appends run (the result takes the caller's reference) to the runs of
 * key's variant. Returns 0, or -ENOENT (run dropped) when result_begin_runs()
 * made no such variant. */
int result_add_run(json_object *result, const struct run_key *key, json_object *run);

/* Compares every variant with the baseline (compare.h) and adds
 * comparisons, verdict and verdict_reasons. job is borrowed. Variants marked
 * "not_built" (run_skip.h) are not compared: each fails the verdict with a
 * reason naming the variant, its kernel, the build status and the detail;
 * with no other candidate left there is nothing to compare at all
 * (comparisons []). Skipped runs (skipped_runs) get a reason each variant.
 * It also adds the job's kernel bug "signatures" (compare/signatures.h) and
 * each run's signature ids; a signature a candidate shows and the baseline
 * never does fails the verdict with a reason naming it. */
int result_compare(json_object *result, const struct job *job, struct sl_error *err);

/* Adds started_at and finished_at (ISO 8601 UTC, as now_iso gives them). */
void result_finish(json_object *result, const char *started_at, const char *finished_at);
