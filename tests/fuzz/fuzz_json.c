/* libFuzzer target: json_parse_strict(), the one JSON entry point for
 * outside input. The first byte picks the limits (a small depth and size
 * bound, or the defaults); the rest is the input. Checks: a rejected input
 * gets -EINVAL or -E2BIG, a matching error kind and a message, and *ret
 * untouched; an accepted one is valid UTF-8 without a NUL byte, fits the
 * size limit, and its serialisation parses again (under the same limits) to
 * a document that serialises to the same text. */
#include <assert.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/utf8.h"
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SENTINEL ((json_object *)(uintptr_t)0x1)

static const char *to_text(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 256 * 1024)
		return 0;
	/* Low bits: the depth (0: the default); high bit: a small size limit. */
	struct json_limits lim = {
	    .max_depth = data[0] & 0x0f,
	    .max_bytes = (data[0] & 0x80) ? 64 : 0,
	};
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	struct sl_error err = {0};
	json_object *o = SENTINEL;

	int r = json_parse_strict(text, len, &lim, "fuzz input", &o, &err);
	if (r < 0) {
		assert(r == -EINVAL || r == -E2BIG);
		assert(err.kind == (r == -E2BIG ? ERR_TOO_LARGE : ERR_INVALID));
		assert(err.message[0] != '\0');
		assert(o == SENTINEL);
		return 0;
	}
	assert(r == 0);
	assert(o != SENTINEL);
	assert(utf8_valid(text, len, NULL));
	assert(!memchr(text, '\0', len));
	assert(len <= (lim.max_bytes ? lim.max_bytes : JSON_DEFAULT_MAX_BYTES));

	/* What we accepted, written out by json-c, is strict JSON again. */
	const char *once = to_text(o);
	struct json_limits again_lim = {.max_depth = lim.max_depth};
	json_object *again = SENTINEL;
	struct sl_error err2 = {0};
	if (json_parse_strict(once, strlen(once), &again_lim, "serialised input", &again, &err2) <
	    0) {
		fprintf(stderr, "accepted input does not parse again: %s\n%s\n", err2.message,
			once);
		abort();
	}
	assert(strcmp(once, to_text(again)) == 0);
	json_object_put(again);
	json_object_put(o);
	return 0;
}
