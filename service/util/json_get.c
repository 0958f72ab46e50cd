/* Typed, bounded reads of untrusted JSON. See json_get.h. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/json_get.h"

const char *json_type_phrase(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	case json_type_int:
		return "an integer";
	case json_type_double:
		return "a number";
	case json_type_boolean:
		return "true or false";
	default:
		return "null";
	}
}

json_object *json_member(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

const char *json_member_string(json_object *o, const char *key)
{
	json_object *v = json_member(o, key);
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

json_object *json_member_array(json_object *o, const char *key)
{
	json_object *v = json_member(o, key);
	return json_object_is_type(v, json_type_array) ? v : NULL;
}

json_object *json_member_object(json_object *o, const char *key)
{
	json_object *v = json_member(o, key);
	return json_object_is_type(v, json_type_object) ? v : NULL;
}

bool json_member_number(json_object *o, const char *key, double *ret)
{
	json_object *v = json_member(o, key);
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return false;
	double d = json_object_get_double(v);
	if (!isfinite(d))
		return false;
	*ret = d;
	return true;
}

const char *json_member_string_or(json_object *o, const char *key, const char *def)
{
	const char *s = json_member_string(o, key);
	return s ? s : def;
}

double json_member_number_or(json_object *o, const char *key, double def)
{
	double d = def;
	json_member_number(o, key, &d);
	return d;
}

const char *json_member_text(json_object *o, const char *key, const char *def)
{
	json_object *v = json_member(o, key);
	return v ? json_object_get_string(v) : def;
}

bool json_integral(json_object *v, long long *ret)
{
	if (json_object_is_type(v, json_type_int)) {
		*ret = json_object_get_int64(v);
		return true;
	}
	if (!json_object_is_type(v, json_type_double))
		return false;
	double d = json_object_get_double(v);
	if (!isfinite(d) || d != floor(d) || fabs(d) > 9007199254740992.0)
		return false;
	*ret = (long long)d;
	return true;
}

int json_member_int(json_object *o, const char *key, int def)
{
	long long v;
	if (!json_integral(json_member(o, key), &v) || v < INT_MIN || v > INT_MAX)
		return def;
	return (int)v;
}

bool json_member_true(json_object *o, const char *key)
{
	json_object *v = json_member(o, key);
	return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

json_object *json_item(json_object *a, size_t i)
{
	if (!json_object_is_type(a, json_type_array) || i >= json_object_array_length(a))
		return NULL;
	return json_object_array_get_idx(a, i);
}

static void join(char *buf, size_t len, const char *path, const char *key)
{
	snprintf(buf, len, "%s%s%s", path && path[0] ? path : "", path && path[0] ? "." : "", key);
}

int json_reader_fail(struct json_reader *r, const char *path, const char *fmt, ...)
{
	if (r->failed)
		return r->failed;
	char detail[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	/* A guest's key may be anything: keep the path printable and short. */
	char shown[JSON_PATH_MAX];
	size_t k = 0;
	for (size_t i = 0; path[i] && k + 1 < sizeof(shown); i++) {
		unsigned char c = (unsigned char)path[i];
		shown[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	shown[k] = '\0';
	r->failed =
	    error_set_path(r->err, ERR_INVALID, shown, "The %s: %s %s.", r->what, shown, detail);
	return r->failed;
}

/* The member's value for a typed getter: 0 with *ret set, 1 when absent and
 * optional, or the reader's errno. */
static int member(struct json_reader *r, json_object *o, const char *full, const char *key,
		  bool required, json_type want, json_object **ret)
{
	if (r->failed)
		return r->failed;
	json_object *v = json_member(o, key);
	if (!v) {
		if (!required)
			return 1;
		return json_reader_fail(r, full, "is missing");
	}
	/* An integer is a number too. */
	bool ok = json_object_is_type(v, want) ||
		  (want == json_type_double && json_object_is_type(v, json_type_int));
	if (!ok) {
		const char *want_phrase = want == json_type_object   ? "an object"
					  : want == json_type_array  ? "an array"
					  : want == json_type_string ? "a string"
					  : want == json_type_int    ? "an integer"
					  : want == json_type_double ? "a number"
								     : "true or false";
		return json_reader_fail(r, full, "is %s, not %s", json_type_phrase(v), want_phrase);
	}
	*ret = v;
	return 0;
}

int json_get_object(struct json_reader *r, json_object *o, const char *path, const char *key,
		    bool required, json_object **ret)
{
	char full[JSON_PATH_MAX];
	join(full, sizeof(full), path, key);
	return member(r, o, full, key, required, json_type_object, ret);
}

int json_get_array(struct json_reader *r, json_object *o, const char *path, const char *key,
		   bool required, size_t max_items, json_object **ret)
{
	char full[JSON_PATH_MAX];
	json_object *v = NULL;
	join(full, sizeof(full), path, key);
	int k = member(r, o, full, key, required, json_type_array, &v);
	if (k != 0)
		return k;
	size_t n = json_object_array_length(v);
	if (n > max_items)
		return json_reader_fail(r, full, "has %zu items, over the limit of %zu", n,
					max_items);
	*ret = v;
	return 0;
}

/* A string value v (already known to be one) at full: bounded, no NUL. */
static int string_value(struct json_reader *r, json_object *v, const char *full, size_t max_bytes,
			const char **ret, size_t *ret_len)
{
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v);
	if (len > max_bytes)
		return json_reader_fail(r, full, "is %zu bytes long, over the limit of %zu", len,
					max_bytes);
	if (memchr(s, '\0', len))
		return json_reader_fail(r, full, "holds a NUL character");
	*ret = s;
	if (ret_len)
		*ret_len = len;
	return 0;
}

