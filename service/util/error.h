/* The caller-owned error that carries a user-visible message up the stack.
 *
 * Functions return 0 or a negative errno, and on failure fill *err (when err
 * is not NULL) with a kind, the errno, a whole-sentence message and, for input
 * errors, the JSON path or field it concerns. One table (error_http_status)
 * maps a kind to an HTTP status. */
#pragma once

#include "util/macro.h"

enum error_kind {
	ERR_INTERNAL = 0, /* a bug or an unexpected system failure: 500 */
	ERR_INVALID,	  /* bad input (request field, spec, patch): 400 */
	ERR_NOT_FOUND,	  /* 404 */
	ERR_CONFLICT,	  /* 409 */
	ERR_TOO_LARGE,	  /* 413 */
	ERR_UNSUPPORTED,  /* 415 */
	ERR_UNAUTHORIZED, /* 401 */
	ERR_FORBIDDEN,	  /* 403 */
	ERR_BUILD,	  /* a kernel did not patch, configure or build: 422 */
	ERR_INFRA,	  /* libvirt, QEMU or the host failed: 503 */
	ERR_CANCELLED,	  /* the job was cancelled */
	ERR_TIMEOUT,
	ERR_QUOTA, /* a quota or the queue cap is reached: 429 (retry later) */
};

struct sl_error {
	enum error_kind kind;
	int errnum; /* positive errno, or 0 */
	char message[1024];
	char path[256]; /* JSON path ("$.variants.x.vcpus") or field name; may be empty */
	char code[48];	/* machine-readable code, e.g. "invalid_field"; may be empty */
};

/* Fills err (if not NULL) and returns -errnum (or -EINVAL when errnum is 0). */
int error_set(struct sl_error *err, enum error_kind kind, int errnum, const char *fmt, ...)
    _printf_(4, 5);
/* Like error_set, with a JSON path or field name attached. */
int error_set_path(struct sl_error *err, enum error_kind kind, const char *path, const char *fmt,
		   ...) _printf_(4, 5);
/* Prepends context: "context: previous message". Returns the error's -errno. */
int error_prefix(struct sl_error *err, const char *fmt, ...) _printf_(2, 3);
/* HTTP status for a kind. */
int error_http_status(enum error_kind kind);
/* Stable machine-readable name of a kind ("invalid", "not_found", ...). */
const char *error_kind_name(enum error_kind kind);
/* {"error":{"code":..,"message":..,"path":..}}; caller owns the reference. */
json_object *error_to_json(const struct sl_error *err);
