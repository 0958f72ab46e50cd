/* The build log of a kernel build, the bottom of kernel/'s build files
 * (kbuild-internal.h): the "schedlab:" lines to build.log, the caller's log
 * and progress, the raw tail of the current step and the sanitized excerpt
 * a failure carries. It takes only the log (struct kbuild_log), so every
 * file above it may log without knowing the rest of a build. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kbuild.h"
#include "kernel/kbuild-internal.h"
#include "proto/utf8.h"

void kbuild_trunc_printf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

const char *kbuild_base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

void kbuild_log_tail(struct kbuild_log *log, const char *line)
{
	size_t n = strlen(line);
	if (n >= sizeof(log->tail)) {
		line += n - (sizeof(log->tail) - 1);
		n = sizeof(log->tail) - 1;
	}
	if (log->tail_len + n + 1 > sizeof(log->tail)) {
		size_t drop = log->tail_len + n + 1 - sizeof(log->tail);
		memmove(log->tail, log->tail + drop, log->tail_len - drop);
		log->tail_len -= drop;
	}
	memcpy(log->tail + log->tail_len, line, n);
	log->tail_len += n;
	log->tail[log->tail_len++] = '\n';
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* Untrusted bytes from make and patch become text a JSON document, a
 * terminal and an XML report can carry: valid UTF-8 is kept, '\n' and '\t'
 * too, '\r' is dropped, every other control byte and every byte that does
 * not start a valid sequence becomes U+FFFD. Returns a malloc'd copy (NULL
 * when memory ran out) and its length. */
static char *sanitize(const char *raw, size_t len, size_t *ret_len)
{
	char *out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)raw[i];
		if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
			out[o++] = (char)c;
			i++;
			continue;
		}
		if (c == '\r') {
			i++;
			continue;
		}
		size_t k = c >= 0x80 ? utf8_seq_len(raw + i, len - i) : 0;
		if (k > 0) {
			memcpy(out + o, raw + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, REPLACEMENT, 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	*ret_len = o;
	return out;
}

/* The sanitized s[0..len), cut to its last lines that fit in max bytes
 * (the last line cut at a character boundary when it alone is longer). */
static char *last_lines(const char *s, size_t len, size_t max)
{
	size_t o = 0;
	while (len > 0 && s[len - 1] == '\n')
		len--;
	if (len == 0)
		return NULL;
	char *out = sanitize(s, len, &o);
	if (!out)
		return NULL;
	size_t start = 0;
	if (o > max) {
		start = o - max;
		if (out[start - 1] != '\n') {
			const char *nl = memchr(out + start, '\n', o - start);
			if (nl && nl + 1 < out + o)
				start = (size_t)(nl + 1 - out);
			else
				while (start < o && ((unsigned char)out[start] & 0xc0) == 0x80)
					start++;
		}
	}
	memmove(out, out + start, o - start);
	out[o - start] = '\0';
	return out;
}

/* The sanitized tail in at most KBUILD_EXCERPT_MAX bytes. When the step's
 * first compiler error has scrolled out of it (a parallel make compiles on
 * after an error), the excerpt starts with that error and its context, then
 * "...", then as much of the tail as still fits. */
char *kbuild_tail_excerpt(const struct kbuild_log *log)
{
	char *tail = last_lines(log->tail, log->tail_len, KBUILD_EXCERPT_MAX);
	if (!tail || !log->first_error[0])
		return tail;
	_cleanup_free_ char *first = last_lines(log->first_error, strlen(log->first_error), 1024);
	if (!first || strstr(tail, first))
		return tail;
	free(tail);
	size_t head = strlen(first) + 5; /* "\n...\n" */
	tail = last_lines(log->tail, log->tail_len, KBUILD_EXCERPT_MAX - head);
	char *out = NULL;
	if (asprintf(&out, "%s\n...\n%s", first, tail ? tail : "") < 0)
		out = NULL;
	free(tail);
	return out;
}

void kbuild_log_sanitize_error(struct sl_error *err)
{
	size_t n = 0;
	_cleanup_free_ char *m = sanitize(err->message, strlen(err->message), &n);
	if (!m)
		return;
	if (n >= sizeof(err->message)) {
		n = sizeof(err->message) - 1;
		while (n > 0 && ((unsigned char)m[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(err->message, m, n);
	err->message[n] = '\0';
}

void kbuild_log(struct kbuild_log *log, const char *fmt, ...)
{
	char line[1040] = "schedlab: ";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + 10, sizeof(line) - 10, fmt, ap);
	va_end(ap);
	kbuild_log_tail(log, line);
	if (log->fd >= 0)
		dprintf(log->fd, "%s\n", line);
	if (log->o->log_fd >= 0)
		dprintf(log->o->log_fd, "%s\n", line);
	if (log->o->progress)
		log->o->progress(log->o->userdata, log->percent, line);
}
