/* Frames: how the guest agent hands results to the host over a serial port
 * (docs/contracts.md section 2):
 *
 *   \nSLFRAME v1 <kind> <payload-length> <crc32-hex8>\n<payload bytes>\nSLEND\n
 *
 * This file is built twice: into the static guest agent (the writer) and into
 * the host library (the streaming parser). It depends on libc only. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define FRAME_MAX_PAYLOAD (4u * 1024 * 1024)
#define FRAME_KIND_MAX	  15   /* characters, [a-z0-9_-] */
#define FRAME_MAX_QUEUED  1024 /* complete frames held before the caller pops them */

struct frame {
	char kind[FRAME_KIND_MAX + 1];
	char *payload; /* malloc'd, len bytes plus a NUL; owned by the frame */
	size_t len;
};

struct frame_parser;

/* IEEE CRC-32 (the zlib polynomial) of buf. */
uint32_t frame_crc32(const void *buf, size_t len);

/* Writes one frame to fd, retrying short writes and EINTR. kind must be 1..15
 * characters of [a-z0-9_-] and len at most FRAME_MAX_PAYLOAD. Returns 0, or
 * -EINVAL (bad kind), -E2BIG (payload too long) or the write's -errno. */
int frame_write(int fd, const char *kind, const char *payload, size_t len);

/* A streaming parser that accepts at most max_payload bytes per frame (0 or
 * more than FRAME_MAX_PAYLOAD means FRAME_MAX_PAYLOAD). Memory use is bounded
 * by about max_payload, whatever the input. NULL on OOM. */
struct frame_parser *frame_parser_new(size_t max_payload);
/* Frees the parser and any frames not popped yet. NULL is fine. */
void frame_parser_free(struct frame_parser *p);

/* Feeds raw serial bytes, in any chunking. Noise between frames (kernel
 * messages, '\r' from a tty) is skipped. Returns the number of complete frames
 * now waiting to be popped. */
int frame_parser_feed(struct frame_parser *p, const void *buf, size_t len);

/* Pops the oldest complete frame into *ret (the caller then owns ret->payload;
 * release it with frame_clear()) and returns 1, or returns 0 when none waits. */
int frame_parser_next(struct frame_parser *p, struct frame *ret);

/* Number of errors seen so far: bad checksum, payload not valid UTF-8 (such a
 * frame is dropped), oversized or malformed header,
 * malformed trailer, too many frames queued, truncated frame (after
 * frame_parser_finish). *ret_last_message (may be NULL) receives a whole
 * sentence describing the last one, or NULL when there is none; it points into
 * the parser and stays valid until the next feed or free. */
int frame_parser_errors(const struct frame_parser *p, const char **ret_last_message);

/* Marks the end of the stream: a frame cut off in the middle counts as an
 * error (truncated). */
void frame_parser_finish(struct frame_parser *p);

/* Frees f->payload and zeroes f. */
void frame_clear(struct frame *f);
