/* The result document (results-schema/result.schema.json) as C types: the
 * result, a variant, a run record, a workload outcome and a comparison, one
 * struct each, parsed once strictly through util/json_get and emitted once.
 *
 * It lives in compare/ because that is the lowest stage that reads whole
 * results (comparisons of run records); run/, report/ and server/ sit above
 * it and may use it too.
 *
 * A parsed model borrows its strings and its untyped members (the job, the
 * environment, a run's topology, ...) from the document it was parsed
 * from, and holds a reference on that document until model_result_free().
 * Members the schema does not name are kept as they were (extra) so that
 * parse -> emit gives an equal document; has says which fields were
 * present and which were null (a nullable field's "null" is data: a
 * comparison without values has "p_value": null). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "compare/model_fields.h"
#include "util/error.h"

/* #/$defs/workload: one workload's outcome in one run. */
struct model_workload {
	const char *name, *tool, *status;
	int64_t exit_code;
	const char *reason;
	json_object *metrics, *details;
	struct model_presence has;
	json_object *extra;
};

/* #/$defs/signature_ref: a kernel bug report's signature. */
struct model_signature_ref {
	const char *id, *kind, *title, *location;
	struct model_presence has;
	json_object *extra;
};

/* #/$defs/run's kernel_events item: one report found on a run's console. */
struct model_kernel_event {
	const char *kind;
	json_object *line; /* a string (the headline) or an integer (a console line) */
	const char *excerpt;
	struct model_signature_ref signature;
	int64_t part_of;
	struct model_presence has;
	json_object *extra;
};

/* #/$defs/run: one run record. */
struct model_run {
	const char *key;
	int64_t repeat;
	const char *status, *accelerator, *host;
	json_object *pinning, *volumes;
	const char *started_at;
	double boot_seconds, duration_seconds;
	json_object *features_applied, *topology, *sched_ext;
	struct model_kernel_event *kernel_events;
	size_t n_kernel_events;
	json_object *signatures;
	const char *console_excerpt;
	json_object *host_interference;
	const char *taskstats_error;
	json_object *retry_of;
	bool noisy;
	const char *reason;
	struct model_workload *workloads;
	size_t n_workloads;
	struct model_presence has;
	json_object *extra;
	json_object *doc; /* the object it was read from (borrowed), for a stage
			     that edits it (a replay's pool); not emitted */
};

/* #/$defs/comparison: one metric of one workload, a candidate against the
 * baseline. */
struct model_comparison {
	const char *variant, *workload, *metric;
	json_object *baseline, *candidate; /* #/$defs/sample */
	double change, change_pct, estimate, ci_level;
	const char *ci_method;
	json_object *ci95;
	double p_value;
	const char *better;
	bool gated;
	double threshold, alpha, min_p, cliffs_delta, detectable_change;
	bool relative;
	const char *threshold_source;
	double threshold_capped_from, aa_spread;
	const char *verdict, *undecided_reason;
	struct model_presence has;
	json_object *extra;
};

/* #/$defs/signature's first: where a kernel bug was first reported. */
struct model_signature_first {
	const char *variant, *key, *run_id, *excerpt;
	struct model_presence has;
	json_object *extra;
};

/* #/$defs/signature: one kernel bug across the job's runs. */
struct model_signature {
	const char *id, *kind, *title, *location;
	int64_t runs, reports;
	json_object *variants; /* variant name -> runs that showed it */
	struct model_signature_first first;
	bool in_baseline;
	json_object *new_in; /* candidate variant names */
	int64_t more;
	struct model_presence has;
	json_object *extra;
};

/* #/$defs/variant: one variant (its name is its key in variants). */
struct model_variant {
	const char *name;
	const char *kernel;
	json_object *features;
	struct model_run *runs;
	size_t n_runs;
	json_object *not_built;
	int64_t skipped_runs;
	const char *skipped_reason;
	struct model_presence has;
	json_object *extra;
};

/* The whole result. */
struct model_result {
	json_object *schema, *job, *environment;
	struct model_signature *signatures;
	size_t n_signatures;
	json_object *kernels, *calibration, *repeats, *order, *placement;
	struct model_variant *variants;
	size_t n_variants;
	struct model_comparison *comparisons;
	size_t n_comparisons;
	const char *verdict;
	json_object *verdict_reasons;
	const char *started_at, *finished_at;
	json_object *attribution, *bisection;
	struct model_presence has;
	json_object *extra;
	json_object *doc; /* the parsed document, referenced */
};

enum model_type {
	MODEL_RESULT,
	MODEL_VARIANT,
	MODEL_RUN,
	MODEL_WORKLOAD,
	MODEL_COMPARISON,
	MODEL_KERNEL_EVENT,
	MODEL_SIGNATURE_REF,
	MODEL_SIGNATURE,
	MODEL_SIGNATURE_FIRST,
};

/* Field i of a type by its JSON name, or NULL past the last: what the type
 * knows, for the test that holds it to the schema. */
const char *model_field_name(enum model_type type, size_t i);

/* Whether field name of a parsed struct of type was present and not null. */
bool model_has(enum model_type type, const struct model_presence *has, const char *name);

/* Marks field name of a struct of type present, for code that builds one
 * to emit it. */
void model_set(enum model_type type, struct model_presence *has, const char *name);

/* Parses doc (borrowed; the model takes its own reference) into *ret. A
 * member of the wrong type, a string or array over the bounds above, or a
 * missing required member is ERR_INVALID naming its path ("The result
 * document: variants.base.runs[2].status is missing."). */
int model_result_parse(json_object *doc, struct model_result *ret, struct sl_error *err);
/* Like model_result_parse() for a document whose required members may be
 * missing (an older or partial result: the store indexes whatever a job
 * left); every member present is still type-checked and bounded. */
int model_result_read(json_object *doc, struct model_result *ret, struct sl_error *err);

/* A new document equal (json_object_equal) to the one parsed; members keep
 * no link to it. NULL when out of memory. */
json_object *model_result_emit(const struct model_result *m);

/* One run record or comparison on its own, for a stage that has one. */
int model_run_parse(json_object *o, struct model_run *ret, struct sl_error *err);
json_object *model_run_emit(const struct model_run *run);
/* Like model_run_parse() for a run record that may be partial (one the
 * runner is still filling in, a test's fixture): a required member may be
 * missing (NULL, has says so), every member present is still type-checked
 * and bounded, ERR_INVALID naming it. */
int model_run_read(json_object *o, struct model_run *ret, struct sl_error *err);
/* The workload of run (borrowed) named name, or NULL when none is. */
const struct model_workload *model_run_workload(const struct model_run *run, const char *name);
void model_run_free(struct model_run *run);
json_object *model_comparison_emit(const struct model_comparison *c);

/* A result's signatures array on its own (a stage that has just built one):
 * parsed strictly into *ret (n in *ret_n), borrowing from a; emitted one
 * signature at a time. */
int model_signatures_parse(json_object *a, struct model_signature **ret, size_t *ret_n,
			   struct sl_error *err);
json_object *model_signature_emit(const struct model_signature *s);
void model_signatures_free(struct model_signature *s, size_t n);

void model_result_free(struct model_result *m);
