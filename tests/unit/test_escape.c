/* The one XML/HTML escaper: entities, whitespace in both modes, control
 * characters, invalid UTF-8 and the XML non-characters, and the sink
 * interface (runs, n bytes, NULL). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/escape.h"
#include "util/macro.h"

static void check(const char *in, unsigned flags, const char *want)
{
	_cleanup_free_ char *got = escape_xml_dup(in, flags);
	assert_string_equal(got, want);
}

static void test_entities(void **state)
{
	(void)state;
	check("plain text", 0, "plain text");
	check("<script>alert(1)</script>", 0, "&lt;script&gt;alert(1)&lt;/script&gt;");
	check("a & b \"c\" 'd'", 0, "a &amp; b &quot;c&quot; &#39;d&#39;");
	check("&amp;", 0, "&amp;amp;");
	check("", 0, "");
	check(NULL, 0, "");
	check(NULL, ESCAPE_XML_WS, "");
	check("a & b \"c\" 'd'", ESCAPE_XML_WS, "a &amp; b &quot;c&quot; &#39;d&#39;");
}

static void test_whitespace(void **state)
{
	(void)state;
	check("line\n\ttab", 0, "line\n\ttab");
	check("a\rb", 0,
	      "a\xef\xbf\xbd"
	      "b");
	check("\t\r\n", ESCAPE_XML_WS, "&#9;&#13;&#10;");
	check("a b", ESCAPE_XML_WS, "a b");
}

static void test_utf8(void **state)
{
	(void)state;
	/* Valid multi-byte sequences pass through. */
	check("\xc2\xb5s \xe2\x80\x93 \xf0\x9f\x90\xa7", 0,
	      "\xc2\xb5s \xe2\x80\x93 \xf0\x9f\x90\xa7");
	check("d\xc3\xa9"
	      "e\xe2\x82\xac",
	      ESCAPE_XML_WS,
	      "d\xc3\xa9"
	      "e\xe2\x82\xac");
	/* Stray continuation byte, truncated sequence, overlong '<' and '/',
	 * surrogate, out-of-range lead byte: each bad byte becomes U+FFFD. */
	check("a\x80z", 0, "a\xef\xbf\xbdz");
	check("a\xe2\x80", 0, "a\xef\xbf\xbd\xef\xbf\xbd");
	check("\xc0\xbc", 0, "\xef\xbf\xbd\xef\xbf\xbd");
	check("b\xc0\xaf", ESCAPE_XML_WS, "b\xef\xbf\xbd\xef\xbf\xbd");
	check("\xed\xa0\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	check("\xf5\x80\x80\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	/* U+FFFE and U+FFFF are not XML characters; U+FFFD and U+10FFFF are. */
	check("\xef\xbf\xbe", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	check("\xef\xbf\xbf", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	check("\xef\xbf\xbd\xf4\x8f\xbf\xbf", 0, "\xef\xbf\xbd\xf4\x8f\xbf\xbf");
}

static void test_control(void **state)
{
	(void)state;
	check("\x1b[31mred\x1b[0m", 0, "\xef\xbf\xbd[31mred\xef\xbf\xbd[0m");
	check("a\x01z\x7f", 0, "a\xef\xbf\xbdz\xef\xbf\xbd");
	check("a\x01z\x7f", ESCAPE_XML_WS, "a\xef\xbf\xbdz\xef\xbf\xbd");
}

struct collect {
	char out[256];
	size_t len;
	int calls;
};

static void collect_sink(void *ctx, const char *s, size_t n)
{
	struct collect *c = ctx;

	assert_true(n > 0);
	assert_true(c->len + n < sizeof(c->out));
	memcpy(c->out + c->len, s, n);
	c->len += n;
	c->calls++;
}

static void test_sink(void **state)
{
	(void)state;
	struct collect c = {0};

	/* n bytes, not up to the NUL: an embedded NUL is a control character
	 * and a cut multi-byte sequence is invalid. */
	escape_xml("ab<cd\0e\xc3\xa9", 9, 0, collect_sink, &c);
	assert_int_equal(c.len, strlen("ab&lt;cd\xef\xbf\xbd"
				       "e\xc3\xa9"));
	assert_memory_equal(c.out,
			    "ab&lt;cd\xef\xbf\xbd"
			    "e\xc3\xa9",
			    c.len);
	/* Runs of safe bytes arrive in one call: "ab", "&lt;", "cd", U+FFFD,
	 * "e\xc3\xa9". */
	assert_int_equal(c.calls, 5);

	memset(&c, 0, sizeof(c));
	escape_xml("x\xc3\xa9", 2, 0, collect_sink, &c);
	assert_memory_equal(c.out, "x\xef\xbf\xbd", c.len);
	escape_xml(NULL, 3, 0, collect_sink, &c);
	escape_xml("abc", 0, 0, collect_sink, &c);
	assert_int_equal(c.calls, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_entities), cmocka_unit_test(test_whitespace),
	    cmocka_unit_test(test_utf8),     cmocka_unit_test(test_control),
	    cmocka_unit_test(test_sink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
