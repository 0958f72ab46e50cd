/* SHA-256 (OpenSSL's EVP) for content-addressed caches. Hex digests are 64
 * lowercase characters plus NUL. */
#pragma once

#include <stddef.h>
#include "util/error.h"

#define HASH_HEX_LEN 65

struct hash_ctx;
struct hash_ctx *hash_new(void);
void hash_update(struct hash_ctx *h, const void *data, size_t len);
/* Adds a length-prefixed string, so ("ab","c") and ("a","bc") differ. */
void hash_update_str(struct hash_ctx *h, const char *s);
/* Writes the hex digest and frees h. */
void hash_final_hex(struct hash_ctx *h, char out[HASH_HEX_LEN]);
void hash_free(struct hash_ctx *h);
int hash_file_hex(const char *path, char out[HASH_HEX_LEN], struct sl_error *err);
void hash_buf_hex(const void *data, size_t len, char out[HASH_HEX_LEN]);