int json_get_string(struct json_reader *r, json_object *o, const char *path, const char *key,
		    bool required, size_t max_bytes, const char **ret, size_t *ret_len)
{
	char full[JSON_PATH_MAX];
	json_object *v = NULL;
	join(full, sizeof(full), path, key);
	int k = member(r, o, full, key, required, json_type_string, &v);
	if (k != 0)
		return k;
	return string_value(r, v, full, max_bytes, ret, ret_len);
}

int json_get_int(struct json_reader *r, json_object *o, const char *path, const char *key,
		 bool required, int64_t min, int64_t max, int64_t *ret)
{
	char full[JSON_PATH_MAX];
	json_object *v = NULL;
	join(full, sizeof(full), path, key);
	int k = member(r, o, full, key, required, json_type_int, &v);
	if (k != 0)
		return k;
	/* json-c keeps a larger integer as an unsigned 64-bit one and gives
	 * INT64_MAX for it here: out of every range the callers give. */
	int64_t n = json_object_get_int64(v);
	if (n < min || n > max)
		return json_reader_fail(r, full, "is %.32s, outside %lld..%lld",
					json_object_to_json_string(v), (long long)min,
					(long long)max);
	*ret = n;
	return 0;
}

int json_get_number(struct json_reader *r, json_object *o, const char *path, const char *key,
		    bool required, double min, double max, double *ret)
{
	char full[JSON_PATH_MAX];
	json_object *v = NULL;
	join(full, sizeof(full), path, key);
	int k = member(r, o, full, key, required, json_type_double, &v);
	if (k != 0)
		return k;
	double d = json_object_get_double(v);
	if (!isfinite(d) || d < min || d > max)
		return json_reader_fail(r, full, "is %.32s, outside %g..%g",
					json_object_to_json_string(v), min, max);
	*ret = d;
	return 0;
}

int json_get_bool(struct json_reader *r, json_object *o, const char *path, const char *key,
		  bool required, bool *ret)
{
	char full[JSON_PATH_MAX];
	json_object *v = NULL;
	join(full, sizeof(full), path, key);
	int k = member(r, o, full, key, required, json_type_boolean, &v);
	if (k != 0)
		return k;
	*ret = json_object_get_boolean(v);
	return 0;
}

int json_item_string(struct json_reader *r, json_object *a, const char *path, size_t i,
		     size_t max_bytes, const char **ret, size_t *ret_len)
{
	char full[JSON_PATH_MAX];
	if (r->failed)
		return r->failed;
	snprintf(full, sizeof(full), "%s[%zu]", path, i);
	json_object *v = json_item(a, i);
	if (!json_object_is_type(v, json_type_string))
		return json_reader_fail(r, full, "is %s, not a string", json_type_phrase(v));
	return string_value(r, v, full, max_bytes, ret, ret_len);
}

size_t json_utf8_cut(const char *s, size_t len, size_t max, bool from_end)
{
	if (len <= max)
		return len;
	/* A continuation byte is 10xxxxxx: never start or end a cut inside a
	 * sequence, which would leave the cut text invalid UTF-8. */
	if (from_end) {
		size_t start = len - max;
		while (start < len && ((unsigned char)s[start] & 0xc0) == 0x80)
			start++;
		return len - start;
	}
	size_t end = max;
	while (end > 0 && ((unsigned char)s[end] & 0xc0) == 0x80)
		end--;
	return end;
}
