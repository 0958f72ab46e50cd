/* libFuzzer target: the ELF reader (service/kernel/elfdeps.c) on any bytes,
 * as it reads the binaries a build produced. Checks, for any input: a
 * failure has a message and leaves *ret NULL; a success has a
 * NULL-terminated needed list of n_needed <= ELFDEPS_MAX_NEEDED non-empty
 * names shorter than the image, and an interp (when there is one) shorter
 * than the image; nothing reads outside the buffer (ASan: the input is
 * copied into an allocation of exactly its size). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/elfdeps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: a read one byte past the image is caught */
	uint8_t *buf = malloc(size ? size : 1);
	assert(buf);
	if (size)
		memcpy(buf, data, size);
	struct elf_info *info = NULL;
	struct sl_error err = {0};
	int r = elfdeps_parse(buf, size, "fuzz.elf", &info, &err);
	if (r < 0) {
		assert(!info);
		assert(err.message[0] != '\0');
		free(buf);
		return 0;
	}
	assert(info && info->needed);
	assert(info->n_needed <= ELFDEPS_MAX_NEEDED);
	assert(info->needed[info->n_needed] == NULL);
	for (size_t i = 0; i < info->n_needed; i++) {
		size_t len = strlen(info->needed[i]);
		assert(len > 0 && len < size);
	}
	if (info->interp)
		assert(strlen(info->interp) < size);
	elf_info_free(info);
	free(buf);
	return 0;
}
