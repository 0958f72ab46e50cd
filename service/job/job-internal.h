/* What job.c (validation and expansion of the JSON spec) and job_struct.c
 * (the typed job built from the expanded spec) share: typed accessors for
 * json-c objects. Not for use outside service/job/job*.c. */
#pragma once

#include <stdbool.h>

#include "util/error.h"

/* The member key of o (borrowed), or NULL when o is not an object or has no
 * such member. json-c's null is NULL too. */
json_object *job_json_get(json_object *o, const char *key);
/* The member as a string (borrowed), or NULL when absent or not a string. */
const char *job_json_string(json_object *o, const char *key);
/* The member as an int, or def when absent or not an integer. */
int job_json_int(json_object *o, const char *key, int def);
/* The member if it is an array / an object (borrowed), else NULL. */
json_object *job_json_array(json_object *o, const char *key);
json_object *job_json_object(json_object *o, const char *key);
