/* The JSON Schema validator's ECMA-262 to PCRE2 pattern translation. See
 * jsonschema-internal.h; jsonschema_regex.c compiles and runs the result.
 *
 * PCRE2 is close to ECMA-262 but not equal, so a pattern is translated:
 *   - \s and \S: ECMA-262's white space includes U+00A0, U+FEFF, U+2028 and
 *     the Unicode space separators; PCRE2's \s (without UCP) does not. They
 *     become explicit classes.
 *   - '.' excludes the four ECMA-262 line terminators (\n \r U+2028 U+2029).
 *   - '$' matches at the very end only (PCRE2_DOLLAR_ENDONLY): no final
 *     newline allowance.
 *   - \v is U+000B (PCRE2: vertical space class); \xhh, \uhhhh, \u{h...},
 *     surrogate pairs and \0 become \x{...}; \N backreferences become \g{N};
 *     \p{Letter} and other long General_Category names become PCRE2's short
 *     names.
 *   - Inside a class, '[' is literal (PCRE2 would read [:alpha:]); '[]'
 *     matches nothing and '[^]' any character, as in ECMA-262.
 *   - What ECMA-262 (u flag) rejects is an error here too, rather than a PCRE2
 *     extension that silently means something else: letter escapes it does
 *     not define (\a \e \h \A \Z \Q ...), groups other than (?: (?= (?! (?<=
 *     (?<! (?<name>, PCRE2's verbs "(*...)", possessive quantifiers, a lone
 *     '{', '}' or ']'.
 * \d, \w and \b stay ASCII-only, as in ECMA-262: PCRE2 without PCRE2_UCP
 * uses its built-in C-locale tables for them. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/jsonschema-internal.h"

/* ECMA-262 WhiteSpace and LineTerminator, as PCRE2 class contents. */
#define ECMA_WS                                                                                    \
	"\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}"        \
	"\\x{205f}\\x{3000}\\x{feff}"

