/* The JSON Schema subset schedlab's schemas use. See jsonschema.h.
 *
 * json-c represents JSON null as a NULL json_object pointer, so every helper
 * here accepts NULL as "null". Validation stops at the first error in a
 * branch; oneOf/anyOf keep the most informative failing branch. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job/jsonschema.h"
#include "job/jsonschema-internal.h"

int js_fail_set(struct js_ctx *ctx, struct js_fail *fail, enum error_kind kind, const char *path,
		int level, const char *fmt, ...)
{
	va_list ap;
	fail->kind = kind;
	fail->level = level;
	fail->progress = ctx->progress;
	snprintf(fail->path, sizeof(fail->path), "%s", path);
	va_start(ap, fmt);
	vsnprintf(fail->message, sizeof(fail->message), fmt, ap);
	va_end(ap);
	js_utf8_fix_tail(fail->message);
	js_utf8_fix_tail(fail->path);
	return kind == ERR_INVALID ? -EINVAL : -ELOOP;
}

/* Percent-decodes the URI fragment src into dst (dstsz bytes with the NUL).
 * false on a malformed or NUL escape, or when it does not fit. */
static bool fragment_decode(const char *src, char *dst, size_t dstsz)
{
	size_t n = 0;
	for (const char *p = src; *p; p++) {
		char c = *p;
		if (c == '%') {
			int hi = js_hex_digit(p[1]), lo = hi < 0 ? -1 : js_hex_digit(p[2]);
			if (lo < 0 || (hi == 0 && lo == 0))
				return false;
			c = (char)(hi * 16 + lo);
			p += 2;
		}
		if (n + 1 >= dstsz)
			return false;
		dst[n++] = c;
	}
	dst[n] = '\0';
	return true;
}

/* An array index token per RFC 6901: "0" or digits without a leading zero. */
static bool array_index(const char *tok, size_t len, size_t *ret)
{
	size_t v = 0;
	if (!*tok || (tok[0] == '0' && tok[1]))
		return false;
	for (const char *c = tok; *c; c++) {
		if (*c < '0' || *c > '9' || v > (SIZE_MAX - 9) / 10)
			return false;
		v = v * 10 + (size_t)(*c - '0');
	}
	if (v >= len)
		return false;
	*ret = v;
	return true;
}

/* Resolves "#" or "#/a/b" from the root: the fragment is percent-decoded
 * first (RFC 3986), then read as a JSON pointer (RFC 6901: split at '/',
 * then ~1 -> '/' and ~0 -> '~' in each token; array members by index). */
json_object *js_resolve_ref(json_object *root, const char *ref)
{
	char frag[1024];
	if (!ref || ref[0] != '#' || !fragment_decode(ref + 1, frag, sizeof(frag)))
		return NULL;
	json_object *cur = root;
	const char *p = frag;
	while (*p) {
		if (*p != '/')
			return NULL;
		p++;
		char tok[sizeof(frag)];
		size_t n = 0;
		while (*p && *p != '/') {
			char c = *p++;
			if (c == '~') {
				if (*p != '0' && *p != '1')
					return NULL; /* RFC 6901: no other escape */
				c = *p++ == '0' ? '~' : '/';
			}
			tok[n++] = c;
		}
		tok[n] = '\0';
		if (json_object_is_type(cur, json_type_array)) {
			size_t idx;
			if (!array_index(tok, json_object_array_length(cur), &idx))
				return NULL;
			cur = json_object_array_get_idx(cur, idx);
		} else if (!json_object_object_get_ex(cur, tok, &cur))
			return NULL;
	}
	return cur;
}

