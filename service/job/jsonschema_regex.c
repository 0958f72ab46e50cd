/* The JSON Schema validator's regular expressions: ECMA-262 patterns (what
 * JSON Schema 2020-12 specifies, with the "u" flag: code points, not bytes),
 * translated by jsonschema_ecma.c and run by PCRE2 in UTF mode, compiled once
 * per pattern text. See jsonschema-internal.h and docs/json-schema.md. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/jsonschema-internal.h"

/* Bounds for one match: a pattern that backtracks catastrophically on a
 * string fails with an error instead of pinning a CPU. */
#define RE_MATCH_LIMIT 10000000
#define RE_DEPTH_LIMIT 100000

/* ---- compiled once per pattern text ---- */

static pthread_mutex_t re_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *pattern;
	pcre2_code *code;
} re_cache[JS_RE_CACHE];
static size_t re_cached;

static pcre2_code *re_compile(const char *pattern, int *err, char *why, size_t whysz)
{
	_cleanup_free_ char *pcre = NULL;
	int r = js_ecma_to_pcre2(pattern, &pcre, why, whysz);
	if (r < 0) {
		*err = r;
		return NULL;
	}
	int code;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pcre, PCRE2_ZERO_TERMINATED,
				       PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_MATCH_INVALID_UTF |
					   PCRE2_NEVER_BACKSLASH_C | PCRE2_NEVER_UCP,
				       &code, &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[160];
		if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "PCRE2 error %d", code);
		*err = js_why_set(why, whysz, "%s", (const char *)msg);
	}
	return re;
}

/* The compiled pattern (cached; or *own, which the caller frees), NULL with
 * *err set. */
static pcre2_code *re_get(const char *pattern, pcre2_code **own, int *err, char *why, size_t whysz)
{
	pcre2_code *re = NULL;
	*own = NULL;
	pthread_mutex_lock(&re_lock);
	for (size_t i = 0; i < re_cached; i++)
		if (strcmp(re_cache[i].pattern, pattern) == 0) {
			re = re_cache[i].code;
			break;
		}
	if (!re) {
		re = re_compile(pattern, err, why, whysz);
		char *copy = re && re_cached < JS_RE_CACHE ? strdup(pattern) : NULL;
		if (copy) {
			re_cache[re_cached].pattern = copy;
			re_cache[re_cached++].code = re;
		} else
			*own = re;
	}
	pthread_mutex_unlock(&re_lock);
	return re;
}

int js_re_check(const char *pattern, char *why, size_t whysz)
{
	pcre2_code *own;
	int err = 0;
	if (!pattern)
		return js_why_set(why, whysz, "the pattern is not a string");
	pcre2_code *re = re_get(pattern, &own, &err, why, whysz);
	pcre2_code_free(own);
	return re ? 0 : err;
}

/* Compiled patterns are read-only and shared between threads; the match data
 * is per call. */
int js_re_match(const char *pattern, const char *s, size_t len, char *why, size_t whysz)
{
	pcre2_code *own;
	int err = 0;
	if (!pattern)
		return js_why_set(why, whysz, "the pattern is not a string");
	pcre2_code *re = re_get(pattern, &own, &err, why, whysz);
	if (!re)
		return err;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	pcre2_match_context *mc = pcre2_match_context_create(NULL);
	int r;
	if (!md || !mc) {
		r = -ENOMEM;
		goto out;
	}
	pcre2_set_match_limit(mc, RE_MATCH_LIMIT);
	pcre2_set_depth_limit(mc, RE_DEPTH_LIMIT);
	r = pcre2_match(re, (PCRE2_SPTR)s, len, 0, 0, md, mc);
	if (r >= 0)
		r = 1;
	else if (r == PCRE2_ERROR_NOMATCH)
		r = 0;
	else if (r == PCRE2_ERROR_MATCHLIMIT || r == PCRE2_ERROR_DEPTHLIMIT ||
		 r == PCRE2_ERROR_HEAPLIMIT) {
		js_why_set(why, whysz, "matching it backtracks beyond the limit of %d steps",
			   RE_MATCH_LIMIT);
		r = -E2BIG;
	} else {
		PCRE2_UCHAR msg[160];
		if (pcre2_get_error_message(r, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "PCRE2 error %d", r);
		js_why_set(why, whysz, "%s", (const char *)msg);
		r = -EIO;
	}
out:
	pcre2_match_context_free(mc);
	pcre2_match_data_free(md);
	pcre2_code_free(own);
	return r;
}
