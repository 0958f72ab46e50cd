#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <openssl/evp.h>

#include "util/hash.h"

struct hash_ctx {
	EVP_MD_CTX *md;
};

struct hash_ctx *hash_new(void)
{
	struct hash_ctx *h = calloc(1, sizeof(*h));
	if (!h)
		abort();
	h->md = EVP_MD_CTX_new();
	if (!h->md || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1)
		abort();
	return h;
}

void hash_update(struct hash_ctx *h, const void *data, size_t len)
{
	EVP_DigestUpdate(h->md, data, len);
}

void hash_update_str(struct hash_ctx *h, const char *s)
{
	char prefix[32];
	size_t len = s ? strlen(s) : 0;
	int n = snprintf(prefix, sizeof(prefix), "%zu:", len);
	hash_update(h, prefix, (size_t)n);
	if (len)
		hash_update(h, s, len);
}

void hash_final_hex(struct hash_ctx *h, char out[HASH_HEX_LEN])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_DigestFinal_ex(h->md, md, &n);
	for (unsigned int i = 0; i < n && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[64] = '\0';
	hash_free(h);
}

void hash_free(struct hash_ctx *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->md);
	free(h);
}

int hash_file_hex(const char *path, char out[HASH_HEX_LEN], struct sl_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot open '%s': %s.", path,
				 strerror(errno));
	struct hash_ctx *h = hash_new();
	char buf[65536];
	for (;;) {
		ssize_t k = read(fd, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			hash_free(h);
			return error_set(err, ERR_INTERNAL, e, "Cannot read '%s': %s.", path,
					 strerror(e));
		}
		if (k == 0)
			break;
		hash_update(h, buf, (size_t)k);
	}
	hash_final_hex(h, out);
	return 0;
}

void hash_buf_hex(const void *data, size_t len, char out[HASH_HEX_LEN])
{
	struct hash_ctx *h = hash_new();
	hash_update(h, data, len);
	hash_final_hex(h, out);
}
