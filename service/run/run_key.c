#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "run/run_key.h"
#include "util/parse.h"

/* Like run_key_init(), with the variant given by length (not NUL-terminated). */
static int run_key_init_n(const char *variant, size_t len, int repeat, struct run_key *ret)
{
	if (len == 0 || memchr(variant, '#', len) || memchr(variant, '\0', len) || repeat < 0)
		return -EINVAL;
	if (len > RUN_KEY_VARIANT_MAX)
		return -ENAMETOOLONG;
	memcpy(ret->variant, variant, len);
	ret->variant[len] = '\0';
	ret->repeat = repeat;
	return 0;
}

int run_key_init(const char *variant, int repeat, struct run_key *ret)
{
	if (!variant)
		return -EINVAL;
	return run_key_init_n(variant, strlen(variant), repeat, ret);
}

const char *run_key_format(const struct run_key *key, char buf[static RUN_KEY_STRLEN])
{
	snprintf(buf, RUN_KEY_STRLEN, "%s#%d", key->variant, key->repeat);
	return buf;
}

int run_key_parse(const char *text, struct run_key *ret)
{
	if (!text)
		return -EINVAL;
	const char *hash = strchr(text, '#');
	if (!hash)
		return -EINVAL;
	const char *digits = hash + 1;
	/* "0" or a digit string without a sign or a leading zero: one text per key. */
	if (digits[0] < '0' || digits[0] > '9' || (digits[0] == '0' && digits[1]))
		return -EINVAL;
	long repeat;
	if (parse_int(digits, 0, INT_MAX, &repeat) < 0)
		return -EINVAL;
	return run_key_init_n(text, (size_t)(hash - text), (int)repeat, ret);
}
