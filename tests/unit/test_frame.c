/* Frame protocol: writer and streaming parser (workloads/proto/frame.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto/frame.h"

/* A growable byte buffer standing in for the serial stream. */
struct stream {
	char *data;
	size_t len;
};

static void stream_add(struct stream *s, const void *data, size_t len)
{
	s->data = realloc(s->data, s->len + len + 1);
	assert_non_null(s->data);
	memcpy(s->data + s->len, data, len);
	s->len += len;
}

static void stream_add_str(struct stream *s, const char *str)
{
	stream_add(s, str, strlen(str));
}

/* Appends what frame_write() really writes to a file descriptor. */
static void stream_add_frame(struct stream *s, const char *kind, const char *payload, size_t len)
{
	int fd = memfd_create("frame", MFD_CLOEXEC);
	off_t size;

	assert_true(fd >= 0);
	assert_int_equal(frame_write(fd, kind, payload, len), 0);
	size = lseek(fd, 0, SEEK_CUR);
	assert_true(size > 0);
	char *buf = malloc((size_t)size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	stream_add(s, buf, (size_t)size);
	free(buf);
	close(fd);
}

static void feed_chunked(struct frame_parser *p, const struct stream *s, size_t chunk)
{
	for (size_t off = 0; off < s->len; off += chunk) {
		size_t n = s->len - off < chunk ? s->len - off : chunk;
		frame_parser_feed(p, s->data + off, n);
	}
}

static void expect_frame(struct frame_parser *p, const char *kind, const char *payload, size_t len)
{
	struct frame f = {0};

	assert_int_equal(frame_parser_next(p, &f), 1);
	assert_string_equal(f.kind, kind);
	assert_int_equal(f.len, len);
	assert_memory_equal(f.payload, payload, len);
	assert_int_equal(f.payload[len], '\0');
	frame_clear(&f);
}

static void expect_no_frame(struct frame_parser *p)
{
	struct frame f = {0};
	assert_int_equal(frame_parser_next(p, &f), 0);
}

static void test_crc32_known_values(void **state)
{
	(void)state;
	assert_int_equal(frame_crc32("123456789", 9), 0xcbf43926u);
	assert_int_equal(frame_crc32("", 0), 0);
	assert_int_equal(frame_crc32("The quick brown fox jumps over the lazy dog", 43),
			 0x414fa339u);
}

static void test_write_format(void **state)
{
	struct stream s = {0};
	(void)state;

	stream_add_frame(&s, "hello", "{}", 2);
	stream_add(&s, "", 1);
	assert_string_equal(s.data, "\nSLFRAME v1 hello 2 a3a6bf43\n{}\nSLEND\n");
	/* the same checksum zlib gives for "{}" */
	assert_int_equal(frame_crc32("{}", 2), 0xa3a6bf43u);
	free(s.data);
}

static void test_write_rejects_bad_input(void **state)
{
	int fd = memfd_create("frame", MFD_CLOEXEC);
	(void)state;

	assert_int_equal(frame_write(fd, "", "x", 1), -EINVAL);
	assert_int_equal(frame_write(fd, "Bad Kind", "x", 1), -EINVAL);
	assert_int_equal(frame_write(fd, "a-very-long-kind-name", "x", 1), -EINVAL);
	assert_int_equal(frame_write(fd, "ok", NULL, 1), -EINVAL);
	assert_int_equal(frame_write(fd, "ok", "x", FRAME_MAX_PAYLOAD + 1), -E2BIG);
	assert_int_equal(frame_write(-1, "ok", "x", 1), -EBADF);
	assert_int_equal(lseek(fd, 0, SEEK_END), 0);
	close(fd);
}

static void test_odd_chunkings(void **state)
{
	static const size_t chunks[] = {1, 2, 3, 5, 7, 13, 64, 4096, 1 << 20};
	struct stream s = {0};
	char big[70000];
	(void)state;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	stream_add_frame(&s, "hello", "{\"agent\":\"schedlab-agent\"}", 26);
	stream_add_frame(&s, "workload", big, sizeof(big));
	stream_add_frame(&s, "empty", "", 0);
	stream_add_frame(&s, "summary", "{\"errors\":[]}", 13);

	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		struct frame_parser *p = frame_parser_new(0);
		assert_non_null(p);
		feed_chunked(p, &s, chunks[c]);
		frame_parser_finish(p);
		expect_frame(p, "hello", "{\"agent\":\"schedlab-agent\"}", 26);
		expect_frame(p, "workload", big, sizeof(big));
		expect_frame(p, "empty", "", 0);
		expect_frame(p, "summary", "{\"errors\":[]}", 13);
		expect_no_frame(p);
		assert_int_equal(frame_parser_errors(p, NULL), 0);
		frame_parser_free(p);
	}
	free(s.data);
}

