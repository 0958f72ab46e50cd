/* libFuzzer target: the host's serial frame parser (workloads/proto/frame.c)
 * on arbitrary console bytes. The first input byte picks the chunk size the
 * rest is fed in, so split headers and trailers are covered. Checks the
 * parser's contract: every frame it hands out has a valid kind, at most
 * max_payload bytes, valid UTF-8 and a NUL after them, and the agent's writer
 * (frame_write) accepts it and re-encodes it into bytes that parse back to
 * the same frame without errors. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proto/frame.h"
#include "proto/utf8.h"

#define MAX_PAYLOAD 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes f with frame_write into a memfd, parses the bytes back, and checks
 * that exactly f comes out. */
static void round_trip(const struct frame *f)
{
	static int fd = -1;
	static char buf[MAX_PAYLOAD + 128];
	if (fd < 0)
		fd = memfd_create("fuzz-frame", 0);
	assert(fd >= 0);
	assert(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	assert(frame_write(fd, f->kind, f->payload, f->len) == 0);
	off_t n = lseek(fd, 0, SEEK_CUR);
	assert(n > 0 && (size_t)n <= sizeof(buf));
	assert(pread(fd, buf, (size_t)n, 0) == n);

	struct frame_parser *p = frame_parser_new(MAX_PAYLOAD);
	assert(p);
	assert(frame_parser_feed(p, buf, (size_t)n) == 1);
	struct frame g;
	assert(frame_parser_next(p, &g) == 1);
	assert(strcmp(g.kind, f->kind) == 0 && g.len == f->len);
	assert(memcmp(g.payload, f->payload, f->len) == 0);
	assert(frame_parser_errors(p, NULL) == 0);
	frame_clear(&g);
	frame_parser_free(p);
}

static void check_frame(const struct frame *f)
{
	size_t kl = strlen(f->kind);
	assert(kl >= 1 && kl <= FRAME_KIND_MAX);
	for (size_t i = 0; i < kl; i++)
		assert(strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", f->kind[i]));
	assert(f->len <= MAX_PAYLOAD);
	assert(f->payload && f->payload[f->len] == '\0');
	assert(utf8_valid(f->payload, f->len, NULL));
	round_trip(f);
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
