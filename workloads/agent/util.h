/* Small helpers for the guest agent: root-relative paths, bounded file I/O,
 * error lists, UTF-8 cleaning and a tail-keeping capture buffer. The agent is
 * a static binary of its own, so it does not link the host's service/util. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "util/macro.h"

#define _agent_printf_(a, b) __attribute__((format(printf, a, b)))

/* malloc'd root + rel, where rel starts with '/' and root is "" in the guest
 * (or a fake root directory in host mode). Never NULL (aborts on OOM). */
char *agent_path(const char *root, const char *rel);

/* Reads at most max bytes of path into a malloc'd NUL-terminated buffer.
 * Returns 0, -EFBIG when the file holds more than max bytes, or -errno. */
int agent_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len);

/* Writes s to path in a single write(2), as kernel interface files expect.
 * flags are added to O_WRONLY|O_CLOEXEC|O_NOCTTY (e.g. O_CREAT). 0 or -errno. */
int agent_write_file(const char *path, const char *s, int flags);

/* Appends a formatted whole-sentence message to the JSON array errors. */
void agent_error_add(json_object *errors, const char *fmt, ...) _agent_printf_(2, 3);

/* A malloc'd NUL-terminated copy of data[0..len) that is valid UTF-8 without
 * NUL bytes: each invalid byte (and NUL) becomes '?'. Never NULL. */
char *agent_utf8_clean(const char *data, size_t len);

/* Keeps the last cap bytes of everything appended to it. */
struct tail_buf {
	char *data;
	size_t cap;
	unsigned long long total; /* bytes ever appended */
};

/* 0 or -ENOMEM; cap must be > 0. */
int tail_buf_init(struct tail_buf *t, size_t cap);
void tail_buf_append(struct tail_buf *t, const char *data, size_t len);
/* The kept bytes in order, malloc'd and NUL-terminated; *ret_len (may be NULL)
 * gets their count. Never NULL (aborts on OOM). */
char *tail_buf_take(const struct tail_buf *t, size_t *ret_len);
static inline bool tail_buf_truncated(const struct tail_buf *t)
{
	return t->total > t->cap;
}
void tail_buf_done(struct tail_buf *t);

/* Milliseconds on CLOCK_MONOTONIC. */
long long agent_now_ms(void);
