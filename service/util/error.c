#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "util/error.h"

static const struct {
	const char *name;
	int status;
	int default_errno;
} kinds[] = {
    [ERR_INTERNAL] = {"internal", 500, EIO},
    [ERR_INVALID] = {"invalid", 400, EINVAL},
    [ERR_NOT_FOUND] = {"not_found", 404, ENOENT},
    [ERR_CONFLICT] = {"conflict", 409, EBUSY},
    [ERR_TOO_LARGE] = {"too_large", 413, E2BIG},
    [ERR_UNSUPPORTED] = {"unsupported_media_type", 415, ENOTSUP},
    [ERR_UNAUTHORIZED] = {"unauthorized", 401, EACCES},
    [ERR_FORBIDDEN] = {"forbidden", 403, EPERM},
    [ERR_BUILD] = {"build_failed", 422, EINVAL},
    [ERR_INFRA] = {"infrastructure", 503, EIO},
    [ERR_CANCELLED] = {"cancelled", 409, ECANCELED},
    [ERR_TIMEOUT] = {"timeout", 504, ETIMEDOUT},
    [ERR_QUOTA] = {"quota_exceeded", 429, EAGAIN},
};

static int kind_errno(enum error_kind kind, int errnum)
{
	if (errnum > 0)
		return errnum;
	if ((size_t)kind < ELEMENTSOF(kinds))
		return kinds[kind].default_errno;
	return EIO;
}

_printf_(5, 0) static int error_vset(struct sl_error *err, enum error_kind kind, int errnum,
				     const char *path, const char *fmt, va_list ap)
{
	int e = kind_errno(kind, errnum);
	if (!err)
		return -e;
	err->kind = kind;
	err->errnum = e;
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	snprintf(err->path, sizeof(err->path), "%s", path ? path : "");
	snprintf(err->code, sizeof(err->code), "%s", error_kind_name(kind));
	return -e;
}

int error_set(struct sl_error *err, enum error_kind kind, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = error_vset(err, kind, errnum, NULL, fmt, ap);
	va_end(ap);
	return r;
}

int error_set_path(struct sl_error *err, enum error_kind kind, const char *path, const char *fmt,
		   ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = error_vset(err, kind, 0, path, fmt, ap);
	va_end(ap);
	return r;
}

int error_prefix(struct sl_error *err, const char *fmt, ...)
{
	if (!err)
		return -EIO;
	char prefix[512], old[sizeof(err->message)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->message, sizeof(old));
	/* Truncation is acceptable: the message is for people. */
	int n = snprintf(err->message, sizeof(err->message), "%s: ", prefix);
	if (n > 0 && (size_t)n < sizeof(err->message)) {
		/* memcpy, not snprintf: gcc -O1 rejects the intended truncation. */
		size_t len = strnlen(old, sizeof(err->message) - (size_t)n - 1);
		memcpy(err->message + n, old, len);
		err->message[(size_t)n + len] = '\0';
	}
	return -kind_errno(err->kind, err->errnum);
}

int error_http_status(enum error_kind kind)
{
	if ((size_t)kind < ELEMENTSOF(kinds))
		return kinds[kind].status;
	return 500;
}

const char *error_kind_name(enum error_kind kind)
{
	if ((size_t)kind < ELEMENTSOF(kinds) && kinds[kind].name)
		return kinds[kind].name;
	return "internal";
}

json_object *error_to_json(const struct sl_error *err)
{
	json_object *e = json_object_new_object();
	json_object_object_add(
	    e, "code",
	    json_object_new_string(err->code[0] ? err->code : error_kind_name(err->kind)));
	json_object_object_add(e, "message", json_object_new_string(err->message));
	if (err->path[0])
		json_object_object_add(e, "path", json_object_new_string(err->path));
	json_object *root = json_object_new_object();
	json_object_object_add(root, "error", e);
	return root;
}
