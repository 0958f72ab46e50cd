/* The JSON Schema validator's per-keyword checks: type, enum, numbers,
 * strings, arrays, objects and the oneOf/anyOf branches. See
 * jsonschema-internal.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "job/jsonschema-internal.h"
#include "proto/utf8.h"

/* ---- keyword groups ---- */

json_object *js_kw(json_object *schema, const char *name)
{
	json_object *v = NULL;
	return json_object_object_get_ex(schema, name, &v) ? v : NULL;
}

bool js_has_kw(json_object *schema, const char *name)
{
	return json_object_object_get_ex(schema, name, NULL);
}

static bool type_matches(const char *t, json_object *o)
{
	if (strcmp(t, "null") == 0)
		return o == NULL;
	if (strcmp(t, "boolean") == 0)
		return json_object_is_type(o, json_type_boolean);
	if (strcmp(t, "object") == 0)
		return json_object_is_type(o, json_type_object);
	if (strcmp(t, "array") == 0)
		return json_object_is_type(o, json_type_array);
	if (strcmp(t, "string") == 0)
		return json_object_is_type(o, json_type_string);
	if (strcmp(t, "number") == 0)
		return js_is_number(o);
	if (strcmp(t, "integer") == 0)
		return js_is_number(o) && js_num_value(o) == floorl(js_num_value(o));
	return false;
}

static const char *type_article(const char *t)
{
	static const struct {
		const char *t, *noun;
	} nouns[] = {{"null", "null"},	       {"boolean", "a boolean"}, {"object", "an object"},
		     {"array", "an array"},    {"string", "a string"},	 {"number", "a number"},
		     {"integer", "an integer"}};
	for (size_t i = 0; i < ELEMENTSOF(nouns); i++)
		if (strcmp(nouns[i].t, t) == 0)
			return nouns[i].noun;
	return t;
}

int js_check_type(struct js_ctx *ctx, json_object *type, json_object *inst, const char *path,
		  int level, struct js_fail *fail)
{
	char want[256] = "";
	if (json_object_is_type(type, json_type_string)) {
		if (type_matches(json_object_get_string(type), inst))
			return 0;
		snprintf(want, sizeof(want), "%s", type_article(json_object_get_string(type)));
	} else if (json_object_is_type(type, json_type_array)) {
		size_t n = json_object_array_length(type);
		for (size_t i = 0; i < n; i++)
			if (type_matches(json_object_get_string(json_object_array_get_idx(type, i)),
					 inst))
				return 0;
		for (size_t i = 0; i < n; i++) {
			size_t l = strlen(want);
			snprintf(want + l, sizeof(want) - l, "%s%s",
				 i == 0 ? "" : (i + 1 == n ? " or " : ", "),
				 type_article(
				     json_object_get_string(json_object_array_get_idx(type, i))));
		}
	} else
		return js_fail_set(ctx, fail, ERR_INTERNAL, path, level,
				   "The schema's 'type' at %s is neither a string nor an array.",
				   path);
	return js_fail_set(ctx, fail, ERR_INVALID, path, level, "%s must be %s, not %s.", path,
			   want, js_type_noun(inst));
}

int js_check_enum(struct js_ctx *ctx, json_object *list, json_object *inst, const char *path,
		  int level, struct js_fail *fail)
{
	size_t n = json_object_array_length(list);
	for (size_t i = 0; i < n; i++)
		if (js_equal(json_object_array_get_idx(list, i), inst))
			return 0;
	char opts[512] = "", got[64];
	for (size_t i = 0; i < n; i++) {
		char one[64];
		size_t l = strlen(opts);
		js_describe(one, sizeof(one), json_object_array_get_idx(list, i));
		if (l + strlen(one) + 8 >= sizeof(opts)) {
			snprintf(opts + l, sizeof(opts) - l, ", ...");
			break;
		}
		snprintf(opts + l, sizeof(opts) - l, "%s%s", i ? ", " : "", one);
	}
	js_describe(got, sizeof(got), inst);
	return js_fail_set(ctx, fail, ERR_INVALID, path, level, "%s is not one of %s (it is %s).",
			   path, opts, got);
}

