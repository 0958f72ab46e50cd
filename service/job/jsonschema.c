/* The JSON Schema subset schedlab's schemas use. See jsonschema.h.
 *
 * json-c represents JSON null as a NULL json_object pointer, so every helper
 * here accepts NULL as "null". Validation stops at the first error in a
 * branch; oneOf/anyOf keep the most informative failing branch. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "job/jsonschema.h"

#define JS_PATH_MAX	 256
#define JS_MAX_DEPTH	 256 /* schema recursion, whatever the instance */
#define JS_MAX_REF_CHAIN 32  /* $refs followed without descending into the instance */
#define JS_RE_CACHE	 64

struct js_fail {
	enum error_kind kind; /* ERR_INVALID, or ERR_INTERNAL for a broken schema */
	int level;	      /* instance depth of path: how far validation got */
	long progress;	      /* sub-validations passed before this failure */
	char path[JS_PATH_MAX];
	char message[768];
};

struct js_ctx {
	json_object *root;
	int depth;
	long progress;
};

static int js_validate(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		       int level, int ref_chain, struct js_fail *fail);

static void utf8_fix_tail(char *s);
static int fail_set(struct js_ctx *ctx, struct js_fail *fail, enum error_kind kind,
		    const char *path, int level, const char *fmt, ...) _printf_(6, 7);
static int fail_set(struct js_ctx *ctx, struct js_fail *fail, enum error_kind kind,
		    const char *path, int level, const char *fmt, ...)
{
	va_list ap;
	fail->kind = kind;
	fail->level = level;
	fail->progress = ctx->progress;
	snprintf(fail->path, sizeof(fail->path), "%s", path);
	va_start(ap, fmt);
	vsnprintf(fail->message, sizeof(fail->message), fmt, ap);
	va_end(ap);
	utf8_fix_tail(fail->message);
	utf8_fix_tail(fail->path);
	return kind == ERR_INVALID ? -EINVAL : -ELOOP;
}

/* ---- paths and value descriptions ---- */

/* The longest prefix of s (len bytes) of at most max bytes that does not end
 * inside a UTF-8 sequence, so truncated messages stay valid UTF-8. */
static size_t utf8_prefix(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	size_t n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

/* Cuts an incomplete UTF-8 sequence off the end of s (after snprintf truncated it). */
static void utf8_fix_tail(char *s)
{
	size_t n = strlen(s), i = n, cont = 0;
	while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80 && cont < 4) {
		i--;
		cont++;
	}
	if (i == 0)
		return;
	unsigned char lead = (unsigned char)s[i - 1];
	size_t need = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : 0;
	if (lead >= 0x80 && need != cont)
		s[i - 1] = '\0';
}

/* A path that does not fit ends in "..." rather than silently misleading. */
static void path_mark_truncated(char out[JS_PATH_MAX], int n)
{
	if (n >= JS_PATH_MAX) {
		out[JS_PATH_MAX - 4] = '\0';
		utf8_fix_tail(out);
		strcat(out, "...");
	}
}

static void path_key(char out[JS_PATH_MAX], const char *path, const char *key)
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

static void path_index(char out[JS_PATH_MAX], const char *path, size_t i)
{
	path_mark_truncated(out, snprintf(out, JS_PATH_MAX, "%s[%zu]", path, i));
}

/* Quotes at most 48 bytes of s for a message, replacing control characters
 * and never cutting a UTF-8 sequence. */
static void quote_str(char *out, size_t outsz, const char *s, size_t len)
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

static bool is_number(json_object *o)
{
	if (json_object_is_type(o, json_type_int))
		return true;
	return json_object_is_type(o, json_type_double) && isfinite(json_object_get_double(o));
}

static long double num_value(json_object *o)
{
	if (json_object_is_type(o, json_type_double))
		return json_object_get_double(o);
	int64_t i = json_object_get_int64(o);
	/* json-c keeps integers above INT64_MAX as uint64. */
	if (i == INT64_MAX)
		return (long double)json_object_get_uint64(o);
	return (long double)i;
}

