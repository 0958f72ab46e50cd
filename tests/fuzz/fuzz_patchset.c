/* libFuzzer target: patchset_from_mbox() (service/job/patchset.c) on
 * arbitrary bytes, as an mbox upload or a patch file is. Checks what its
 * header promises: on success a non-empty array of at most max_patches
 * {"name", "content"} objects, each name a safe file name (letters, digits,
 * "._-+", starting with a letter or digit, at most PATCHSET_MAX_NAME bytes),
 * each content no larger than max_patch_bytes and free of NUL and CR-LF. */
#include <assert.h>
#include <ctype.h>
#include <json-c/json.h>
#include <stdint.h>
#include <string.h>

#include "job/job.h"
#include "job/patchset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object *out = NULL;
	struct sl_error err = {0};
	/* The first byte picks whether a default name is given. */
	const char *def = size > 0 && (data[0] & 1) ? "input.patch" : NULL;
	if (patchset_from_mbox((const char *)data, size, def, &out, &err) < 0) {
		assert(!out && err.message[0]);
		return 0;
	}
	const struct job_limits *lim = job_default_limits();
	size_t n = json_object_array_length(out);
	assert(n >= 1 && n <= (size_t)lim->max_patches);
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(out, i), *name, *content;
		assert(json_object_object_get_ex(p, "name", &name));
		assert(json_object_object_get_ex(p, "content", &content));
		const char *s = json_object_get_string(name);
		size_t len = strlen(s);
		assert(len >= 1 && len <= PATCHSET_MAX_NAME && isalnum((unsigned char)s[0]));
		for (size_t k = 0; k < len; k++)
			assert(isalnum((unsigned char)s[k]) || strchr("._-+", s[k]));
		size_t clen = (size_t)json_object_get_string_len(content);
		const char *c = json_object_get_string(content);
		assert(clen <= lim->max_patch_bytes && strlen(c) == clen && !strstr(c, "\r\n"));
	}
	json_object_put(out);
	return 0;
}