int js_check_number(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		    int level, struct js_fail *fail)
{
	long double v = js_num_value(inst);
	char lim[64], got[64];
	json_object *k;
	js_fmt_num(got, sizeof(got), v);
	if ((k = js_kw(schema, "minimum")) && js_is_number(k) && v < js_num_value(k)) {
		js_fmt_num(lim, sizeof(lim), js_num_value(k));
		return js_fail_set(ctx, fail, ERR_INVALID, path, level,
				   "%s must be at least %s (it is %s).", path, lim, got);
	}
	if ((k = js_kw(schema, "maximum")) && js_is_number(k) && v > js_num_value(k)) {
		js_fmt_num(lim, sizeof(lim), js_num_value(k));
		return js_fail_set(ctx, fail, ERR_INVALID, path, level,
				   "%s must be at most %s (it is %s).", path, lim, got);
	}
	if ((k = js_kw(schema, "exclusiveMinimum")) && js_is_number(k) && v <= js_num_value(k)) {
		js_fmt_num(lim, sizeof(lim), js_num_value(k));
		return js_fail_set(ctx, fail, ERR_INVALID, path, level,
				   "%s must be greater than %s (it is %s).", path, lim, got);
	}
	if ((k = js_kw(schema, "exclusiveMaximum")) && js_is_number(k) && v >= js_num_value(k)) {
		js_fmt_num(lim, sizeof(lim), js_num_value(k));
		return js_fail_set(ctx, fail, ERR_INVALID, path, level,
				   "%s must be less than %s (it is %s).", path, lim, got);
	}
	return 0;
}

/* Characters in s[0..len): UTF-8 sequences, a byte that starts none counting
 * as one. */
static size_t utf8_code_points(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; n++) {
		size_t k = utf8_seq_len(s + i, len - i);
		i += k ? k : 1;
	}
	return n;
}

int js_check_string(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		    int level, struct js_fail *fail)
{
	const char *s = json_object_get_string(inst);
	size_t len = (size_t)json_object_get_string_len(inst);
	json_object *k;
	if (js_has_kw(schema, "minLength") || js_has_kw(schema, "maxLength")) {
		size_t cp = utf8_code_points(s, len);
		if ((k = js_kw(schema, "minLength")) && (long double)cp < js_num_value(k))
			return js_fail_set(ctx, fail, ERR_INVALID, path, level,
					   "%s must be at least %lld characters long (it has %zu).",
					   path, (long long)js_num_value(k), cp);
		if ((k = js_kw(schema, "maxLength")) && (long double)cp > js_num_value(k))
			return js_fail_set(ctx, fail, ERR_INVALID, path, level,
					   "%s must be at most %lld characters long (it has %zu).",
					   path, (long long)js_num_value(k), cp);
	}
	if ((k = js_kw(schema, "pattern"))) {
		char why[256] = "";
		int m = json_object_is_type(k, json_type_string)
			    ? js_re_match(json_object_get_string(k), s, len, why, sizeof(why))
			    : -EINVAL;
		if (m < 0)
			return js_fail_set(ctx, fail, ERR_INTERNAL, path, level,
					   "The schema's pattern '%s' for %s cannot be used: %s.",
					   json_object_get_string(k), path,
					   *why ? why : "it is not a string");
		if (!m) {
			char got[64];
			js_quote_str(got, sizeof(got), s, len);
			return js_fail_set(ctx, fail, ERR_INVALID, path, level,
					   "%s must match the pattern '%s' (it is %s).", path,
					   json_object_get_string(k), got);
		}
	}
	return 0;
}

