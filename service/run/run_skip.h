/* Which of a job's runs still run (docs/kernel-builds.md, "When a kernel
 * does not build"):
 *
 *  - a variant whose kernel did not build never runs ("not_built");
 *  - fail fast: once a run of a non-baseline variant ends hung, panicked or
 *    crashed (a status that fails the verdict whatever else happens; a hung
 *    run the noise policy leaves out does not count), that variant's
 *    remaining runs are skipped;
 *  - when no non-baseline variant is left to run (not built or failed
 *    fast), the job stops: the baseline's remaining runs are skipped too.
 *
 * A skipped run is counted on its variant (result: skipped_runs and
 * skipped_reason): the runs the job went on to without it, in the rounds it
 * planned (the first look's, then any the job added). Pure: no I/O, no
 * guests; tests/unit/test_run_skip.c. */
#pragma once

#include <stdbool.h>
#include <json-c/json.h>

#include "job/job.h"
#include "run/run_key.h"

struct run_skip;

/* A new state for job (borrowed; it must outlive the state) in which every
 * variant runs; NULL when memory ran out. */
struct run_skip *run_skip_new(const struct job *job);
/* Frees s; NULL is fine. */
void run_skip_free(struct run_skip *s);

/* The kernel named kernel did not build: the variants that boot it never
 * run. The baseline's kernel is not for this (that is an error). */
void run_skip_kernel_not_built(struct run_skip *s, const char *kernel);

/* Whether the variant never runs because its kernel did not build. */
bool run_skip_not_built(const struct run_skip *s, const char *variant);

/* Whether the job stopped: it has non-baseline variants and none of them
 * is left to run. A job with only the baseline never stops. */
bool run_skip_stopped(const struct run_skip *s);

/* Whether key would be skipped now (not built, or its variant stopped). */
bool run_skip_is_skipped(const struct run_skip *s, const struct run_key *key);

/* Whether key is skipped; a skipped run of a built variant is counted on
 * it. Call once per run the job reaches. */
bool run_skip_take(struct run_skip *s, const struct run_key *key);

/* Tells s how the run of key ended (run borrowed: its "status" and
 * "noisy"). A hung, panicked or crashed run of a non-baseline variant stops
 * that variant; returns true when that stopped the whole job. */
bool run_skip_run_ended(struct run_skip *s, const struct run_key *key, json_object *run);

/* Writes what s knows into result.variants (borrowed): "not_built": true for
 * variants whose kernel did not build, and "skipped_runs" and
 * "skipped_reason" (e.g. "run patched#0 hung") for variants with skipped
 * runs. Safe to call again; later calls overwrite. */
void run_skip_describe(const struct run_skip *s, json_object *result);
