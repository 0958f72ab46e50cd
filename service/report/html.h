/* A growable text buffer for HTML and SVG output, XML/HTML escaping that is
 * safe in element text and in quoted attributes, and deterministic number
 * formatting so reports are byte-stable.
 *
 * Out of memory (CODING-STYLE.md): a buffer that cannot grow remembers it,
 * drops every later append, and html_buf_steal() returns NULL, so a report
 * is whole or not at all and only the code that ends it checks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

#define HTML_NUM_MAX 48

struct html_buf;

/* A new, empty buffer. Never NULL: out of memory, a buffer that has
 * failed already. */
struct html_buf *html_buf_new(void);
/* Frees b; NULL is fine. */
void html_buf_free(struct html_buf *b);
static inline void html_buf_freep(struct html_buf **b)
{
	html_buf_free(*b);
}
#define _cleanup_html_buf_ _cleanup_(html_buf_freep)

/* Appends s (NULL appends nothing), or n bytes of s, verbatim. */
void html_buf_puts(struct html_buf *b, const char *s);
void html_buf_putn(struct html_buf *b, const char *s, size_t n);
/* Appends printf-formatted text, verbatim (no escaping). */
void html_buf_printf(struct html_buf *b, const char *fmt, ...) _printf_(2, 3);
/* Appends s (or n bytes of it) escaped for element text and double- or
 * single-quoted attribute values by escape_xml() (util/escape.h): & < > " '
 * become entities, invalid UTF-8 bytes and control characters other than \n
 * and \t become U+FFFD. NULL appends nothing. */
void html_buf_escape(struct html_buf *b, const char *s);
void html_buf_escape_n(struct html_buf *b, const char *s, size_t n);
/* The contents so far (NUL-terminated, owned by b; "" once failed) and
 * their length. */
const char *html_buf_data(const struct html_buf *b);
size_t html_buf_len(const struct html_buf *b);
/* Returns the malloc'd contents (the caller frees them) and frees b; NULL
 * when an allocation failed on the way (the caller reports -ENOMEM). */
char *html_buf_steal(struct html_buf *b);
/* Marks b failed (what it holds is dropped): for a writer whose part of
 * the text could not be made, e.g. a nested buffer that failed. */
void html_buf_fail(struct html_buf *b);
/* 1 when an allocation for b failed. */
bool html_buf_failed(const struct html_buf *b);

/* Formats v with at most `decimals` digits after the point, then drops
 * trailing zeros and a trailing point; "-0" becomes "0". Non-finite values
 * become "nan", "inf" or "-inf". Independent of the locale's decimal point.
 * Returns out. */
char *html_fmt_fixed(double v, int decimals, char out[HTML_NUM_MAX]);
/* Formats a measured value for people: about four significant digits
 * (20011, 169.2, 3.25, 0.0123). Returns out. */
char *html_fmt_value(double v, char out[HTML_NUM_MAX]);
