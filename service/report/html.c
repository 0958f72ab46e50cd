/* Text buffer, escaping and number formatting for the HTML and SVG writers. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"

struct html_buf {
	char *data;
	size_t len;
	size_t cap;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (!q)
		abort();
	return q;
}

static void html_buf_reserve(struct html_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need < b->len) /* overflow: cannot happen before memory runs out */
		abort();
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

struct html_buf *html_buf_new(void)
{
	struct html_buf *b = calloc(1, sizeof(*b));

	if (!b)
		abort();
	html_buf_reserve(b, 0);
	b->data[0] = '\0';
	return b;
}

void html_buf_free(struct html_buf *b)
{
	if (!b)
		return;
	free(b->data);
	free(b);
}

void html_buf_putn(struct html_buf *b, const char *s, size_t n)
{
	if (!s || n == 0)
		return;
	html_buf_reserve(b, n);
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

	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	if ((size_t)n >= b->cap - b->len) {
		html_buf_reserve(b, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when the
 * bytes there are not one (overlong forms and surrogates included). */
static size_t utf8_valid_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void html_buf_escape_n(struct html_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;

	if (!s)
		return;
	/* Copies runs of safe bytes at once; replaces the rest one by one. */
	while (i < n) {
		const char *rep = NULL;
		size_t len = 1;

		switch (p[i]) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		case '\n':
		case '\t':
			break;
		default:
			if (p[i] < 0x20 || p[i] == 0x7f) {
				rep = "\xef\xbf\xbd";
			} else if (p[i] >= 0x80) {
				len = utf8_valid_len(p + i, n - i);
				if (len == 0) {
					rep = "\xef\xbf\xbd";
					len = 1;
				}
			}
		}
		if (rep) {
			html_buf_putn(b, s + i - run, run);
			run = 0;
			html_buf_puts(b, rep);
		} else {
			run += len;
		}
		i += len;
	}
	html_buf_putn(b, s + i - run, run);
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
	char *s = b->data;

	free(b);
	return s;
}

char *html_escape(const char *s)
{
	struct html_buf *b = html_buf_new();

	html_buf_escape(b, s);
	return html_buf_steal(b);
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
