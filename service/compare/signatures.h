/* Kernel bug signatures across a job's runs (docs/kernel-bugs.md): the
 * signatures of every run's kernel_events (guest/bug_signature.h) are
 * deduplicated by id and counted, and the ones a candidate variant shows and
 * the baseline never does fail the job. */
#pragma once

#include <json-c/json.h>

#include "util/error.h"

/* Adds to every run of variants (the result's variants object, modified in
 * place) a "signatures" array of the ids of its reports, each once, and
 * returns a new array, in the order first seen, of
 *   {id, kind, title, location?, runs, reports, variants: {NAME: runs},
 *    in_baseline, new_in: [candidate variant names], first: {variant, key,
 *    run_id, excerpt}}
 * runs: the runs that showed it; reports: how many times it was printed.
 * baseline: the baseline variant's name. At most SIGNATURES_MAX are kept,
 * the rest are counted in the last one's "more" field. NULL when out of
 * memory. */
#define SIGNATURES_MAX 256
json_object *signatures_collect(json_object *variants, const char *baseline);

/* Adds to reasons one sentence per signature with a non-empty new_in
 * (a candidate shows it, the baseline never) and returns how many; a
 * signatures array that does not read as the schema's (or NULL, the
 * collector out of memory) is a negative errno with err filled. */
int signatures_gate(json_object *signatures, const char *baseline, json_object *reasons,
		    struct sl_error *err);
