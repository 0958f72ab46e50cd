/* Strict, bounded JSON parsing for outside input. See json.h. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "util/fs.h"
#include "util/json.h"
#include "proto/utf8.h"

static void tokener_freep(json_tokener **t)
{
	if (*t)
		json_tokener_free(*t);
}

/* Line and column (both from 1) of byte off, for people reading a file. */
static void json_line_col(const char *data, size_t len, size_t off, size_t *ret_line,
			  size_t *ret_col)
{
	size_t line = 1, col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (data[i] == '\n') {
			line++;
			col = 1;
		} else
			col++;
	}
	*ret_line = line;
	*ret_col = col;
}

/* What json-c lets through even in strict mode: NUL bytes, UTF-8 that is
 * overlong, a surrogate or past U+10FFFF, and single-quoted strings. */
static int json_prescan(const char *data, size_t len, size_t max_values, const char *what,
			struct sl_error *err)
{
	size_t bad = 0, values = 1;
	bool in_string = false;

	const char *nul = memchr(data, '\0', len);
	if (nul)
		return error_set_path(
		    err, ERR_INVALID, "$",
		    "The %s contains a NUL byte at offset %zu, so it is not JSON.", what,
		    (size_t)(nul - data));
	if (!utf8_valid(data, len, &bad))
		return error_set_path(err, ERR_INVALID, "$",
				      "The %s is not valid UTF-8 at offset %zu.", what, bad);
	for (size_t i = 0; i < len; i++) {
		if (in_string && data[i] == '\\')
			i++;
		else if (data[i] == '"')
			in_string = !in_string;
		else if (!in_string && (data[i] == ',' || data[i] == '[' || data[i] == '{')) {
			if (max_values && ++values > max_values)
				return error_set_path(err, ERR_TOO_LARGE, "$",
						      "The %s holds more than %zu JSON values "
						      "(arrays, objects and their members).",
						      what, max_values);
		} else if (!in_string && data[i] == '\'') {
			size_t line, col;
			json_line_col(data, len, i, &line, &col);
			return error_set_path(err, ERR_INVALID, "$",
					      "The %s is not valid JSON at offset %zu (line %zu, "
					      "column %zu): a string must be in double quotes.",
					      what, i, line, col);
		}
	}
	return 0;
}

size_t json_value_count(const char *data, size_t len)
{
	size_t n = 1;
	bool in_string = false;
	for (size_t i = 0; i < len; i++) {
		if (in_string && data[i] == '\\')
			i++;
		else if (data[i] == '"')
			in_string = !in_string;
		else if (!in_string && (data[i] == '[' || data[i] == '{' || data[i] == ','))
			n++;
	}
	return n;
}

/* The first number in o that is not finite (NaN, Infinity, 1e999 all parse
 * in json-c even in strict mode), or NULL. Depth is bounded by the parse. */
static json_object *json_find_nonfinite(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o)) ? NULL : o;
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			json_object *bad = json_find_nonfinite(json_object_array_get_idx(o, i));
			if (bad)
				return bad;
		}
		return NULL;
	case json_type_object: {
		json_object_object_foreach(o, k, v)
		{
			(void)k;
			json_object *bad = json_find_nonfinite(v);
			if (bad)
				return bad;
		}
		return NULL;
	}
	default:
		return NULL;
	}
}

int json_parse_strict(const char *data, size_t len, const struct json_limits *lim, const char *what,
		      json_object **ret, struct sl_error *err)
{
	size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : JSON_DEFAULT_MAX_BYTES;
	int max_depth = lim && lim->max_depth > 0 ? lim->max_depth : JSON_DEFAULT_MAX_DEPTH;

	if (!what)
		what = "input";
	if (!data)
		data = "";
	/* json-c takes an int length. */
	if (max_bytes > INT_MAX - 1)
		max_bytes = INT_MAX - 1;
	if (len > max_bytes)
		return error_set_path(err, ERR_TOO_LARGE, "$",
				      "The %s is %zu bytes, over the limit of %zu bytes.", what,
				      len, max_bytes);
	int r = json_prescan(data, len, lim ? lim->max_values : 0, what, err);
	if (r < 0)
		return r;

	_cleanup_(tokener_freep) json_tokener *tok = json_tokener_new_ex(max_depth + 1);
	if (!tok)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory parsing the %s.", what);
	/* Trailing bytes get their own message below. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8 |
					JSON_TOKENER_ALLOW_TRAILING_CHARS);
	_cleanup_json_ json_object *o = json_tokener_parse_ex(tok, data, (int)len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	if (!o && e == json_tokener_continue) {
		/* A top-level number ends only at the end of the input: tell the
		 * tokener there is no more by feeding the terminating NUL. */
		o = json_tokener_parse_ex(tok, "", 1);
		e = json_tokener_get_error(tok);
		if (e == json_tokener_continue)
			e = json_tokener_error_parse_eof;
		end = len;
	}
	if (e != json_tokener_success) {
		size_t line, col;
		json_line_col(data, len, end, &line, &col);
		return error_set_path(
		    err, ERR_INVALID, "$",
		    "The %s is not valid JSON at offset %zu (line %zu, column %zu): %s%s.", what,
		    end, line, col, json_tokener_error_desc(e),
		    e == json_tokener_error_parse_eof
			? "; it is cut off before its value is complete"
			: "");
	}
	for (size_t i = end; i < len; i++)
		if (!strchr(" \t\r\n", data[i]))
			return error_set_path(
			    err, ERR_INVALID, "$",
			    "The %s has bytes after its JSON value, at offset %zu.", what, i);
	json_object *bad = json_find_nonfinite(o);
	if (bad)
		return error_set_path(err, ERR_INVALID, "$",
				      "The %s holds the number %.32s, which is not finite "
				      "(JSON has no NaN or infinity).",
				      what, json_object_to_json_string(bad));
	*ret = TAKE_PTR(o);
	return 0;
}

int json_read_file_strict(const char *path, size_t max_bytes, const char *kind, json_object **ret,
			  struct sl_error *err)
{
	_cleanup_free_ char *data = NULL, *what = NULL;
	size_t len = 0;

	if (max_bytes == 0)
		max_bytes = JSON_DEFAULT_MAX_BYTES;
	int r = fs_read_file(path, max_bytes, &data, &len, err);
	if (r < 0)
		return r;
	if (asprintf(&what, "%s '%s'", kind ? kind : "file", path) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory parsing '%s'.", path);
	struct json_limits lim = {.max_bytes = max_bytes};
	return json_parse_strict(data, len, &lim, what, ret, err);
}
