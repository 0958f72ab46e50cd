/* The one strict UTF-8 validator, shared by the host library and the static
 * guest agent (like frame.c, it depends on libc only). Strict means RFC 3629:
 * no overlong forms, no surrogates (U+D800..U+DFFF), nothing past U+10FFFF. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Length (1..4) of the valid UTF-8 sequence at the start of s[0..n), or 0
 * when it is invalid or cut off (n == 0 gives 0). A NUL byte is a valid
 * one-byte sequence here; callers that refuse NUL check for it themselves. */
size_t utf8_seq_len(const char *s, size_t n);

/* True when s[0..len) is entirely valid UTF-8. When it is not and
 * ret_bad_offset is not NULL, *ret_bad_offset receives the offset of the
 * first byte that does not start a valid sequence. */
bool utf8_valid(const char *s, size_t len, size_t *ret_bad_offset);
