/* The XML/HTML escaper; see escape.h. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"
#include "proto/utf8.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* Length of the valid UTF-8 sequence at s (at most n bytes) of a character
 * XML 1.0 can carry, or 0 when the bytes there are not one: utf8_seq_len()
 * without the non-characters U+FFFE and U+FFFF (EF BF BE, EF BF BF). */
static size_t utf8_char_len(const unsigned char *s, size_t n)
{
	size_t len = utf8_seq_len((const char *)s, n);

	if (len == 3 && s[0] == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf))
		return 0;
	return len;
}

/* The replacement of the byte at p, or NULL when it is copied as it is;
 * *len is set to the bytes the decision covers. */
static const char *escape_one(const unsigned char *p, size_t n, unsigned flags, size_t *len)
{
	bool ws = flags & ESCAPE_XML_WS;

	*len = 1;
	switch (p[0]) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&#39;";
	case '\n':
		return ws ? "&#10;" : NULL;
	case '\t':
		return ws ? "&#9;" : NULL;
	case '\r':
		return ws ? "&#13;" : REPLACEMENT;
	}
	if (p[0] < 0x20 || p[0] == 0x7f)
		return REPLACEMENT;
	if (p[0] < 0x80)
		return NULL;
	*len = utf8_char_len(p, n);
	if (*len == 0) {
		*len = 1;
		return REPLACEMENT;
	}
	return NULL;
}

void escape_xml(const char *s, size_t n, unsigned flags, escape_sink_t sink, void *ctx)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;

	if (!s)
		return;
	/* Hands on runs of safe bytes at once, replacements one by one. */
	while (i < n) {
		size_t len;
		const char *rep = escape_one(p + i, n - i, flags, &len);

		if (rep) {
			if (run)
				sink(ctx, s + i - run, run);
			run = 0;
			sink(ctx, rep, strlen(rep));
		} else {
			run += len;
		}
		i += len;
	}
	if (run)
		sink(ctx, s + i - run, run);
}

struct dup_buf {
	char *data;
	size_t len, cap;
	bool failed; /* out of memory: escape_xml_dup returns NULL */
};

static void dup_sink(void *ctx, const char *s, size_t n)
{
	struct dup_buf *b = ctx;

	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *d = realloc(b->data, cap);
		if (!d) {
			b->failed = true;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

char *escape_xml_dup(const char *s, unsigned flags)
{
	struct dup_buf b = {0};

	dup_sink(&b, "", 0);
	if (s)
		escape_xml(s, strlen(s), flags, dup_sink, &b);
	if (b.failed) {
		free(b.data);
		return NULL;
	}
	return b.data;
}
