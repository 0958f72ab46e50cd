/* The one XML/HTML escaper: text that is safe in element content and in
 * single- or double-quoted attribute values of HTML, SVG and XML 1.0.
 *
 *   & < > " '   become &amp; &lt; &gt; &quot; &#39;
 *   \n \t       are kept (or become &#10; &#9; with ESCAPE_XML_WS)
 *   \r          becomes U+FFFD (or &#13; with ESCAPE_XML_WS)
 *   other C0 controls, DEL, invalid UTF-8 (stray continuation bytes,
 *   truncated, overlong and out-of-range sequences, surrogates) and the
 *   non-characters U+FFFE and U+FFFF become U+FFFD, one per bad byte
 *
 * so the output is always well-formed UTF-8 that XML 1.0 can carry. */
#pragma once

#include <stddef.h>

enum escape_flags {
	/* \n, \t and \r as character references: an XML parser normalises
	 * raw whitespace in attribute values to spaces, references survive. */
	ESCAPE_XML_WS = 1 << 0,
};

/* Where escape_xml() appends: n bytes of s (not NUL-terminated). */
typedef void (*escape_sink_t)(void *ctx, const char *s, size_t n);

/* Escapes n bytes of s (NULL escapes nothing) with flags (enum
 * escape_flags), handing the output to sink(ctx, ...) in runs. */
void escape_xml(const char *s, size_t n, unsigned flags, escape_sink_t sink, void *ctx);

/* A malloc'd, NUL-terminated escaped copy of s (the caller frees it); ""
 * for NULL. NULL when out of memory. */
char *escape_xml_dup(const char *s, unsigned flags);