int js_validate(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		int level, int ref_chain, struct js_fail *fail)
{
	json_object *k;
	int r;

	if (json_object_is_type(schema, json_type_boolean)) {
		if (json_object_get_boolean(schema))
			return 0;
		return js_fail_set(ctx, fail, ERR_INVALID, path, level, "%s is not allowed here.",
				   path);
	}
	if (!json_object_is_type(schema, json_type_object))
		return js_fail_set(ctx, fail, ERR_INTERNAL, path, level,
				   "The schema for %s is neither an object nor a boolean.", path);
	if (ctx->depth >= JS_MAX_DEPTH)
		return js_fail_set(ctx, fail, ERR_INTERNAL, path, level,
				   "The schema nests deeper than %d levels at %s.", JS_MAX_DEPTH,
				   path);
	ctx->depth++;

	if ((k = js_kw(schema, "$ref"))) {
		const char *ref = json_object_get_string(k);
		json_object *target = ref ? js_resolve_ref(ctx->root, ref) : NULL;
		if (!target) {
			r = js_fail_set(
			    ctx, fail, ERR_INTERNAL, path, level,
			    "The schema's $ref '%s' (used for %s) does not resolve to a "
			    "local definition.",
			    ref ? ref : "", path);
			goto out;
		}
		if (ref_chain >= JS_MAX_REF_CHAIN) {
			r = js_fail_set(ctx, fail, ERR_INTERNAL, path, level,
					"The schema's $ref '%s' loops (more than %d references "
					"without progress at %s).",
					ref, JS_MAX_REF_CHAIN, path);
			goto out;
		}
		r = js_validate(ctx, target, inst, path, level, ref_chain + 1, fail);
		if (r < 0)
			goto out;
	}
	if ((k = js_kw(schema, "type")) && (r = js_check_type(ctx, k, inst, path, level, fail)) < 0)
		goto out;
	if (js_has_kw(schema, "const") && !js_equal(js_kw(schema, "const"), inst)) {
		char want[64], got[64];
		js_describe(want, sizeof(want), js_kw(schema, "const"));
		js_describe(got, sizeof(got), inst);
		r = js_fail_set(ctx, fail, ERR_INVALID, path, level, "%s must be %s (it is %s).",
				path, want, got);
		goto out;
	}
	if ((k = js_kw(schema, "enum")) && (r = js_check_enum(ctx, k, inst, path, level, fail)) < 0)
		goto out;
	if (js_is_number(inst) && (r = js_check_number(ctx, schema, inst, path, level, fail)) < 0)
		goto out;
	if (json_object_is_type(inst, json_type_string) &&
	    (r = js_check_string(ctx, schema, inst, path, level, fail)) < 0)
		goto out;
	if (json_object_is_type(inst, json_type_array) &&
	    (r = js_check_array(ctx, schema, inst, path, level, fail)) < 0)
		goto out;
	if (json_object_is_type(inst, json_type_object) &&
	    (r = js_check_object(ctx, schema, inst, path, level, fail)) < 0)
		goto out;
	if ((k = js_kw(schema, "allOf"))) {
		for (size_t i = 0; i < json_object_array_length(k); i++) {
			r = js_validate(ctx, json_object_array_get_idx(k, i), inst, path, level, 0,
					fail);
			if (r < 0)
				goto out;
		}
	}
	if ((k = js_kw(schema, "anyOf")) &&
	    (r = js_check_branches(ctx, k, false, inst, path, level, fail)) < 0)
		goto out;
	if ((k = js_kw(schema, "oneOf")) &&
	    (r = js_check_branches(ctx, k, true, inst, path, level, fail)) < 0)
		goto out;
	if ((k = js_kw(schema, "not"))) {
		struct js_fail f = {0};
		r = js_validate(ctx, k, inst, path, level, 0, &f);
		if (r < 0 && f.kind == ERR_INTERNAL) {
			*fail = f;
			goto out;
		}
		if (r == 0) {
			r = js_fail_set(ctx, fail, ERR_INVALID, path, level,
					"%s matches a form that is not allowed.", path);
			goto out;
		}
	}
	r = 0;
out:
	ctx->depth--;
	return r;
}

int jsonschema_validate(json_object *schema, json_object *instance, struct sl_error *err)
{
	int r = jsonschema_check_schema(schema, err);
	if (r < 0)
		return r;
	return jsonschema_validate_checked(schema, instance, err);
}

int jsonschema_validate_checked(json_object *schema, json_object *instance, struct sl_error *err)
{
	struct js_ctx ctx = {.root = schema};
	struct js_fail fail = {0};
	int r = js_validate(&ctx, schema, instance, "$", 0, 0, &fail);
	if (r == 0)
		return 0;
	if (fail.kind == ERR_INTERNAL) {
		error_set_path(err, ERR_INTERNAL, fail.path, "%s", fail.message);
		return r;
	}
	error_set_path(err, ERR_INVALID, fail.path, "%s", fail.message);
	if (err)
		snprintf(err->code, sizeof(err->code), "schema_violation");
	return -EINVAL;
}

/* ---- the schema check: before any instance, and the audit for tests ---- */

enum kw_form {
	KW_ANNOTATION, /* any value */
	KW_SCHEMA,     /* a schema */
	KW_SCHEMA_MAP, /* an object of schemas */
	KW_SCHEMA_LIST,
	KW_NUMBER,
	KW_COUNT, /* a non-negative integer */
	KW_BOOL,
	KW_ARRAY,
	KW_STRINGS, /* an array of strings */
	KW_TYPE,
	KW_PATTERN,
	KW_PATTERN_MAP, /* patternProperties */
	KW_REF,
};

