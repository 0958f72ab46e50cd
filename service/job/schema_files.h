/* The project's own JSON Schemas, loaded from the data directory
 * (<fs_data_dir()>/results-schema/<name>.schema.json) once per process. */
#pragma once

#include "util/error.h"

/* Returns in *ret a new json-c reference (the caller puts it) to the schema
 * named name: "job" or "result". The first call reads and parses the file;
 * later calls hand out private deep copies of the cached document, so callers
 * in different threads never share json-c reference counts. Thread-safe.
 * Errors: unknown name (ERR_INVALID), missing or unparsable file
 * (ERR_INTERNAL, the message names the path). */
int schema_load(const char *name, json_object **ret, struct sl_error *err);

/* Validates instance (borrowed) against the schema named name, which was
 * checked once when first loaded (jsonschema_check_schema(); a broken file
 * is ERR_INTERNAL): jsonschema_validate() without checking the schema again
 * each time. */
int schema_validate(const char *name, json_object *instance, struct sl_error *err);
