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

/* Adds kernels.<name>: art's build metadata and whether it came from the
 * cache. art is borrowed. */
void result_add_kernel(json_object *result, const char *name, const struct kbuild_artifact *art);

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
 * comparisons, verdict and verdict_reasons. job is borrowed. */
int result_compare(json_object *result, const struct job *job, struct sl_error *err);

/* Adds started_at and finished_at (ISO 8601 UTC, as now_iso gives them). */
void result_finish(json_object *result, const char *started_at, const char *finished_at);