struct re_buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void buf_add(struct re_buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->s, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_str(struct re_buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void buf_cp(struct re_buf *b, uint32_t cp)
{
	char tmp[16];
	snprintf(tmp, sizeof(tmp), "\\x{%x}", (unsigned)cp);
	buf_str(b, tmp);
}

/* n hex digits at p into *cp; false if any is not one. */
static bool hex_fixed(const char *p, int n, uint32_t *cp)
{
	uint32_t v = 0;
	for (int i = 0; i < n; i++) {
		int h = js_hex_digit(p[i]);
		if (h < 0)
			return false;
		v = v * 16 + (uint32_t)h;
	}
	*cp = v;
	return true;
}

/* \uhhhh, \u{h...} or a surrogate pair of \uhhhh at p (just after the 'u').
 * Returns the bytes consumed after the 'u', 0 if malformed. */
static size_t parse_u_escape(const char *p, uint32_t *cp)
{
	if (*p == '{') {
		uint32_t v = 0;
		size_t i = 1;
		for (; js_hex_digit(p[i]) >= 0; i++) {
			v = v * 16 + (uint32_t)js_hex_digit(p[i]);
			if (v > 0x10FFFF)
				return 0;
		}
		if (i == 1 || p[i] != '}' || (v >= 0xD800 && v <= 0xDFFF))
			return 0;
		*cp = v;
		return i + 1;
	}
	uint32_t hi, lo;
	if (!hex_fixed(p, 4, &hi))
		return 0;
	if (hi >= 0xD800 && hi <= 0xDBFF && p[4] == '\\' && p[5] == 'u' &&
	    hex_fixed(p + 6, 4, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
		*cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
		return 10;
	}
	if (hi >= 0xD800 && hi <= 0xDFFF)
		return 0; /* a lone surrogate is no character UTF-8 can hold */
	*cp = hi;
	return 4;
}

/* ECMA-262's long General_Category names that PCRE2 10.42 knows only by
 * their short form. */
static const char *gc_short(const char *name, size_t n)
{
	static const struct {
		const char *lng, *shrt;
	} names[] = {
	    {"Letter", "L"},
	    {"Cased_Letter", "L&"},
	    {"Uppercase_Letter", "Lu"},
	    {"Lowercase_Letter", "Ll"},
	    {"Titlecase_Letter", "Lt"},
	    {"Modifier_Letter", "Lm"},
	    {"Other_Letter", "Lo"},
	    {"Mark", "M"},
	    {"Nonspacing_Mark", "Mn"},
	    {"Spacing_Mark", "Mc"},
	    {"Enclosing_Mark", "Me"},
	    {"Number", "N"},
	    {"Decimal_Number", "Nd"},
	    {"digit", "Nd"},
	    {"Letter_Number", "Nl"},
	    {"Other_Number", "No"},
	    {"Punctuation", "P"},
	    {"punct", "P"},
	    {"Connector_Punctuation", "Pc"},
	    {"Dash_Punctuation", "Pd"},
	    {"Open_Punctuation", "Ps"},
	    {"Close_Punctuation", "Pe"},
	    {"Initial_Punctuation", "Pi"},
	    {"Final_Punctuation", "Pf"},
	    {"Other_Punctuation", "Po"},
	    {"Symbol", "S"},
	    {"Math_Symbol", "Sm"},
	    {"Currency_Symbol", "Sc"},
	    {"Modifier_Symbol", "Sk"},
	    {"Other_Symbol", "So"},
	    {"Separator", "Z"},
	    {"Space_Separator", "Zs"},
	    {"Line_Separator", "Zl"},
	    {"Paragraph_Separator", "Zp"},
	    {"Other", "C"},
	    {"Control", "Cc"},
	    {"cntrl", "Cc"},
	    {"Format", "Cf"},
	    {"Surrogate", "Cs"},
	    {"Private_Use", "Co"},
	    {"Unassigned", "Cn"},
	};
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strlen(names[i].lng) == n && memcmp(names[i].lng, name, n) == 0)
			return names[i].shrt;
	return NULL;
}

/* \p{...} or \P{...} at p (p[0] is 'p' or 'P'); appends the PCRE2 form.
 * Returns the bytes consumed, 0 if malformed. */
static size_t translate_property(const char *p, struct re_buf *out)
{
	if (p[1] != '{')
		return 0;
	const char *end = strchr(p + 2, '}');
	if (!end || end == p + 2)
		return 0;
	const char *name = p + 2;
	size_t n = (size_t)(end - name);
	static const char *const gc_prefixes[] = {"General_Category=", "gc="};
	for (size_t i = 0; i < ELEMENTSOF(gc_prefixes); i++) {
		size_t pl = strlen(gc_prefixes[i]);
		if (n > pl && strncmp(name, gc_prefixes[i], pl) == 0) {
			name += pl;
			n -= pl;
		}
	}
	const char *shrt = gc_short(name, n);
	buf_add(out, p, 2); /* "p{" or "P{"; the caller wrote the backslash */
	if (shrt)
		buf_str(out, shrt);
	else
		buf_add(out, name, n);
	buf_str(out, "}");
	return (size_t)(end - p) + 1;
}

static bool is_syntax_char(char c)
{
	return c && strchr("^$\\.*+?()[]{}|/", c) != NULL;
}

/* One escape (p points just after the backslash) outside or inside a class.
 * Appends its PCRE2 form to out, or sets *is_S for \S inside a class (the
 * caller builds the class). Returns the bytes consumed after the backslash,
 * or -EINVAL with why filled in. */
static int translate_escape(const char *pat, const char *p, bool in_class, struct re_buf *out,
			    bool *is_S, char *why, size_t whysz)
{
	char c = *p;
	uint32_t cp;
	size_t off = (size_t)(p - pat) - 1;
	switch (c) {
	case '\0':
		return js_why_set(why, whysz, "it ends with a lone backslash");
	case 'd':
	case 'D':
	case 'w':
	case 'W':
	case 't':
	case 'n':
	case 'r':
	case 'f':
		buf_add(out, p - 1, 2);
		return 1;
	case 'b':
		buf_str(out, in_class ? "\\x{8}" : "\\b");
		return 1;
	case 'B':
		if (in_class)
			return js_why_set(why, whysz,
					  "'\\B' at offset %zu is not allowed in a class", off);
		buf_str(out, "\\B");
		return 1;
	case 's':
		buf_str(out, in_class ? ECMA_WS : "[" ECMA_WS "]");
		return 1;
	case 'S':
		if (in_class)
			*is_S = true;
		else
			buf_str(out, "[^" ECMA_WS "]");
		return 1;
	case 'v':
		buf_str(out, "\\x{b}");
		return 1;
	case 'c':
		if (!((p[1] >= 'a' && p[1] <= 'z') || (p[1] >= 'A' && p[1] <= 'Z')))
			return js_why_set(why, whysz,
					  "'\\c' at offset %zu is not followed by a letter", off);
		buf_cp(out, (uint32_t)(p[1] & 0x1f));
		return 2;
	case 'x':
		if (!hex_fixed(p + 1, 2, &cp))
			return js_why_set(why, whysz,
					  "'\\x' at offset %zu is not followed by two hex digits",
					  off);
		buf_cp(out, cp);
		return 3;
	case 'u': {
		size_t n = parse_u_escape(p + 1, &cp);
		if (!n)
			return js_why_set(why, whysz,
					  "'\\u' at offset %zu is not a valid Unicode escape "
					  "(\\uhhhh, a surrogate pair, or \\u{h...} up to 10FFFF)",
					  off);
		buf_cp(out, cp);
		return (int)n + 1;
	}
	case 'p':
	case 'P': {
		buf_str(out, "\\");
		size_t n = translate_property(p, out);
		if (!n)
			return js_why_set(why, whysz,
					  "'\\%c' at offset %zu is not followed by {name}", c, off);
		return (int)n;
	}
	case 'k':
		if (in_class || p[1] != '<' || !strchr(p, '>'))
			return js_why_set(why, whysz, "'\\k' at offset %zu is not '\\k<name>'",
					  off);
		buf_add(out, p - 1, (size_t)(strchr(p, '>') - p) + 2);
		return (int)(strchr(p, '>') - p) + 1;
	case '0':
		if (p[1] >= '0' && p[1] <= '9')
			return js_why_set(
			    why, whysz,
			    "'\\0' at offset %zu is followed by a digit (octal escapes "
			    "are not ECMA-262)",
			    off);
		buf_str(out, "\\x{0}");
		return 1;
	case '-':
		if (!in_class)
			return js_why_set(why, whysz,
					  "'\\-' at offset %zu is only allowed in a class", off);
		buf_str(out, "\\-");
		return 1;
	default:
		break;
	}
	if (c >= '1' && c <= '9') {
		if (in_class)
			return js_why_set(why, whysz,
					  "'\\%c' at offset %zu is not allowed in a class (octal "
					  "escapes are not ECMA-262)",
					  c, off);
		size_t n = 0;
		while (p[n] >= '0' && p[n] <= '9' && n < 6)
			n++;
		buf_str(out, "\\g{");
		buf_add(out, p, n);
		buf_str(out, "}");
		return (int)n;
	}
	if (is_syntax_char(c)) {
		buf_add(out, p - 1, 2);
		return 1;
	}
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return js_why_set(why, whysz, "'\\%c' at offset %zu is not an ECMA-262 escape", c,
				  off);
	/* Other punctuation: a literal, as in ECMA-262 without the u flag
	 * (lenient on purpose; PCRE2 reads it the same way). A non-ASCII
	 * character after a backslash is that character. */
	buf_add(out, p - 1, 2);
	return 1;
}

/* A class; p points just after '['. Appends its PCRE2 form. Returns the bytes
 * consumed after '[', or -EINVAL. */
static int translate_class(const char *pat, const char *p, struct re_buf *out, char *why,
			   size_t whysz)
{
	const char *start = p;
	bool neg = false, has_S = false;
	struct re_buf cls = {0};
	int r;
	if (*p == '^') {
		neg = true;
		p++;
	}
	while (*p != ']') {
		if (*p == '\0') {
			r = js_why_set(why, whysz, "the class at offset %zu is not closed",
				       (size_t)(start - pat) - 1);
			goto out;
		}
		if (*p == '\\') {
			r = translate_escape(pat, p + 1, true, &cls, &has_S, why, whysz);
			if (r < 0)
				goto out;
			p += 1 + r;
		} else if (*p == '[') {
			buf_str(&cls, "\\[");
			p++;
		} else {
			buf_add(&cls, p, 1);
			p++;
		}
	}
	p++;
	if (!has_S) {
		if (cls.len == 0)
			buf_str(out, neg ? "[\\x{0}-\\x{10ffff}]" : "(?!)");
		else {
			buf_str(out, neg ? "[^" : "[");
			buf_add(out, cls.s, cls.len);
			buf_str(out, "]");
		}
	} else if (cls.len == 0) {
		buf_str(out, neg ? "[" ECMA_WS "]" : "[^" ECMA_WS "]");
	} else if (!neg) { /* [x\S]: x or a non-space */
		buf_str(out, "(?:[");
		buf_add(out, cls.s, cls.len);
		buf_str(out, "]|[^" ECMA_WS "])");
	} else { /* [^x\S]: a space that is not x */
		buf_str(out, "(?:(?![");
		buf_add(out, cls.s, cls.len);
		buf_str(out, "])[" ECMA_WS "])");
	}
	r = cls.oom ? -ENOMEM : (int)(p - start);
out:
	free(cls.s);
	return r;
}

/* "{n}", "{n,}" or "{n,m}" at p: its length, or 0. */
static size_t quantifier_len(const char *p)
{
	size_t i = 1;
	if (!(p[i] >= '0' && p[i] <= '9'))
		return 0;
	while (p[i] >= '0' && p[i] <= '9')
		i++;
	if (p[i] == ',') {
		i++;
		while (p[i] >= '0' && p[i] <= '9')
			i++;
	}
	return p[i] == '}' ? i + 1 : 0;
}

int js_ecma_to_pcre2(const char *pat, char **ret, char *why, size_t whysz)
{
	struct re_buf out = {0};
	bool after_quant = false;
	int r = 0;
	buf_str(&out, "");
	for (const char *p = pat; *p && r == 0;) {
		size_t off = (size_t)(p - pat);
		bool quant = false;
		switch (*p) {
		case '\\':
			r = translate_escape(pat, p + 1, false, &out, NULL, why, whysz);
			if (r >= 0) {
				p += 1 + r;
				r = 0;
			}
			break;
		case '[':
			r = translate_class(pat, p + 1, &out, why, whysz);
			if (r >= 0) {
				p += 1 + r;
				r = 0;
			}
			break;
		case '.':
			buf_str(&out, "[^\\n\\r\\x{2028}\\x{2029}]");
			p++;
			break;
		case '(':
			/* PCRE2 reads "(*UCP)", "(*CR)" and other verbs here; to
			 * ECMA-262 it is a quantifier with nothing to repeat. */
			if (p[1] == '*') {
				r = js_why_set(
				    why, whysz,
				    "'(*' at offset %zu is not ECMA-262 (nothing to repeat)", off);
				break;
			}
			if (p[1] == '?' &&
			    !(p[2] == ':' || p[2] == '=' || p[2] == '!' ||
			      (p[2] == '<' &&
			       (p[3] == '=' || p[3] == '!' || p[3] == '_' ||
				(p[3] >= 'a' && p[3] <= 'z') || (p[3] >= 'A' && p[3] <= 'Z'))))) {
				char g[2] = {p[2] > 0x20 && p[2] < 0x7f ? p[2] : '\0', '\0'};
				r = js_why_set(why, whysz,
					       "the group '(?%s' at offset %zu is not ECMA-262 "
					       "(allowed: (?: (?= (?! (?<= (?<! (?<name>)",
					       g, off);
				break;
			}
			buf_add(&out, p, p[1] == '?' ? 3 : 1);
			p += p[1] == '?' ? 3 : 1;
			break;
		case '*':
		case '+':
		case '?':
			if (after_quant && *p == '+') {
				r = js_why_set(why, whysz,
					       "the possessive quantifier at offset %zu is not "
					       "ECMA-262",
					       off);
				break;
			}
			if (after_quant && *p == '?') { /* lazy: a+? */
				buf_add(&out, p++, 1);
				after_quant = false;
				continue;
			}
			buf_add(&out, p++, 1);
			quant = true;
			break;
		case '{': {
			size_t n = quantifier_len(p);
			if (!n) {
				r = js_why_set(
				    why, whysz,
				    "the '{' at offset %zu starts no quantifier {n}, {n,} "
				    "or {n,m} (write '\\{' for the character)",
				    off);
				break;
			}
			buf_add(&out, p, n);
			p += n;
			quant = true;
			break;
		}
		case '}':
		case ']':
			r = js_why_set(why, whysz,
				       "the lone '%c' at offset %zu must be escaped ('\\%c')", *p,
				       off, *p);
			break;
		default:
			buf_add(&out, p++, 1);
			break;
		}
		after_quant = quant;
	}
	if (r == 0 && out.oom)
		r = -ENOMEM;
	if (r < 0) {
		free(out.s);
		return r;
	}
	*ret = out.s;
	return 0;
}
