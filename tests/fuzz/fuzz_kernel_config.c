/* libFuzzer target: the parsers of text a kernel build hands back. The
 * first byte picks: 0 a config fragment (strict), 1 a .config as
 * olddefconfig wrote it (lenient), 2 patch(1)'s output after a failed run
 * (service/kernel/kernel_config.c, kernel_tree.c). Checks, for any text: a
 * rejected config has a message naming the config; an accepted one has at
 * most 4 * KBUILD_MAX_CONFIG_LINES entries, each a CONFIG_ name of
 * [A-Za-z0-9_] and a non-empty value, and its lines print back as a config
 * that parses to the same entries; patch's explanation is one non-empty,
 * NUL-terminated line within its buffer. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kbuild-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_config(const char *text, bool strict)
{
	struct config_entry *v = NULL;
	size_t n = 0;
	struct sl_error err = {0};
	if (kernel_config_parse(text, "fuzz", strict, &v, &n, &err) < 0) {
		assert(strstr(err.message, "'fuzz'"));
		assert(!v);
		return;
	}
	assert(n <= 4 * KBUILD_MAX_CONFIG_LINES);
	/* print the entries back as a fragment: it must parse to the same */
	size_t cap = n * (sizeof(v->name) + sizeof(v->value) + 32) + 1;
	char *out = malloc(cap);
	assert(out);
	size_t at = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(v[i].name);
		assert(len > 7 && strncmp(v[i].name, "CONFIG_", 7) == 0);
		assert(strspn(v[i].name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					 "0123456789_") == len);
		assert(v[i].value[0] != '\0');
		at += (size_t)snprintf(out + at, cap - at, "%s=%s\n", v[i].name, v[i].value);
	}
	struct config_entry *w = NULL;
	size_t m = 0;
	int r = kernel_config_parse(out, "again", true, &w, &m, &err);
	if (r < 0)
		fprintf(stderr, "printed back, it does not parse: %s\n", err.message);
	assert(r == 0 && m == n);
	for (size_t i = 0; i < n; i++) {
		assert(strcmp(v[i].name, w[i].name) == 0);
		/* "is not set" prints back as =n, which is the same option value */
		assert(strcmp(v[i].value, w[i].value) == 0);
	}
	free(w);
	free(out);
	free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 1 << 20)
		return 0;
	char *text = malloc(size);
	assert(text);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0:
	case 1:
		check_config(text, data[0] % 3 == 0);
		break;
	default: {
		char why[300];
		memset(why, 'X', sizeof(why));
		kernel_tree_patch_explain(text, why, sizeof(why));
		size_t len = strnlen(why, sizeof(why));
		assert(len > 0 && len < sizeof(why));
		break;
	}
	}
	free(text);
	return 0;
}
