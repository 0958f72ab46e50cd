/* libFuzzer target: the sched feature and tunable names read from a kernel
 * tree a build produced (service/kernel/sched_names.c): an odd first byte
 * feeds the rest as kernel/sched/features.h, an even one as
 * kernel/sched/debug.c. Checks, for any text: the count returned is the
 * count appended, at most SCHED_NAMES_MAX; every name is 1..64 characters of
 * [A-Z0-9_] (features) or [a-z0-9_] (tunables), is in the text, and is
 * there once; parsing again into the same list appends nothing. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sched_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 1 << 20)
		return 0;
	bool features = data[0] & 1;
	char *text = malloc(size);
	assert(text);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	json_object *arr = json_object_new_array();
	int n = features ? sched_names_parse_features(text, arr)
			 : sched_names_parse_tunables(text, arr);
	assert(n >= 0 && (size_t)n == json_object_array_length(arr));
	assert(n <= SCHED_NAMES_MAX);
	const char *set = features ? "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
				   : "abcdefghijklmnopqrstuvwxyz0123456789_";
	for (int i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(arr, (size_t)i));
		size_t len = strlen(s);
		assert(len >= 1 && len <= 64 && strspn(s, set) == len);
		assert(strstr(text, s));
		for (int k = 0; k < i; k++)
			assert(strcmp(s, json_object_get_string(
					     json_object_array_get_idx(arr, (size_t)k))) != 0);
	}
	int again = features ? sched_names_parse_features(text, arr)
			     : sched_names_parse_tunables(text, arr);
	assert(again == 0);
	json_object_put(arr);
	free(text);
	return 0;
}
