/* Typed, bounded reads of untrusted JSON (a guest's frames, a tool's output)
 * that never abort. json-c asserts when an array function meets a non-array
 * and crashes when object iteration meets a non-object, and its getters
 * convert any type silently (a string's length for an int, the whole
 * serialized value for a string): every read of untrusted JSON goes through
 * one of these instead, which check the type and the bound and name what was
 * wrong.
 *
 * A reader names the document ("the agent's summary frame") and keeps the
 * first violation: the getters return 0 when the member is there and good,
 * 1 when it is absent (or null) and may be, and a negative errno with
 * err filled ("The agent's summary frame: payload.errors is an object, not
 * an array.") when it is present and wrong, or absent and required. After
 * the first violation every getter fails at once, so a caller may make
 * several reads and check the reader once. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "util/error.h"

struct json_reader {
	const char *what;     /* the document, after "The ": "agent's summary frame" */
	struct sl_error *err; /* the first violation (may be NULL) */
	int failed;	      /* its negative errno, or 0 */
};

#define JSON_READER(what_, err_) ((struct json_reader){.what = (what_), .err = (err_)})

/* A member's JSON path: "payload" + "errors" gives "payload.errors". */
#define JSON_PATH_MAX 160

/* "an object", "an array", "a string", "an integer", "a number", "true or
 * false", "null": what a value is, for messages. */
const char *json_type_phrase(json_object *v);

/* The member key of o (borrowed), or NULL when o is not an object, has no
 * such member, or it is null. Never asserts, whatever o is. */
json_object *json_member(json_object *o, const char *key);

/* The string member key of o (borrowed), or NULL when o is not an object or
 * the member is absent or not a string: for documents this process wrote
 * or has validated, where a missing string and a wrong one read alike. */
const char *json_member_string(json_object *o, const char *key);

/* The array (object) member key of o (borrowed), or NULL when o is not an
 * object or the member is absent or of another type. */
json_object *json_member_array(json_object *o, const char *key);
json_object *json_member_object(json_object *o, const char *key);

/* The finite number member key of o (an integer or not) into *ret; false,
 * *ret untouched, when it is absent, not a number or not finite. */
bool json_member_number(json_object *o, const char *key, double *ret);

/* The same with a default: for a document this process wrote, where a
 * missing member prints as def ("?", 0). */
const char *json_member_string_or(json_object *o, const char *key, const char *def);
double json_member_number_or(json_object *o, const char *key, double def);

/* The member key of o as text for a reader: a string as it is, any other
 * value as json-c prints it (7, true), def when absent or null. A summary
 * shows a hostile document's members as they are rather than hiding them. */
const char *json_member_text(json_object *o, const char *key, const char *def);

/* Whether v is an integer into *ret. JSON Schema's "integer" is any number
 * without a fraction, so the validator passes 102.0 (or "102." from a
 * lenient parser) where an integer is asked for: those read as 102. */
bool json_integral(json_object *v, long long *ret);

/* The integer member key of o (json_integral()) within int's range, or def. */
int json_member_int(json_object *o, const char *key, int def);

/* Whether the member key of o is true (false when absent or not a boolean). */
bool json_member_true(json_object *o, const char *key);

/* Item i of a (borrowed), or NULL when a is not an array or i is out of range. */
json_object *json_item(json_object *a, size_t i);

/* Object member path.key into *ret (borrowed). */
int json_get_object(struct json_reader *r, json_object *o, const char *path, const char *key,
		    bool required, json_object **ret);

/* Array member path.key of at most max_items items into *ret (borrowed). */
int json_get_array(struct json_reader *r, json_object *o, const char *path, const char *key,
		   bool required, size_t max_items, json_object **ret);

/* String member of at most max_bytes bytes, no NUL, into *ret (borrowed;
 * its length in *ret_len when not NULL). */
int json_get_string(struct json_reader *r, json_object *o, const char *path, const char *key,
		    bool required, size_t max_bytes, const char **ret, size_t *ret_len);

/* Integer member within [min, max] (a number with a fraction is not one). */
int json_get_int(struct json_reader *r, json_object *o, const char *path, const char *key,
		 bool required, int64_t min, int64_t max, int64_t *ret);

/* Finite number member within [min, max]. */
int json_get_number(struct json_reader *r, json_object *o, const char *path, const char *key,
		    bool required, double min, double max, double *ret);

/* true or false member. */
int json_get_bool(struct json_reader *r, json_object *o, const char *path, const char *key,
		  bool required, bool *ret);

/* Item i of array a at path as a string of at most max_bytes bytes, no NUL
 * (path[i] in messages). */
int json_item_string(struct json_reader *r, json_object *a, const char *path, size_t i,
		     size_t max_bytes, const char **ret, size_t *ret_len);

/* Records a violation of the caller's own (a value outside a set): the
 * message follows "The <what>: <path> ". Returns the reader's errno. */
int json_reader_fail(struct json_reader *r, const char *path, const char *fmt, ...) _printf_(3, 4);

/* The byte length of the longest prefix of s (len bytes, valid UTF-8) of at
 * most max bytes that does not cut a UTF-8 sequence; from the end with
 * from_end (the tail of at most max bytes starts at len minus the result). */
size_t json_utf8_cut(const char *s, size_t len, size_t max, bool from_end);