static void test_noise_between_frames(void **state)
{
	struct stream s = {0};
	struct frame_parser *p = frame_parser_new(0);
	const char *msg = (const char *)1;
	(void)state;

	stream_add_str(&s, "[    0.000000] Linux version 6.1.0\r\nSLFRAM");
	stream_add_frame(&s, "hello", "a", 1);
	stream_add_str(&s, "\r\r\n[    1.2] random: crng init done\nSLFRAME but no header\n");
	stream_add(&s, "\0\xff\xfe", 3);
	stream_add_frame(&s, "workload", "b", 1);
	/* a tty that translated every "\n" into "\r\n" */
	stream_add_str(&s, "\r\nSLFRAME v1 summary 1 06b9df6f\r\nc\r\nSLEND\r\n");
	stream_add_str(&s, "trailing noise");

	feed_chunked(p, &s, 3);
	frame_parser_finish(p);
	expect_frame(p, "hello", "a", 1);
	expect_frame(p, "workload", "b", 1);
	expect_frame(p, "summary", "c", 1);
	expect_no_frame(p);
	/* "SLFRAME but no header" is a malformed header, and only that */
	assert_int_equal(frame_parser_errors(p, &msg), 1);
	assert_non_null(strstr(msg, "fields"));
	frame_parser_free(p);
	free(s.data);
}

static void test_bad_checksum(void **state)
{
	struct stream s = {0};
	struct frame_parser *p = frame_parser_new(0);
	const char *msg = NULL;
	(void)state;

	stream_add_frame(&s, "workload", "{\"index\":0}", 11);
	s.data[s.len - 10] ^= 0x01; /* flip a payload bit */
	stream_add_frame(&s, "summary", "{}", 2);
	frame_parser_feed(p, s.data, s.len);
	expect_frame(p, "summary", "{}", 2);
	expect_no_frame(p);
	assert_int_equal(frame_parser_errors(p, &msg), 1);
	assert_non_null(strstr(msg, "bad checksum"));
	assert_non_null(strstr(msg, "'workload'"));
	frame_parser_free(p);
	free(s.data);
}

/* A payload with a good checksum but bytes that are not UTF-8 (an overlong
 * '/', a surrogate) is dropped with an error naming the offset; valid
 * multi-byte text passes. */
static void test_bad_utf8_payload(void **state)
{
	struct stream s = {0};
	struct frame_parser *p = frame_parser_new(0);
	const char *msg = NULL;
	(void)state;

	stream_add_frame(&s, "workload", "{\"s\":\"\xc0\xaf\"}", 10);
	stream_add_frame(&s, "workload", "{\"s\":\"\xed\xa0\x80\"}", 11);
	stream_add_frame(&s, "summary", "{\"s\":\"\xe2\x82\xac\"}", 11);
	frame_parser_feed(p, s.data, s.len);
	expect_frame(p, "summary", "{\"s\":\"\xe2\x82\xac\"}", 11);
	expect_no_frame(p);
	assert_int_equal(frame_parser_errors(p, &msg), 2);
	assert_non_null(
	    strstr(msg, "Frame 'workload' of 11 bytes is not valid UTF-8 at offset 6."));
	frame_parser_free(p);
	free(s.data);
}