static const struct {
	const char *name;
	enum kw_form form;
} keywords[] = {
    {"type", KW_TYPE},
    {"properties", KW_SCHEMA_MAP},
    {"required", KW_STRINGS},
    {"additionalProperties", KW_SCHEMA},
    {"patternProperties", KW_PATTERN_MAP},
    {"propertyNames", KW_SCHEMA},
    {"enum", KW_ARRAY},
    {"const", KW_ANNOTATION},
    {"minimum", KW_NUMBER},
    {"maximum", KW_NUMBER},
    {"exclusiveMinimum", KW_NUMBER},
    {"exclusiveMaximum", KW_NUMBER},
    {"minLength", KW_COUNT},
    {"maxLength", KW_COUNT},
    {"pattern", KW_PATTERN},
    {"items", KW_SCHEMA},
    {"minItems", KW_COUNT},
    {"maxItems", KW_COUNT},
    {"uniqueItems", KW_BOOL},
    {"oneOf", KW_SCHEMA_LIST},
    {"anyOf", KW_SCHEMA_LIST},
    {"allOf", KW_SCHEMA_LIST},
    {"not", KW_SCHEMA},
    {"$ref", KW_REF},
    {"minProperties", KW_COUNT},
    {"maxProperties", KW_COUNT},
    {"$defs", KW_SCHEMA_MAP},
    /* annotations, ignored on purpose */
    {"$schema", KW_ANNOTATION},
    {"$id", KW_ANNOTATION},
    {"title", KW_ANNOTATION},
    {"description", KW_ANNOTATION},
    {"$comment", KW_ANNOTATION},
    {"default", KW_ANNOTATION},
    {"examples", KW_ANNOTATION},
};

static bool is_type_name(json_object *t)
{
	static const char *const names[] = {"null",   "boolean", "object", "array",
					    "string", "number",	 "integer"};
	const char *s = json_object_is_type(t, json_type_string) ? json_object_get_string(t) : "";
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strcmp(names[i], s) == 0)
			return true;
	return false;
}

/* One walk: strict (the audit) or not, and the $ref targets already walked. */
struct check_ctx {
	json_object *root;
	bool strict;
	json_object **seen;
	size_t nseen, cap;
};

static int check_schema(struct check_ctx *c, json_object *schema, const char *where, int depth,
			struct sl_error *err);

static int bad_form(struct sl_error *err, const char *p, const char *key, const char *where,
		    const char *what)
{
	return error_set_path(err, ERR_INTERNAL, p, "The schema's '%s' at %s must be %s.", key,
			      where, what);
}

