/* A JSON Schema (2020-12) validator for the subset schedlab's own schemas in
 * results-schema/ use: type, properties, required, additionalProperties,
 * patternProperties, propertyNames, enum, const, minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum, minLength, maxLength (code points),
 * pattern (POSIX ERE), items, minItems, maxItems, uniqueItems, oneOf, anyOf,
 * allOf, not, local $ref ("#/$defs/..."), minProperties, maxProperties.
 * Annotations ($schema, $id, title, description, $defs, $comment, default,
 * examples) are ignored; so is any other keyword, which is why
 * jsonschema_check_keywords() exists for the tests. */
#pragma once

#include "util/error.h"

/* Validates instance against schema (both borrowed; neither is modified).
 * Returns 0 when valid. Otherwise returns -EINVAL and fills err with
 * ERR_INVALID, err->path with the JSON path of the offending value
 * ("$.variants.patched.features[2]") and err->message with a whole sentence
 * naming the path and the reason. For oneOf/anyOf failures the branch whose
 * error lies deepest in the instance is reported. A schema that loops through
 * $ref or names a missing $defs entry is an ERR_INTERNAL error. */
int jsonschema_validate(json_object *schema, json_object *instance, struct sl_error *err);

/* Walks schema and fails (ERR_INTERNAL, path = the schema location) on the
 * first keyword this validator does not implement or know as an annotation,
 * and on a pattern that POSIX ERE cannot compile. Returns 0 if all known. */
int jsonschema_check_keywords(json_object *schema, struct sl_error *err);