static void test_truncated(void **state)
{
	struct stream s = {0};
	struct frame_parser *p = frame_parser_new(0);
	const char *msg = NULL;
	(void)state;

	stream_add_frame(&s, "hello", "{}", 2);
	stream_add_frame(&s, "workload", "0123456789", 10);
	s.len -= 12; /* cut inside the payload: the guest died mid-write */
	assert_int_equal(frame_parser_feed(p, s.data, s.len), 1);
	assert_int_equal(frame_parser_errors(p, NULL), 0);
	frame_parser_finish(p);
	assert_int_equal(frame_parser_errors(p, &msg), 1);
	assert_non_null(strstr(msg, "truncated"));
	assert_non_null(strstr(msg, "5 of 10"));
	expect_frame(p, "hello", "{}", 2);
	expect_no_frame(p);
	frame_parser_free(p);

	/* cut inside the header */
	p = frame_parser_new(0);
	frame_parser_feed(p, "\nSLFRAME v1 summ", 16);
	frame_parser_finish(p);
	assert_int_equal(frame_parser_errors(p, &msg), 1);
	assert_non_null(strstr(msg, "header"));
	frame_parser_free(p);
	free(s.data);
}

static void test_oversized(void **state)
{
	struct stream s = {0};
	struct frame_parser *p = frame_parser_new(16);
	const char *msg = NULL;
	(void)state;

	stream_add_frame(&s, "workload", "0123456789abcdefXYZ", 19);
	stream_add_frame(&s, "summary", "0123456789abcdef", 16);
	feed_chunked(p, &s, 4);
	frame_parser_finish(p);
	expect_frame(p, "summary", "0123456789abcdef", 16);
	expect_no_frame(p);
	assert_int_equal(frame_parser_errors(p, &msg), 1);
	assert_non_null(strstr(msg, "19 bytes"));
	frame_parser_free(p);
	free(s.data);
}

static void test_huge_length_field(void **state)
{
	struct frame_parser *p = frame_parser_new(0);
	const char *msg = NULL;
	struct stream s = {0};
	(void)state;

	/* Neither is ever allocated: one has 20 digits, one is 4 GiB. */
	stream_add_str(&s, "\nSLFRAME v1 workload 99999999999999999999 00000000\n");
	stream_add_str(&s, "\nSLFRAME v1 workload 4294967295 00000000\nxx\nSLEND\n");
	stream_add_frame(&s, "summary", "{}", 2);
	frame_parser_feed(p, s.data, s.len);
	frame_parser_finish(p);
	expect_frame(p, "summary", "{}", 2);
	expect_no_frame(p);
	assert_int_equal(frame_parser_errors(p, &msg), 2);
	assert_non_null(strstr(msg, "4294967295 bytes"));
	frame_parser_free(p);
	free(s.data);
}

static void test_malformed_headers(void **state)
{
	static const char *const bad[] = {
	    "\nSLFRAME v2 hello 1 e8b7be43\nc\nSLEND\n",
	    "\nSLFRAME v1 HELLO 1 e8b7be43\nc\nSLEND\n",
	    "\nSLFRAME v1 hello -1 e8b7be43\nc\nSLEND\n",
	    "\nSLFRAME v1 hello 1 e8b7be4\nc\nSLEND\n",
	    "\nSLFRAME v1 hello 1 e8b7be43 extra\nc\nSLEND\n",
	    "\nSLFRAME v1 hello 1 e8b7be43\ncX\nSLEND\n", /* length does not match */
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct frame_parser *p = frame_parser_new(0);
		frame_parser_feed(p, bad[i], strlen(bad[i]));
		frame_parser_finish(p);
		expect_no_frame(p);
		assert_int_equal(frame_parser_errors(p, NULL), 1);
		frame_parser_free(p);
	}
}

/* A header whose trailer is missing must not swallow the real frame after it. */
static void test_resync_after_bogus_header(void **state)
{
	struct stream s = {0};
	struct frame_parser *p = frame_parser_new(0);
	(void)state;

	stream_add_str(&s, "\nSLFRAME v1 noise 30 00000000\nshort");
	stream_add_frame(&s, "summary", "{}", 2);
	stream_add_str(&s, "padding padding padding padding");
	frame_parser_feed(p, s.data, s.len);
	frame_parser_finish(p);
	expect_frame(p, "summary", "{}", 2);
	expect_no_frame(p);
	assert_int_equal(frame_parser_errors(p, NULL), 1);
	frame_parser_free(p);
	free(s.data);
}

