/* Strict UTF-8 validation. See utf8.h. */
#include <stdint.h>

#include "proto/utf8.h"

size_t utf8_seq_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp;
	size_t need;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	/* 0xC0, 0xC1 only start overlong forms; 0xF5.. start > U+10FFFF. */
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		need = 2;
		cp = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		need = 3;
		cp = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		need = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < need)
		return 0;
	for (size_t i = 1; i < need; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) || cp > 0x10FFFF ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return need;
}

bool utf8_valid(const char *s, size_t len, size_t *ret_bad_offset)
{
	size_t i = 0;

	while (i < len) {
		/* ASCII runs are the common case. */
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		size_t n = utf8_seq_len(s + i, len - i);
		if (n == 0) {
			if (ret_bad_offset)
				*ret_bad_offset = i;
			return false;
		}
		i += n;
	}
	return true;
}
