/* The JSON Schema validator's helpers for paths, value descriptions in
 * messages and equality. See jsonschema-internal.h. */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "job/jsonschema-internal.h"
#include "proto/utf8.h"

/* ---- paths and value descriptions ---- */

/* The longest prefix of s (len bytes) of at most max bytes that does not end
 * inside a UTF-8 sequence, so truncated messages stay valid UTF-8. A byte
 * that starts no valid sequence counts as one character. */
static size_t utf8_prefix(const char *s, size_t len, size_t max)
{
	size_t n = 0;
	while (n < len) {
		size_t k = utf8_seq_len(s + n, len - n);
		if (k == 0)
			k = 1;
		if (n + k > max)
			break;
		n += k;
	}
	return n;
}

/* Cuts an incomplete UTF-8 sequence off the end of s (after snprintf truncated
 * it): a lead byte in the last three followed only by continuation bytes. */
int js_why_set(char *why, size_t whysz, const char *fmt, ...)
{
	if (why && whysz) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, whysz, fmt, ap);
		va_end(ap);
		js_utf8_fix_tail(why);
	}
	return -EINVAL;
}

int js_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void js_utf8_fix_tail(char *s)
{
	size_t n = strlen(s), i = 0;
	while (i < n) {
		size_t k = utf8_seq_len(s + i, n - i);
		if (k == 0 && n - i < 4 && (unsigned char)s[i] >= 0xC0) {
			size_t j = i + 1;
			while (j < n && ((unsigned char)s[j] & 0xC0) == 0x80)
				j++;
			if (j == n) {
				s[i] = '\0';
				return;
			}
		}
		i += k ? k : 1;
	}
}

/* A path that does not fit ends in "..." rather than silently misleading. */
static void path_mark_truncated(char out[JS_PATH_MAX], int n)
{
	if (n >= JS_PATH_MAX) {
		out[JS_PATH_MAX - 4] = '\0';
		js_utf8_fix_tail(out);
		strcat(out, "...");
	}
}

void js_path_key(char out[JS_PATH_MAX], const char *path, const char *key)
{
	bool simple = *key != '\0';
	for (const char *c = key; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			simple = false;
	if (simple) {
		path_mark_truncated(out, snprintf(out, JS_PATH_MAX, "%s.%.64s", path, key));
		return;
	}
	char safe[72];
	size_t klen = strlen(key), n = utf8_prefix(key, klen, 64);
	for (size_t i = 0; i < n; i++)
		safe[i] = ((unsigned char)key[i] < 0x20 || key[i] == '\'' || key[i] == 0x7f)
			      ? '?'
			      : key[i];
	safe[n] = '\0';
	path_mark_truncated(
	    out, snprintf(out, JS_PATH_MAX, "%s['%s%s']", path, safe, n < klen ? "..." : ""));
}

void js_path_index(char out[JS_PATH_MAX], const char *path, size_t i)
{
	path_mark_truncated(out, snprintf(out, JS_PATH_MAX, "%s[%zu]", path, i));
}

/* Quotes at most 48 bytes of s for a message, replacing control characters
 * and never cutting a UTF-8 sequence. */
void js_quote_str(char *out, size_t outsz, const char *s, size_t len)
{
	size_t max = outsz > 8 ? outsz - 8 : 0;
	if (max > 48)
		max = 48;
	size_t take = utf8_prefix(s, len, max), n = 0;
	out[n++] = '\'';
	for (size_t i = 0; i < take; i++)
		out[n++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	if (take < len) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n++] = '\'';
	out[n] = '\0';
}

bool js_is_number(json_object *o)
{
	if (json_object_is_type(o, json_type_int))
		return true;
	return json_object_is_type(o, json_type_double) && isfinite(json_object_get_double(o));
}

long double js_num_value(json_object *o)
{
	if (json_object_is_type(o, json_type_double))
		return json_object_get_double(o);
	int64_t i = json_object_get_int64(o);
	/* json-c keeps integers above INT64_MAX as uint64. */
	if (i == INT64_MAX)
		return (long double)json_object_get_uint64(o);
	return (long double)i;
}

void js_fmt_num(char *out, size_t outsz, long double v)
{
	if (v == floorl(v) && fabsl(v) < 1e18L)
		snprintf(out, outsz, "%lld", (long long)v);
	else
		snprintf(out, outsz, "%.10Lg", v);
}

void js_describe(char *out, size_t outsz, json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		snprintf(out, outsz, "null");
		break;
	case json_type_boolean:
		snprintf(out, outsz, "%s", json_object_get_boolean(o) ? "true" : "false");
		break;
	case json_type_int:
	case json_type_double:
		if (js_is_number(o))
			js_fmt_num(out, outsz, js_num_value(o));
		else
			snprintf(out, outsz, "a non-finite number");
		break;
	case json_type_string:
		js_quote_str(out, outsz, json_object_get_string(o),
			     (size_t)json_object_get_string_len(o));
		break;
	case json_type_array:
		snprintf(out, outsz, "an array");
		break;
	case json_type_object:
		snprintf(out, outsz, "an object");
		break;
	}
}

const char *js_type_noun(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_int:
		return "an integer";
	case json_type_double:
		return js_is_number(o) ? "a number" : "a non-finite number";
	case json_type_string:
		return "a string";
	case json_type_array:
		return "an array";
	case json_type_object:
		return "an object";
	}
	return "unknown";
}

/* ---- equality (numbers compare by value: 1 == 1.0) ---- */

bool js_equal(json_object *a, json_object *b)
{
	if (js_is_number(a) && js_is_number(b))
		return js_num_value(a) == js_num_value(b);
	enum json_type ta = json_object_get_type(a), tb = json_object_get_type(b);
	if (ta != tb)
		return false;
	switch (ta) {
	case json_type_null:
		return true;
	case json_type_boolean:
		return json_object_get_boolean(a) == json_object_get_boolean(b);
	case json_type_string:
		return json_object_get_string_len(a) == json_object_get_string_len(b) &&
		       memcmp(json_object_get_string(a), json_object_get_string(b),
			      (size_t)json_object_get_string_len(a)) == 0;
	case json_type_array: {
		size_t n = json_object_array_length(a);
		if (n != json_object_array_length(b))
			return false;
		for (size_t i = 0; i < n; i++)
			if (!js_equal(json_object_array_get_idx(a, i),
				      json_object_array_get_idx(b, i)))
				return false;
		return true;
	}
	case json_type_object: {
		if (json_object_object_length(a) != json_object_object_length(b))
			return false;
		json_object_object_foreach(a, k, va)
		{
			json_object *vb;
			if (!json_object_object_get_ex(b, k, &vb) || !js_equal(va, vb))
				return false;
		}
		return true;
	}
	default:
		return false; /* non-finite doubles equal nothing */
	}
}