int js_check_array(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		   int level, struct js_fail *fail)
{
	size_t n = json_object_array_length(inst);
	json_object *k;
	if ((k = js_kw(schema, "minItems")) && (long double)n < js_num_value(k))
		return js_fail_set(ctx, fail, ERR_INVALID, path, level,
				   "%s must have at least %lld items (it has %zu).", path,
				   (long long)js_num_value(k), n);
	if ((k = js_kw(schema, "maxItems")) && (long double)n > js_num_value(k))
		return js_fail_set(ctx, fail, ERR_INVALID, path, level,
				   "%s must have at most %lld items (it has %zu).", path,
				   (long long)js_num_value(k), n);
	if ((k = js_kw(schema, "uniqueItems")) && json_object_get_boolean(k)) {
		/* Quadratic, but maxItems bounds every array our schemas allow to be unique. */
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (js_equal(json_object_array_get_idx(inst, i),
					     json_object_array_get_idx(inst, j))) {
					char p[JS_PATH_MAX];
					js_path_index(p, path, i);
					return js_fail_set(
					    ctx, fail, ERR_INVALID, p, level + 1,
					    "%s repeats item %zu; the items of %s must "
					    "be unique.",
					    p, j, path);
				}
	}
	if ((k = js_kw(schema, "items")))
		for (size_t i = 0; i < n; i++) {
			char p[JS_PATH_MAX];
			js_path_index(p, path, i);
			int r = js_validate(ctx, k, json_object_array_get_idx(inst, i), p,
					    level + 1, 0, fail);
			if (r < 0)
				return r;
			ctx->progress++;
		}
	return 0;
}

int js_check_object(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		    int level, struct js_fail *fail)
{
	size_t n = (size_t)json_object_object_length(inst);
	json_object *k,
	    *props = js_kw(schema, "properties"), *pprops = js_kw(schema, "patternProperties"),
	    *addl = js_kw(schema, "additionalProperties"), *names = js_kw(schema, "propertyNames");
	bool has_addl = js_has_kw(schema, "additionalProperties");
	int r;

	if ((k = js_kw(schema, "minProperties")) && (long double)n < js_num_value(k))
		return js_fail_set(ctx, fail, ERR_INVALID, path, level,
				   "%s must have at least %lld members (it has %zu).", path,
				   (long long)js_num_value(k), n);
	if ((k = js_kw(schema, "maxProperties")) && (long double)n > js_num_value(k))
		return js_fail_set(ctx, fail, ERR_INVALID, path, level,
				   "%s must have at most %lld members (it has %zu).", path,
				   (long long)js_num_value(k), n);

	/* Missing members first: they say most about what the document is
	 * meant to be. */
	if ((k = js_kw(schema, "required"))) {
		size_t nr = json_object_array_length(k);
		for (size_t i = 0; i < nr; i++) {
			const char *name = json_object_get_string(json_object_array_get_idx(k, i));
			if (name && !json_object_object_get_ex(inst, name, NULL)) {
				char p[JS_PATH_MAX];
				js_path_key(p, path, name);
				return js_fail_set(ctx, fail, ERR_INVALID, p, level + 1,
						   "%s is required: %s has no member '%s'.", p,
						   path, name);
			}
		}
	}

	json_object_object_foreach(inst, key, val)
	{
		char p[JS_PATH_MAX];
		bool matched = false;
		js_path_key(p, path, key);
		if (names) {
			_cleanup_json_ json_object *kobj = json_object_new_string(key);
			struct js_fail f = {0};
			r = js_validate(ctx, names, kobj, p, level + 1, 0, &f);
			if (r < 0) {
				if (f.kind == ERR_INTERNAL) {
					*fail = f;
					return r;
				}
				char q[64];
				js_quote_str(q, sizeof(q), key, strlen(key));
				/* The key's own message talks about the key as a value;
				 * say plainly that the name is what is wrong. */
				return js_fail_set(ctx, fail, ERR_INVALID, p, level + 1,
						   "%s is not an allowed name in %s: %s", q, path,
						   f.message);
			}
		}
		json_object *sub;
		if (props && json_object_object_get_ex(props, key, &sub)) {
			matched = true;
			r = js_validate(ctx, sub, val, p, level + 1, 0, fail);
			if (r < 0)
				return r;
		}
		if (pprops) {
			json_object_object_foreach(pprops, pat, psub)
			{
				char why[256] = "";
				int m = js_re_match(pat, key, strlen(key), why, sizeof(why));
				if (m < 0)
					return js_fail_set(ctx, fail, ERR_INTERNAL, p, level + 1,
							   "The schema's patternProperties pattern "
							   "'%s' cannot be used: %s.",
							   pat, why);
				if (!m)
					continue;
				matched = true;
				r = js_validate(ctx, psub, val, p, level + 1, 0, fail);
				if (r < 0)
					return r;
			}
		}
		if (!matched && has_addl) {
			if (json_object_is_type(addl, json_type_boolean) &&
			    !json_object_get_boolean(addl)) {
				char allowed[384] = "";
				if (props) {
					json_object_object_foreach(props, pk, pv_unused)
					{
						(void)pv_unused;
						size_t l = strlen(allowed);
						if (l + strlen(pk) + 8 >= sizeof(allowed)) {
							snprintf(allowed + l, sizeof(allowed) - l,
								 ", ...");
							break;
						}
						snprintf(allowed + l, sizeof(allowed) - l, "%s'%s'",
							 l ? ", " : "", pk);
					}
				}
				return js_fail_set(ctx, fail, ERR_INVALID, p, level + 1,
						   "%s is not an allowed member of %s%s%s%s.", p,
						   path, *allowed ? " (allowed: " : "", allowed,
						   *allowed ? ")" : "");
			}
			r = js_validate(ctx, addl, val, p, level + 1, 0, fail);
			if (r < 0)
				return r;
		}
		ctx->progress++;
	}

	return 0;
}

