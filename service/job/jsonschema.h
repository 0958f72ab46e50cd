/* A JSON Schema (2020-12) validator for the subset schedlab's own schemas in
 * results-schema/ use, and for any schema a user checks with
 * `schedlab validate --schema`: type, properties, required,
 * additionalProperties, patternProperties, propertyNames, enum, const,
 * minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength
 * (code points), pattern (ECMA-262, run by PCRE2 in UTF mode: code points,
 * \d ASCII digits, \s ECMA-262 white space; see jsonschema_ecma.c), items
 * (one schema; not the pre-2020 array form), minItems, maxItems, uniqueItems,
 * oneOf, anyOf, allOf, not, minProperties, maxProperties, and $ref to "#" or
 * a JSON pointer within the same document ("#/$defs/a%25b~1c": the fragment
 * percent-decoded, then ~1 and ~0 unescaped, RFC 6901; members of $defs or
 * anywhere else, array members by index). Boolean schemas work everywhere.
 * Annotations ($schema, $id, title, description, $defs, $comment, default,
 * examples) are ignored; so is any other keyword (remote or $id-based $refs,
 * $anchor, format, if/then/else, contains, prefixItems, dependentSchemas,
 * unevaluated*, multipleOf, ...), which is why jsonschema_check_keywords()
 * exists for the tests. docs/json-schema.md lists the claims and how the
 * conformance test checks them. */
#pragma once

#include "util/error.h"

/* Validates instance against schema (both borrowed; neither is modified).
 * First checks the schema as jsonschema_check_schema() does, so a broken
 * schema fails the same way whatever the instance. Returns 0 when valid.
 * Otherwise returns -EINVAL and fills err with ERR_INVALID, err->path with
 * the JSON path of the offending value ("$.variants.patched.features[2]")
 * and err->message with a whole sentence naming the path and the reason. For
 * oneOf/anyOf failures the branch whose error lies deepest in the instance is
 * reported. A broken schema (see jsonschema_check_schema()), a $ref that
 * loops, or a pattern whose matching exceeds the backtracking limit is an
 * ERR_INTERNAL error (negative errno). */
int jsonschema_validate(json_object *schema, json_object *instance, struct sl_error *err);
/* jsonschema_validate() of a schema that already passed
 * jsonschema_check_schema() (schema_files.c checks the project's own once,
 * at load): the check is nearly half the cost of validating a job. */
int jsonschema_validate_checked(json_object *schema, json_object *instance, struct sl_error *err);

/* Checks schema (borrowed) before use: every keyword the validator implements
 * has a value of the right form, every pattern and patternProperties name is
 * an ECMA-262 regular expression PCRE2 compiles, every $ref resolves within
 * the document (and its target is checked too). Unknown keywords are ignored
 * and not descended into. Returns 0, or -EINVAL with ERR_INTERNAL, err->path
 * the schema location ("#.properties.a.pattern") and a sentence saying why. */
int jsonschema_check_schema(json_object *schema, struct sl_error *err);

/* Like jsonschema_check_schema(), and also fails on the first keyword this
 * validator does not implement or know as an annotation. For the project's
 * own schemas (the tests). Returns 0 if all known. */
int jsonschema_check_keywords(json_object *schema, struct sl_error *err);
