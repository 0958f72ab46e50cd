/* Helpers for the guest agent; see util.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/util.h"
#include "proto/utf8.h"

char *agent_path(const char *root, const char *rel)
{
	size_t rl = root ? strlen(root) : 0;
	char *p;

	/* "/" and "dir/" must not double the slash */
	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	if (asprintf(&p, "%.*s%s", (int)rl, rl ? root : "", rel) < 0)
		abort();
	return p;
}

int agent_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, alloc = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		if (len == alloc) {
			/* grow as data arrives: sysfs and debugfs report size 0 */
			size_t n = alloc ? alloc * 2 : 4096;
			if (n > max + 1)
				n = max + 1;
			if (n <= len)
				return -EFBIG;
			char *b = realloc(buf, n + 1);
			if (!b)
				return -ENOMEM;
			buf = b;
			alloc = n;
		}
		ssize_t r = read(fd, buf + len, alloc - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max)
			return -EFBIG;
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf)
			return -ENOMEM;
	}
	buf[len] = '\0';
	*ret_data = TAKE_PTR(buf);
	if (ret_len)
		*ret_len = len;
	return 0;
}

int agent_write_file(const char *path, const char *s, int flags)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, 0644);
	size_t len = strlen(s);
	ssize_t n;

	if (fd < 0)
		return -errno;
	do
		n = write(fd, s, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

void agent_error_add(json_object *errors, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "schedlab-agent: %s\n", msg);
	if (errors)
		json_object_array_add(errors, json_object_new_string(msg));
}

char *agent_utf8_clean(const char *data, size_t len)
{
	char *out = malloc(len + 1);
	size_t i = 0;

	if (!out)
		abort();
	while (i < len) {
		/* NUL too: the copy is a C string. */
		size_t n = data[i] ? utf8_seq_len(data + i, len - i) : 0;
		if (n == 0) {
			out[i++] = '?';
			continue;
		}
		memcpy(out + i, data + i, n);
		i += n;
	}
	out[len] = '\0';
	return out;
}

int tail_buf_init(struct tail_buf *t, size_t cap)
{
	t->data = malloc(cap);
	t->cap = cap;
	t->total = 0;
	return t->data ? 0 : -ENOMEM;
}

void tail_buf_append(struct tail_buf *t, const char *data, size_t len)
{
	if (len >= t->cap) {
		/* only the last cap bytes can survive: place them so that
		 * total % cap stays the write position */
		t->total += len - t->cap;
		data += len - t->cap;
		len = t->cap;
	}
	while (len > 0) {
		size_t pos = (size_t)(t->total % t->cap);
		size_t n = t->cap - pos < len ? t->cap - pos : len;
		memcpy(t->data + pos, data, n);
		t->total += n;
		data += n;
		len -= n;
	}
}

char *tail_buf_take(const struct tail_buf *t, size_t *ret_len)
{
	size_t len = t->total < t->cap ? (size_t)t->total : t->cap;
	char *out = malloc(len + 1);

	if (!out)
		abort();
	if (t->total <= t->cap) {
		memcpy(out, t->data, len);
	} else {
		size_t pos = (size_t)(t->total % t->cap);
		memcpy(out, t->data + pos, t->cap - pos);
		memcpy(out + (t->cap - pos), t->data, pos);
	}
	out[len] = '\0';
	if (ret_len)
		*ret_len = len;
	return out;
}

void tail_buf_done(struct tail_buf *t)
{
	free(t->data);
	t->data = NULL;
}

long long agent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