/* Checks the value val of keyword key (of form form) at p. */
static int check_value(struct check_ctx *c, const char *key, enum kw_form form, json_object *val,
		       const char *where, const char *p, int depth, struct sl_error *err)
{
	char sp[JS_PATH_MAX], why[256] = "", q[64];
	int r;
	switch (form) {
	case KW_ANNOTATION:
		return 0;
	case KW_SCHEMA:
		if (strcmp(key, "items") == 0 && json_object_is_type(val, json_type_array))
			return bad_form(err, p, key, where,
					"a schema (the array form of draft 2019-09 and earlier "
					"is prefixItems in 2020-12, which this validator does "
					"not implement)");
		return check_schema(c, val, p, depth + 1, err);
	case KW_SCHEMA_MAP:
	case KW_PATTERN_MAP:
		if (!json_object_is_type(val, json_type_object))
			return bad_form(err, p, key, where, "an object");
		json_object_object_foreach(val, sk, sv)
		{
			js_path_key(sp, p, sk);
			if (form == KW_PATTERN_MAP && js_re_check(sk, why, sizeof(why)) < 0) {
				js_quote_str(q, sizeof(q), sk, strlen(sk));
				return error_set_path(err, ERR_INTERNAL, sp,
						      "The pattern %s at %s is not a valid "
						      "ECMA-262 regular expression: %s.",
						      q, p, why);
			}
			if ((r = check_schema(c, sv, sp, depth + 1, err)) < 0)
				return r;
		}
		return 0;
	case KW_SCHEMA_LIST:
		if (!json_object_is_type(val, json_type_array) ||
		    json_object_array_length(val) == 0)
			return bad_form(err, p, key, where, "a non-empty array of schemas");
		for (size_t i = 0; i < json_object_array_length(val); i++) {
			js_path_index(sp, p, i);
			r = check_schema(c, json_object_array_get_idx(val, i), sp, depth + 1, err);
			if (r < 0)
				return r;
		}
		return 0;
	case KW_NUMBER:
		return js_is_number(val) ? 0 : bad_form(err, p, key, where, "a number");
	case KW_COUNT:
		if (!js_is_number(val) || js_num_value(val) < 0 ||
		    js_num_value(val) != floorl(js_num_value(val)))
			return bad_form(err, p, key, where, "a non-negative integer");
		return 0;
	case KW_BOOL:
		return json_object_is_type(val, json_type_boolean)
			   ? 0
			   : bad_form(err, p, key, where, "a boolean");
	case KW_ARRAY:
		return json_object_is_type(val, json_type_array)
			   ? 0
			   : bad_form(err, p, key, where, "an array");
	case KW_STRINGS:
		if (!json_object_is_type(val, json_type_array))
			return bad_form(err, p, key, where, "an array of strings");
		for (size_t i = 0; i < json_object_array_length(val); i++)
			if (!json_object_is_type(json_object_array_get_idx(val, i),
						 json_type_string))
				return bad_form(err, p, key, where, "an array of strings");
		return 0;
	case KW_TYPE:
		if (json_object_is_type(val, json_type_array)) {
			for (size_t i = 0; i < json_object_array_length(val); i++)
				if (!is_type_name(json_object_array_get_idx(val, i)))
					return bad_form(err, p, key, where,
							"a type name or an array of them");
			return 0;
		}
		return is_type_name(val)
			   ? 0
			   : bad_form(err, p, key, where, "a type name or an array of them");
	case KW_PATTERN:
		if (!json_object_is_type(val, json_type_string))
			return bad_form(err, p, key, where, "a string");
		if (js_re_check(json_object_get_string(val), why, sizeof(why)) < 0) {
			js_quote_str(q, sizeof(q), json_object_get_string(val),
				     (size_t)json_object_get_string_len(val));
			return error_set_path(err, ERR_INTERNAL, p,
					      "The pattern %s at %s is not a valid ECMA-262 "
					      "regular expression: %s.",
					      q, where, why);
		}
		return 0;
	case KW_REF:
		if (!json_object_is_type(val, json_type_string))
			return bad_form(err, p, key, where, "a string");
		json_object *target = js_resolve_ref(c->root, json_object_get_string(val));
		js_quote_str(q, sizeof(q), json_object_get_string(val),
			     (size_t)json_object_get_string_len(val));
		if (!target)
			return error_set_path(
			    err, ERR_INTERNAL, p,
			    "The $ref %s at %s does not resolve to a local "
			    "definition (only '#' and '#/json/pointer' references "
			    "within the schema are supported).",
			    q, where);
		/* The target may lie under a keyword the walk does not enter
		 * ("definitions"); walk it too, once. */
		for (size_t i = 0; i < c->nseen; i++)
			if (c->seen[i] == target)
				return 0;
		if (c->nseen == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 16;
			json_object **n = realloc(c->seen, cap * sizeof(*n));
			if (!n)
				return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			c->seen = n;
			c->cap = cap;
		}
		c->seen[c->nseen++] = target;
		/* The target's own location, for its messages: the reference
		 * without the quotes js_quote_str() added. */
		q[strlen(q) - 1] = '\0';
		return check_schema(c, target, q + 1, depth + 1, err);
	}
	return 0;
}

/* Walks schema through the keywords the validator knows. strict: an unknown
 * keyword is an error (the audit); otherwise it is ignored, as the
 * specification wants, and not descended into. */
static int check_schema(struct check_ctx *c, json_object *schema, const char *where, int depth,
			struct sl_error *err)
{
	char p[JS_PATH_MAX];
	if (depth > JS_MAX_DEPTH)
		return error_set_path(err, ERR_INTERNAL, where,
				      "The schema nests too deeply at %s.", where);
	if (json_object_is_type(schema, json_type_boolean))
		return 0;
	if (!json_object_is_type(schema, json_type_object))
		return error_set_path(err, ERR_INTERNAL, where,
				      "The schema at %s is neither an object nor a boolean.",
				      where);
	json_object_object_foreach(schema, key, val)
	{
		size_t k = 0;
		while (k < ELEMENTSOF(keywords) && strcmp(keywords[k].name, key) != 0)
			k++;
		js_path_key(p, where, key);
		if (k == ELEMENTSOF(keywords)) {
			if (!c->strict)
				continue;
			return error_set_path(err, ERR_INTERNAL, p,
					      "The schema uses the keyword '%s' at %s, which the "
					      "validator does not implement.",
					      key, where);
		}
		int r = check_value(c, key, keywords[k].form, val, where, p, depth, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int check_walk(json_object *schema, bool strict, struct sl_error *err)
{
	struct check_ctx c = {.root = schema, .strict = strict};
	int r = check_schema(&c, schema, "#", 0, err);
	free(c.seen);
	return r;
}

int jsonschema_check_schema(json_object *schema, struct sl_error *err)
{
	return check_walk(schema, false, err);
}

int jsonschema_check_keywords(json_object *schema, struct sl_error *err)
{
	return check_walk(schema, true, err);
}