/* Megabytes of noise without a frame: nothing is kept, nothing is reported. */
static void test_garbage_only(void **state)
{
	struct frame_parser *p = frame_parser_new(0);
	size_t n = 8 << 20;
	unsigned char *junk = malloc(n);
	uint32_t x = 12345;
	(void)state;

	assert_non_null(junk);
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (unsigned char)(x >> 16);
	}
	frame_parser_feed(p, junk, n);
	frame_parser_finish(p);
	expect_no_frame(p);
	assert_int_equal(frame_parser_errors(p, NULL), 0);
	frame_parser_free(p);
	free(junk);
}

static void test_queue_bound(void **state)
{
	struct stream s = {0};
	struct frame_parser *p = frame_parser_new(0);
	const char *msg = NULL;
	(void)state;

	for (int i = 0; i < FRAME_MAX_QUEUED + 3; i++)
		stream_add_frame(&s, "workload", "x", 1);
	assert_int_equal(frame_parser_feed(p, s.data, s.len), FRAME_MAX_QUEUED);
	assert_int_equal(frame_parser_errors(p, &msg), 3);
	assert_non_null(strstr(msg, "dropped"));
	frame_parser_free(p); /* frees the queued frames */
	free(s.data);
}

/* Random damage in random chunkings: never a crash (ASan watches), never a
 * payload that was not sent. */
static void test_mutations(void **state)
{
	struct stream s = {0};
	uint32_t x = 42;
	(void)state;

	stream_add_frame(&s, "hello", "{\"a\":1}", 7);
	stream_add_frame(&s, "workload", "{\"b\":22}", 8);
	stream_add_frame(&s, "summary", "{\"c\":333}", 9);
	char *copy = malloc(s.len);
	assert_non_null(copy);
	for (int round = 0; round < 2000; round++) {
		struct frame_parser *p = frame_parser_new(64);
		struct frame f;
		int popped = 0;
		memcpy(copy, s.data, s.len);
		x = x * 1103515245u + 12345u;
		int flips = 1 + (int)((x >> 16) % 3);
		for (int k = 0; k < flips; k++) {
			x = x * 1103515245u + 12345u;
			copy[(x >> 8) % s.len] = (char)(x >> 24);
		}
		for (size_t off = 0; off < s.len;) {
			x = x * 1103515245u + 12345u;
			size_t n = 1 + (x >> 16) % 17;
			if (n > s.len - off)
				n = s.len - off;
			frame_parser_feed(p, copy + off, n);
			off += n;
		}
		frame_parser_finish(p);
		while (frame_parser_next(p, &f) == 1) {
			popped++;
			/* the checksum covers the payload, not the kind */
			assert_true(strcmp(f.payload, "{\"a\":1}") == 0 ||
				    strcmp(f.payload, "{\"b\":22}") == 0 ||
				    strcmp(f.payload, "{\"c\":333}") == 0);
			frame_clear(&f);
		}
		/* at most 3 flips damage at most 3 frames, but a flip can also
		 * leave a frame intact (e.g. the same byte written back) */
		assert_true(popped <= 3);
		frame_parser_free(p);
	}
	free(copy);
	free(s.data);
}

static void test_free_null(void **state)
{
	(void)state;
	frame_parser_free(NULL);
	frame_clear(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_crc32_known_values),
	    cmocka_unit_test(test_write_format),
	    cmocka_unit_test(test_write_rejects_bad_input),
	    cmocka_unit_test(test_odd_chunkings),
	    cmocka_unit_test(test_noise_between_frames),
	    cmocka_unit_test(test_bad_checksum),
	    cmocka_unit_test(test_bad_utf8_payload),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_oversized),
	    cmocka_unit_test(test_huge_length_field),
	    cmocka_unit_test(test_malformed_headers),
	    cmocka_unit_test(test_resync_after_bogus_header),
	    cmocka_unit_test(test_garbage_only),
	    cmocka_unit_test(test_queue_bound),
	    cmocka_unit_test(test_mutations),
	    cmocka_unit_test(test_free_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
