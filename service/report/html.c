/* Text buffer, escaping and number formatting for the HTML and SVG writers. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "util/escape.h"

struct html_buf {
	char *data;
	size_t len;
	size_t cap;
	/* An allocation failed: later appends are dropped and
	 * html_buf_steal() returns NULL, so the one caller that ends the
	 * text reports the failure (CODING-STYLE.md "Out of memory"). */
	bool failed;
};

/* What html_buf_new() returns when it cannot allocate a buffer: failed
 * from the start, never written, never freed. */
static struct html_buf oom_buf = {.data = (char *)"", .failed = true};

void html_buf_fail(struct html_buf *b)
{
	if (b->failed)
		return;
	free(b->data);
	b->data = (char *)"";
	b->len = b->cap = 0;
	b->failed = true;
}

bool html_buf_failed(const struct html_buf *b)
{
	return b->failed;
}

static bool html_buf_reserve(struct html_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (b->failed)
		return false;
	/* a text larger than memory; beyond SIZE_MAX / 2 doubling overflows */
	if (need < b->len || need > SIZE_MAX / 2) {
		html_buf_fail(b);
		return false;
	}
	if (need <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	char *data = realloc(b->data, cap);
	if (!data) {
		html_buf_fail(b);
		return false;
	}
	b->data = data;
	b->cap = cap;
	return true;
}

struct html_buf *html_buf_new(void)
{
	struct html_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return &oom_buf;
	if (!html_buf_reserve(b, 0)) {
		free(b);
		return &oom_buf;
	}
	b->data[0] = '\0';
	return b;
}

void html_buf_free(struct html_buf *b)
{
	if (!b || b == &oom_buf)
		return;
	if (!b->failed)
		free(b->data);
	free(b);
}

void html_buf_putn(struct html_buf *b, const char *s, size_t n)
{
	if (!s || n == 0 || !html_buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void html_buf_puts(struct html_buf *b, const char *s)
{
	if (s)
		html_buf_putn(b, s, strlen(s));
}

void html_buf_printf(struct html_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) { /* a format vsnprintf cannot write (EOVERFLOW) */
		html_buf_fail(b);
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		if (!html_buf_reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

static void html_buf_sink(void *ctx, const char *s, size_t n)
{
	html_buf_putn(ctx, s, n);
}

void html_buf_escape_n(struct html_buf *b, const char *s, size_t n)
{
	escape_xml(s, n, 0, html_buf_sink, b);
}

void html_buf_escape(struct html_buf *b, const char *s)
{
	if (s)
		html_buf_escape_n(b, s, strlen(s));
}

const char *html_buf_data(const struct html_buf *b)
{
	return b->data;
}

size_t html_buf_len(const struct html_buf *b)
{
	return b->len;
}

char *html_buf_steal(struct html_buf *b)
{
	if (b->failed) {
		html_buf_free(b);
		return NULL;
	}
	char *s = b->data;
	free(b);
	return s;
}

char *html_fmt_fixed(double v, int decimals, char out[HTML_NUM_MAX])
{
	if (isnan(v)) {
		strcpy(out, "nan");
		return out;
	}
	if (isinf(v)) {
		strcpy(out, v > 0 ? "inf" : "-inf");
		return out;
	}
	if (decimals < 0)
		decimals = 0;
	if (decimals > 12)
		decimals = 12;
	/* Values this large are not plotted or printed meaningfully anyway;
	 * clamping keeps the text inside the buffer. */
	if (v > 1e30)
		v = 1e30;
	if (v < -1e30)
		v = -1e30;
	snprintf(out, HTML_NUM_MAX, "%.*f", decimals, v);
	/* A locale with a decimal comma must not leak into SVG coordinates. */
	for (char *c = out; *c; c++)
		if (*c == ',')
			*c = '.';
	if (strchr(out, '.')) {
		size_t n = strlen(out);
		while (n > 0 && out[n - 1] == '0')
			out[--n] = '\0';
		if (n > 0 && out[n - 1] == '.')
			out[--n] = '\0';
	}
	if (strcmp(out, "-0") == 0)
		strcpy(out, "0");
	return out;
}

char *html_fmt_value(double v, char out[HTML_NUM_MAX])
{
	double a = fabs(v);
	int decimals;

	if (!isfinite(v) || a == 0)
		return html_fmt_fixed(v, 0, out);
	if (a >= 1000)
		decimals = 0;
	else if (a >= 100)
		decimals = 1;
	else if (a >= 1)
		decimals = 2;
	else
		decimals = 2 - (int)floor(log10(a));
	return html_fmt_fixed(v, decimals, out);
}
