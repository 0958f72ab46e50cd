/* Hand-written result fixtures for unit tests of the stages that read a
 * result through the typed model (compare/result_model.h). */
#pragma once

#include <json-c/json.h>

/* Fills in, in place, the members the model requires that a fixture left
 * out (schema, job, environment, verdict..., a variant's kernel and runs, a
 * run's key, repeat and status, a comparison's samples, change, interval,
 * p, direction, gate and verdict), so that each fixture names only the
 * members its test is about. Members present are left as they are, even of
 * the wrong type: tests of refusal keep theirs. */
void result_fixture_complete(json_object *result);
