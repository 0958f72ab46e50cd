/* The one JSON entry point for input from outside the process: request
 * bodies, job and config files, stored results, guest frames. Strict JSON
 * (JSON_TOKENER_STRICT), valid UTF-8 only, a bound on size and on nesting,
 * no NUL bytes, nothing but whitespace after the value; an error names what
 * was parsed, the byte offset and json-c's reason in a whole sentence. */
#pragma once

#include <stddef.h>
#include <json-c/json.h>

#include "util/error.h"

#define JSON_DEFAULT_MAX_BYTES (8u * 1024 * 1024)
#define JSON_DEFAULT_MAX_DEPTH 64

struct json_limits {
	size_t max_bytes; /* 0: JSON_DEFAULT_MAX_BYTES */
	int max_depth;	  /* arrays/objects nested in each other; 0: JSON_DEFAULT_MAX_DEPTH */
	/* Values (array elements, object members, containers) at most, counted
	 * before json-c sees the text: a json-c value costs about 60 times the
	 * 2 bytes "0," takes in the text. 0: no bound. */
	size_t max_values;
};

/* An upper bound on the JSON values (objects, arrays, scalars) in
 * data[0..len), counted without parsing: 1 plus each '[', '{' and ','
 * outside strings. json-c spends about 40 to 100 bytes per value, so a bound
 * on this count bounds what parsing a small input can cost (a 4 MiB array of
 * one-digit integers is 2 M values, about 150 MB parsed). */
size_t json_value_count(const char *data, size_t len);

/* Parses data[0..len) (need not be NUL-terminated) into *ret, which the caller
 * then owns (json_object_put). lim NULL means the defaults. what names the
 * input in error messages, after "The ": "request body", "job file 'x.json'".
 * Returns 0 (a bare `null` gives *ret = NULL, as json-c does), or -EINVAL
 * (ERR_INVALID: not strict JSON, not strict UTF-8, too deep, NUL byte,
 * trailing bytes, a number that is not finite: json-c takes NaN, Infinity
 * and 1e999, JSON has none of them) or -E2BIG (ERR_TOO_LARGE: over
 * max_bytes or max_values) with err filled and *ret untouched. */
int json_parse_strict(const char *data, size_t len, const struct json_limits *lim, const char *what,
		      json_object **ret, struct sl_error *err);

/* Reads path (at most max_bytes; 0: JSON_DEFAULT_MAX_BYTES) and parses it with
 * json_parse_strict at the default depth. kind names the file in messages
 * ("job file" gives "The job file 'PATH' ..."; NULL: "file"). Returns 0 with
 * *ret owned by the caller, or a negative errno with err filled (a missing
 * file is ERR_NOT_FOUND, a longer one ERR_TOO_LARGE). */
int json_read_file_strict(const char *path, size_t max_bytes, const char *kind, json_object **ret,
			  struct sl_error *err);
