/* The JSON Schema subset schedlab's schemas use. See jsonschema.h.
 *
 * json-c represents JSON null as a NULL json_object pointer, so every helper
 * here accepts NULL as "null". Validation stops at the first error in a
 * branch; oneOf/anyOf keep the most informative failing branch. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
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

/* Resolves "#" or "#/a/b" (JSON pointer, ~0 and ~1 unescaped) from the root. */
json_object *js_resolve_ref(json_object *root, const char *ref)
{
	if (ref[0] != '#')
		return NULL;
	json_object *cur = root;
	const char *p = ref + 1;
	while (*p) {
		if (*p != '/')
			return NULL;
		p++;
		char tok[128];
		size_t n = 0;
		while (*p && *p != '/') {
			char c = *p++;
			if (c == '~' && (*p == '0' || *p == '1'))
				c = *p++ == '0' ? '~' : '/';
			if (n + 1 >= sizeof(tok))
				return NULL;
			tok[n++] = c;
		}
		tok[n] = '\0';
		if (!json_object_object_get_ex(cur, tok, &cur))
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

/* ---- the keyword audit for tests ---- */

static const char *const implemented[] = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "$ref",
    "minProperties",
    "maxProperties",
    /* annotations, ignored on purpose */
    "$schema",
    "$id",
    "title",
    "description",
    "$defs",
    "$comment",
    "default",
    "examples",
};

static int check_kw(json_object *root, json_object *schema, const char *where, int depth,
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
		bool known = false;
		for (size_t i = 0; i < ELEMENTSOF(implemented); i++)
			if (strcmp(implemented[i], key) == 0)
				known = true;
		js_path_key(p, where, key);
		if (!known)
			return error_set_path(err, ERR_INTERNAL, p,
					      "The schema uses the keyword '%s' at %s, which the "
					      "validator does not implement.",
					      key, where);
		int r = 0;
		if (strcmp(key, "properties") == 0 || strcmp(key, "patternProperties") == 0 ||
		    strcmp(key, "$defs") == 0) {
			json_object_object_foreach(val, sk, sv)
			{
				char sp[JS_PATH_MAX];
				js_path_key(sp, p, sk);
				if (strcmp(key, "patternProperties") == 0 &&
				    js_re_match(sk, "", 0) < 0)
					return error_set_path(err, ERR_INTERNAL, sp,
							      "The pattern '%s' is not a valid "
							      "POSIX extended regular expression.",
							      sk);
				if ((r = check_kw(root, sv, sp, depth + 1, err)) < 0)
					return r;
			}
		} else if (strcmp(key, "additionalProperties") == 0 ||
			   strcmp(key, "propertyNames") == 0 || strcmp(key, "items") == 0 ||
			   strcmp(key, "not") == 0) {
			r = check_kw(root, val, p, depth + 1, err);
		} else if (strcmp(key, "oneOf") == 0 || strcmp(key, "anyOf") == 0 ||
			   strcmp(key, "allOf") == 0) {
			for (size_t i = 0; i < json_object_array_length(val) && r == 0; i++) {
				char sp[JS_PATH_MAX];
				js_path_index(sp, p, i);
				r = check_kw(root, json_object_array_get_idx(val, i), sp, depth + 1,
					     err);
			}
		} else if (strcmp(key, "$ref") == 0 &&
			   !js_resolve_ref(root, json_object_get_string(val)
						     ? json_object_get_string(val)
						     : "")) {
			return error_set_path(err, ERR_INTERNAL, p,
					      "The $ref '%s' at %s does not resolve to a local "
					      "definition.",
					      json_object_get_string(val), where);
		} else if (strcmp(key, "pattern") == 0 &&
			   js_re_match(json_object_get_string(val), "", 0) < 0) {
			return error_set_path(err, ERR_INTERNAL, p,
					      "The pattern '%s' is not a valid POSIX extended "
					      "regular expression.",
					      json_object_get_string(val));
		}
		if (r < 0)
			return r;
	}
	return 0;
}

int jsonschema_check_keywords(json_object *schema, struct sl_error *err)
{
	return check_kw(schema, schema, "#", 0, err);
}