/* How well an object fits a branch's shape: members the branch names minus
 * members it forbids (additionalProperties: false). Follows $refs. */
static long branch_fit(struct js_ctx *ctx, json_object *branch, json_object *inst)
{
	for (int i = 0; i < JS_MAX_REF_CHAIN && json_object_is_type(branch, json_type_object);
	     i++) {
		json_object *ref = js_kw(branch, "$ref");
		if (!ref)
			break;
		branch = js_resolve_ref(ctx->root, json_object_get_string(ref));
	}
	if (!json_object_is_type(inst, json_type_object) ||
	    !json_object_is_type(branch, json_type_object))
		return 0;
	json_object *props = js_kw(branch, "properties"),
		    *addl = js_kw(branch, "additionalProperties");
	bool closed =
	    json_object_is_type(addl, json_type_boolean) && !json_object_get_boolean(addl);
	long fit = 0;
	json_object_object_foreach(inst, key, val_unused)
	{
		(void)val_unused;
		if (props && json_object_object_get_ex(props, key, NULL))
			fit++;
		else if (closed)
			fit--;
	}
	return fit;
}

/* oneOf (exactly one), anyOf (at least one). On failure reports the branch
 * that got furthest: deepest in the instance, then the best fit of the
 * object's members to the branch, then most sub-validations passed. */
int js_check_branches(struct js_ctx *ctx, json_object *list, bool exactly_one, json_object *inst,
		      const char *path, int level, struct js_fail *fail)
{
	size_t n = json_object_array_length(list), matched = 0, first = 0;
	struct js_fail best = {.level = -1, .progress = -1};
	long best_fit = 0;
	for (size_t i = 0; i < n; i++) {
		struct js_fail f = {0};
		long before = ctx->progress;
		int r =
		    js_validate(ctx, json_object_array_get_idx(list, i), inst, path, level, 0, &f);
		if (r == 0) {
			if (matched++ == 0)
				first = i;
			else if (exactly_one) {
				return js_fail_set(ctx, fail, ERR_INVALID, path, level,
						   "%s matches more than one of the allowed forms "
						   "(%zu and %zu), so it is ambiguous.",
						   path, first + 1, i + 1);
			}
			if (!exactly_one)
				return 0;
			continue;
		}
		if (f.kind == ERR_INTERNAL) {
			*fail = f;
			return r;
		}
		f.progress -= before;
		long fit = branch_fit(ctx, json_object_array_get_idx(list, i), inst);
		if (f.level > best.level ||
		    (f.level == best.level &&
		     (fit > best_fit || (fit == best_fit && f.progress > best.progress)))) {
			best = f;
			best_fit = fit;
		}
	}
	if (matched)
		return 0;
	if (best.level < 0)
		return js_fail_set(ctx, fail, ERR_INVALID, path, level,
				   "%s matches none of the allowed forms.", path);
	*fail = best;
	fail->progress = ctx->progress;
	return -EINVAL;
}
