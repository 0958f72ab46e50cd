/* What the files of the JSON Schema validator share (jsonschema.c: the
 * public entry points, $ref resolution and the keyword walk;
 * jsonschema_keywords.c: the per-keyword checks; jsonschema_values.c: paths,
 * value descriptions and equality; jsonschema_ecma.c and jsonschema_regex.c:
 * ECMA-262 patterns translated for and run by PCRE2). Not for use outside
 * service/job/jsonschema*.c.
 *
 * json-c represents JSON null as a NULL json_object pointer, so every helper
 * here accepts NULL as "null". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define JS_PATH_MAX	 256
#define JS_MAX_DEPTH	 256 /* schema recursion, whatever the instance */
#define JS_MAX_REF_CHAIN 32  /* $refs followed without descending into the instance */
#define JS_RE_CACHE	 256

/* The first failure in a branch of the validation. */
struct js_fail {
	enum error_kind kind; /* ERR_INVALID, or ERR_INTERNAL for a broken schema */
	int level;	      /* instance depth of path: how far validation got */
	long progress;	      /* sub-validations passed before this failure */
	char path[JS_PATH_MAX];
	char message[768];
};

/* One validation: the root schema ($refs resolve from it), the schema
 * recursion depth and a count of sub-validations passed. */
struct js_ctx {
	json_object *root;
	int depth;
	long progress;
};

/* ---- jsonschema.c ---- */

/* Validates inst against schema at path (instance depth level, ref_chain
 * $refs followed without descending). 0, or a negative errno with *fail
 * filled in. */
int js_validate(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		int level, int ref_chain, struct js_fail *fail);
/* Fills *fail (message from fmt); returns -EINVAL for ERR_INVALID, else -ELOOP. */
int js_fail_set(struct js_ctx *ctx, struct js_fail *fail, enum error_kind kind, const char *path,
		int level, const char *fmt, ...) _printf_(6, 7);
/* Resolves "#" or "#/a/b" (JSON pointer) from root; NULL if it does not (borrowed). */
json_object *js_resolve_ref(json_object *root, const char *ref);

/* ---- jsonschema_keywords.c ---- */

/* The value of keyword name in schema (borrowed), or NULL. */
json_object *js_kw(json_object *schema, const char *name);
bool js_has_kw(json_object *schema, const char *name);
/* Each checks its keywords of schema against inst; same returns as js_validate(). */
int js_check_type(struct js_ctx *ctx, json_object *type, json_object *inst, const char *path,
		  int level, struct js_fail *fail);
int js_check_enum(struct js_ctx *ctx, json_object *list, json_object *inst, const char *path,
		  int level, struct js_fail *fail);
int js_check_number(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		    int level, struct js_fail *fail);
int js_check_string(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		    int level, struct js_fail *fail);
int js_check_array(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		   int level, struct js_fail *fail);
int js_check_object(struct js_ctx *ctx, json_object *schema, json_object *inst, const char *path,
		    int level, struct js_fail *fail);
/* oneOf (exactly_one) or anyOf over the schemas in list. */
int js_check_branches(struct js_ctx *ctx, json_object *list, bool exactly_one, json_object *inst,
		      const char *path, int level, struct js_fail *fail);

/* ---- jsonschema_values.c ---- */

/* Cuts an incomplete UTF-8 sequence off the end of s. */
void js_utf8_fix_tail(char *s);
/* Writes the reason into why (whysz bytes; why may be NULL), its UTF-8 tail
 * made whole, and returns -EINVAL: the "why" out-parameter of the pattern
 * translation and matching. */
int js_why_set(char *why, size_t whysz, const char *fmt, ...) _printf_(3, 4);
/* The value of hex digit c, or -1. */
int js_hex_digit(char c);
/* out = path.key (or path["key"]), out = path[i]; "..." marks truncation. */
void js_path_key(char out[JS_PATH_MAX], const char *path, const char *key);
void js_path_index(char out[JS_PATH_MAX], const char *path, size_t i);
/* Quotes at most 48 bytes of s (len bytes) for a message into out. */
void js_quote_str(char *out, size_t outsz, const char *s, size_t len);
bool js_is_number(json_object *o);
long double js_num_value(json_object *o);
void js_fmt_num(char *out, size_t outsz, long double v);
/* A short description of o for a message ("the string 'x'", "null"). */
void js_describe(char *out, size_t outsz, json_object *o);
/* "a string", "an object", ... */
const char *js_type_noun(json_object *o);
/* JSON equality; numbers compare by value (1 == 1.0). */
bool js_equal(json_object *a, json_object *b);

/* ---- jsonschema_ecma.c ---- */

/* Translates the ECMA-262 pattern pat (the JSON Schema dialect, "u" flag)
 * into PCRE2 syntax with the same meaning under PCRE2_UTF and
 * PCRE2_DOLLAR_ENDONLY, in *ret (malloc'd; the caller frees it). 0, -EINVAL
 * (why says what ECMA-262 does not allow, at which byte offset) or -ENOMEM. */
int js_ecma_to_pcre2(const char *pat, char **ret, char *why, size_t whysz);

/* ---- jsonschema_regex.c ---- */

/* 1 if s (len bytes, NULs included) matches the ECMA-262 pattern anywhere
 * (unanchored, by code point), 0 if not. -EINVAL if the pattern is not
 * ECMA-262 or does not compile, -E2BIG if matching exceeds the backtracking
 * limit, -ENOMEM, -EIO: why (may be NULL) then holds a phrase saying why.
 * Compiled patterns are cached; thread-safe. */
int js_re_match(const char *pattern, const char *s, size_t len, char *why, size_t whysz);
/* Compiles pattern (and caches it): 0, or the errors of js_re_match(). */
int js_re_check(const char *pattern, char *why, size_t whysz);