static void fmt_num(char *out, size_t outsz, long double v)
{
	if (v == floorl(v) && fabsl(v) < 1e18L)
		snprintf(out, outsz, "%lld", (long long)v);
	else
		snprintf(out, outsz, "%.10Lg", v);
}

static void describe(char *out, size_t outsz, json_object *o)
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
		if (is_number(o))
			fmt_num(out, outsz, num_value(o));
		else
			snprintf(out, outsz, "a non-finite number");
		break;
	case json_type_string:
		quote_str(out, outsz, json_object_get_string(o),
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

static const char *type_noun(json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_int:
		return "an integer";
	case json_type_double:
		return is_number(o) ? "a number" : "a non-finite number";
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

static bool js_equal(json_object *a, json_object *b)
{
	if (is_number(a) && is_number(b))
		return num_value(a) == num_value(b);
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

/* ---- regular expressions: compiled once per pattern text ---- */

static pthread_mutex_t re_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *pattern;
	regex_t re;
} re_cache[JS_RE_CACHE];
static size_t re_cached;

/* 1 if s (len bytes) matches pattern, 0 if not, -EINVAL if pattern does not
 * compile. A string with an embedded NUL never matches: regexec() would stop
 * at the NUL and judge only a prefix. */
static int js_re_match(const char *pattern, const char *s, size_t len)
{
	regex_t tmp, *re = NULL;
	bool own = false;

	pthread_mutex_lock(&re_lock);
	for (size_t i = 0; i < re_cached; i++)
		if (strcmp(re_cache[i].pattern, pattern) == 0) {
			re = &re_cache[i].re;
			break;
		}
	if (!re) {
		if (regcomp(&tmp, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
			pthread_mutex_unlock(&re_lock);
			return -EINVAL;
		}
		char *copy = re_cached < JS_RE_CACHE ? strdup(pattern) : NULL;
		if (copy) {
			re_cache[re_cached].pattern = copy;
			re_cache[re_cached].re = tmp;
			re = &re_cache[re_cached++].re;
		} else {
			re = &tmp;
			own = true;
		}
	}
	pthread_mutex_unlock(&re_lock);

	int m = strlen(s) == len && regexec(re, s, 0, NULL, 0) == 0;
	if (own)
		regfree(&tmp);
	return m;
}

/* ---- keyword groups ---- */

static json_object *kw(json_object *schema, const char *name)
{
	json_object *v = NULL;
	return json_object_object_get_ex(schema, name, &v) ? v : NULL;
}

static bool has_kw(json_object *schema, const char *name)
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
		return is_number(o);
	if (strcmp(t, "integer") == 0)
		return is_number(o) && num_value(o) == floorl(num_value(o));
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

static int check_type(struct js_ctx *ctx, json_object *type, json_object *inst, const char *path,
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
		return fail_set(ctx, fail, ERR_INTERNAL, path, level,
				"The schema's 'type' at %s is neither a string nor an array.",
				path);
	return fail_set(ctx, fail, ERR_INVALID, path, level, "%s must be %s, not %s.", path, want,
			type_noun(inst));
}

static int check_enum(struct js_ctx *ctx, json_object *list, json_object *inst, const char *path,
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
		describe(one, sizeof(one), json_object_array_get_idx(list, i));
		if (l + strlen(one) + 8 >= sizeof(opts)) {
			snprintf(opts + l, sizeof(opts) - l, ", ...");
			break;
		}
		snprintf(opts + l, sizeof(opts) - l, "%s%s", i ? ", " : "", one);
	}
	describe(got, sizeof(got), inst);
	return fail_set(ctx, fail, ERR_INVALID, path, level, "%s is not one of %s (it is %s).",
			path, opts, got);
}

static int check_number(struct js_ctx *ctx, json_object *schema, json_object *inst,
			const char *path, int level, struct js_fail *fail)
{
	long double v = num_value(inst);
	char lim[64], got[64];
	json_object *k;
	fmt_num(got, sizeof(got), v);
	if ((k = kw(schema, "minimum")) && is_number(k) && v < num_value(k)) {
		fmt_num(lim, sizeof(lim), num_value(k));
		return fail_set(ctx, fail, ERR_INVALID, path, level,
				"%s must be at least %s (it is %s).", path, lim, got);
	}
	if ((k = kw(schema, "maximum")) && is_number(k) && v > num_value(k)) {
		fmt_num(lim, sizeof(lim), num_value(k));
		return fail_set(ctx, fail, ERR_INVALID, path, level,
				"%s must be at most %s (it is %s).", path, lim, got);
	}
	if ((k = kw(schema, "exclusiveMinimum")) && is_number(k) && v <= num_value(k)) {
		fmt_num(lim, sizeof(lim), num_value(k));
		return fail_set(ctx, fail, ERR_INVALID, path, level,
				"%s must be greater than %s (it is %s).", path, lim, got);
	}
	if ((k = kw(schema, "exclusiveMaximum")) && is_number(k) && v >= num_value(k)) {
		fmt_num(lim, sizeof(lim), num_value(k));
		return fail_set(ctx, fail, ERR_INVALID, path, level,
				"%s must be less than %s (it is %s).", path, lim, got);
	}
	return 0;
}

static size_t utf8_code_points(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}

static int check_string(struct js_ctx *ctx, json_object *schema, json_object *inst,
			const char *path, int level, struct js_fail *fail)
{
	const char *s = json_object_get_string(inst);
	size_t len = (size_t)json_object_get_string_len(inst);
	json_object *k;
	if (has_kw(schema, "minLength") || has_kw(schema, "maxLength")) {
		size_t cp = utf8_code_points(s, len);
		if ((k = kw(schema, "minLength")) && (long double)cp < num_value(k))
			return fail_set(ctx, fail, ERR_INVALID, path, level,
					"%s must be at least %lld characters long (it has %zu).",
					path, (long long)num_value(k), cp);
		if ((k = kw(schema, "maxLength")) && (long double)cp > num_value(k))
			return fail_set(ctx, fail, ERR_INVALID, path, level,
					"%s must be at most %lld characters long (it has %zu).",
					path, (long long)num_value(k), cp);
	}
	if ((k = kw(schema, "pattern"))) {
		int m = js_re_match(json_object_get_string(k), s, len);
		if (m < 0)
			return fail_set(ctx, fail, ERR_INTERNAL, path, level,
					"The schema's pattern '%s' for %s is not a valid POSIX "
					"extended regular expression.",
					json_object_get_string(k), path);
		if (!m) {
			char got[64];
			quote_str(got, sizeof(got), s, len);
			return fail_set(ctx, fail, ERR_INVALID, path, level,
					"%s must match the pattern '%s' (it is %s).", path,
					json_object_get_string(k), got);
		}
	}
	return 0;
}

static int check_array(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		       int level, struct js_fail *fail)
{
	size_t n = json_object_array_length(inst);
	json_object *k;
	if ((k = kw(schema, "minItems")) && (long double)n < num_value(k))
		return fail_set(ctx, fail, ERR_INVALID, path, level,
				"%s must have at least %lld items (it has %zu).", path,
				(long long)num_value(k), n);
	if ((k = kw(schema, "maxItems")) && (long double)n > num_value(k))
		return fail_set(ctx, fail, ERR_INVALID, path, level,
				"%s must have at most %lld items (it has %zu).", path,
				(long long)num_value(k), n);
	if ((k = kw(schema, "uniqueItems")) && json_object_get_boolean(k)) {
		/* Quadratic, but maxItems bounds every array our schemas allow to be unique. */
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (js_equal(json_object_array_get_idx(inst, i),
					     json_object_array_get_idx(inst, j))) {
					char p[JS_PATH_MAX];
					path_index(p, path, i);
					return fail_set(ctx, fail, ERR_INVALID, p, level + 1,
							"%s repeats item %zu; the items of %s must "
							"be unique.",
							p, j, path);
				}
	}
	if ((k = kw(schema, "items")))
		for (size_t i = 0; i < n; i++) {
			char p[JS_PATH_MAX];
			path_index(p, path, i);
			int r = js_validate(ctx, k, json_object_array_get_idx(inst, i), p,
					    level + 1, 0, fail);
			if (r < 0)
				return r;
			ctx->progress++;
		}
	return 0;
}

static int check_object(struct js_ctx *ctx, json_object *schema, json_object *inst,
			const char *path, int level, struct js_fail *fail)
{
	size_t n = (size_t)json_object_object_length(inst);
	json_object *k,
	    *props = kw(schema, "properties"), *pprops = kw(schema, "patternProperties"),
	    *addl = kw(schema, "additionalProperties"), *names = kw(schema, "propertyNames");
	bool has_addl = has_kw(schema, "additionalProperties");
	int r;

	if ((k = kw(schema, "minProperties")) && (long double)n < num_value(k))
		return fail_set(ctx, fail, ERR_INVALID, path, level,
				"%s must have at least %lld members (it has %zu).", path,
				(long long)num_value(k), n);
	if ((k = kw(schema, "maxProperties")) && (long double)n > num_value(k))
		return fail_set(ctx, fail, ERR_INVALID, path, level,
				"%s must have at most %lld members (it has %zu).", path,
				(long long)num_value(k), n);

	/* Missing members first: they say most about what the document is
	 * meant to be. */
	if ((k = kw(schema, "required"))) {
		size_t nr = json_object_array_length(k);
		for (size_t i = 0; i < nr; i++) {
			const char *name = json_object_get_string(json_object_array_get_idx(k, i));
			if (name && !json_object_object_get_ex(inst, name, NULL)) {
				char p[JS_PATH_MAX];
				path_key(p, path, name);
				return fail_set(ctx, fail, ERR_INVALID, p, level + 1,
						"%s is required: %s has no member '%s'.", p, path,
						name);
			}
		}
	}

	json_object_object_foreach(inst, key, val)
	{
		char p[JS_PATH_MAX];
		bool matched = false;
		path_key(p, path, key);
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
				quote_str(q, sizeof(q), key, strlen(key));
				/* The key's own message talks about the key as a value;
				 * say plainly that the name is what is wrong. */
				return fail_set(ctx, fail, ERR_INVALID, p, level + 1,
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
				int m = js_re_match(pat, key, strlen(key));
				if (m < 0)
					return fail_set(
					    ctx, fail, ERR_INTERNAL, p, level + 1,
					    "The schema's patternProperties pattern '%s' "
					    "is not a valid POSIX extended regular "
					    "expression.",
					    pat);
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
				return fail_set(ctx, fail, ERR_INVALID, p, level + 1,
						"%s is not an allowed member of %s%s%s%s.", p, path,
						*allowed ? " (allowed: " : "", allowed,
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

static json_object *resolve_ref(json_object *root, const char *ref);

/* How well an object fits a branch's shape: members the branch names minus
 * members it forbids (additionalProperties: false). Follows $refs. */
static long branch_fit(struct js_ctx *ctx, json_object *branch, json_object *inst)
{
	for (int i = 0; i < JS_MAX_REF_CHAIN && json_object_is_type(branch, json_type_object);
	     i++) {
		json_object *ref = kw(branch, "$ref");
		if (!ref)
			break;
		branch = resolve_ref(ctx->root, json_object_get_string(ref));
	}
	if (!json_object_is_type(inst, json_type_object) ||
	    !json_object_is_type(branch, json_type_object))
		return 0;
	json_object *props = kw(branch, "properties"), *addl = kw(branch, "additionalProperties");
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
static int check_branches(struct js_ctx *ctx, json_object *list, bool exactly_one,
			  json_object *inst, const char *path, int level, struct js_fail *fail)
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
				return fail_set(ctx, fail, ERR_INVALID, path, level,
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
		return fail_set(ctx, fail, ERR_INVALID, path, level,
				"%s matches none of the allowed forms.", path);
	*fail = best;
	fail->progress = ctx->progress;
	return -EINVAL;
}

/* Resolves "#" or "#/a/b" (JSON pointer, ~0 and ~1 unescaped) from the root. */
static json_object *resolve_ref(json_object *root, const char *ref)
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

static int js_validate(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		       int level, int ref_chain, struct js_fail *fail)
{
	json_object *k;
	int r;

	if (json_object_is_type(schema, json_type_boolean)) {
		if (json_object_get_boolean(schema))
			return 0;
		return fail_set(ctx, fail, ERR_INVALID, path, level, "%s is not allowed here.",
				path);
	}
	if (!json_object_is_type(schema, json_type_object))
		return fail_set(ctx, fail, ERR_INTERNAL, path, level,
				"The schema for %s is neither an object nor a boolean.", path);
	if (ctx->depth >= JS_MAX_DEPTH)
		return fail_set(ctx, fail, ERR_INTERNAL, path, level,
				"The schema nests deeper than %d levels at %s.", JS_MAX_DEPTH,
				path);
	ctx->depth++;

	if ((k = kw(schema, "$ref"))) {
		const char *ref = json_object_get_string(k);
		json_object *target = ref ? resolve_ref(ctx->root, ref) : NULL;
		if (!target) {
			r = fail_set(ctx, fail, ERR_INTERNAL, path, level,
				     "The schema's $ref '%s' (used for %s) does not resolve to a "
				     "local definition.",
				     ref ? ref : "", path);
			goto out;
		}
		if (ref_chain >= JS_MAX_REF_CHAIN) {
			r = fail_set(ctx, fail, ERR_INTERNAL, path, level,
				     "The schema's $ref '%s' loops (more than %d references "
				     "without progress at %s).",
				     ref, JS_MAX_REF_CHAIN, path);
			goto out;
		}
		r = js_validate(ctx, target, inst, path, level, ref_chain + 1, fail);
		if (r < 0)
			goto out;
	}
	if ((k = kw(schema, "type")) && (r = check_type(ctx, k, inst, path, level, fail)) < 0)
		goto out;
	if (has_kw(schema, "const") && !js_equal(kw(schema, "const"), inst)) {
		char want[64], got[64];
		describe(want, sizeof(want), kw(schema, "const"));
		describe(got, sizeof(got), inst);
		r = fail_set(ctx, fail, ERR_INVALID, path, level, "%s must be %s (it is %s).", path,
			     want, got);
		goto out;
	}
	if ((k = kw(schema, "enum")) && (r = check_enum(ctx, k, inst, path, level, fail)) < 0)
		goto out;
	if (is_number(inst) && (r = check_number(ctx, schema, inst, path, level, fail)) < 0)
		goto out;
	if (json_object_is_type(inst, json_type_string) &&
	    (r = check_string(ctx, schema, inst, path, level, fail)) < 0)
		goto out;
	if (json_object_is_type(inst, json_type_array) &&
	    (r = check_array(ctx, schema, inst, path, level, fail)) < 0)
		goto out;
	if (json_object_is_type(inst, json_type_object) &&
	    (r = check_object(ctx, schema, inst, path, level, fail)) < 0)
		goto out;
	if ((k = kw(schema, "allOf"))) {
		for (size_t i = 0; i < json_object_array_length(k); i++) {
			r = js_validate(ctx, json_object_array_get_idx(k, i), inst, path, level, 0,
					fail);
			if (r < 0)
				goto out;
		}
	}
	if ((k = kw(schema, "anyOf")) &&
	    (r = check_branches(ctx, k, false, inst, path, level, fail)) < 0)
		goto out;
	if ((k = kw(schema, "oneOf")) &&
	    (r = check_branches(ctx, k, true, inst, path, level, fail)) < 0)
		goto out;
	if ((k = kw(schema, "not"))) {
		struct js_fail f = {0};
		r = js_validate(ctx, k, inst, path, level, 0, &f);
		if (r < 0 && f.kind == ERR_INTERNAL) {
			*fail = f;
			goto out;
		}
		if (r == 0) {
			r = fail_set(ctx, fail, ERR_INVALID, path, level,
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
		path_key(p, where, key);
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
				path_key(sp, p, sk);
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
				path_index(sp, p, i);
				r = check_kw(root, json_object_array_get_idx(val, i), sp, depth + 1,
					     err);
			}
		} else if (strcmp(key, "$ref") == 0 &&
			   !resolve_ref(root, json_object_get_string(val)
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
