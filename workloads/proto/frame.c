/* Frame writer (guest) and streaming parser (host); see frame.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/frame.h"
#include "proto/utf8.h"

#define MAGIC	    "SLFRAME "
#define MAGIC_LEN   (sizeof(MAGIC) - 1)
#define TRAILER	    "\nSLEND"
#define TRAILER_LEN (sizeof(TRAILER) - 1)
/* "SLFRAME v1 " + kind + a length of at most 10 digits + 8 hex digits + spaces,
 * '\r' and '\n' fit easily; a longer line is not a header. */
#define HEADER_MAX 128

#define _frame_printf_(a, b) __attribute__((format(printf, a, b)))

enum parse_state {
	STATE_SEARCH, /* skipping noise, looking for MAGIC */
	STATE_HEADER, /* buf starts with MAGIC, waiting for the end of the line */
	STATE_BODY,   /* header parsed, waiting for payload and trailer */
};

struct frame_parser {
	size_t max_payload;
	char *buf;
	size_t len;   /* bytes in buf */
	size_t alloc; /* allocated size of buf */
	size_t cap;   /* the most buf may ever hold */
	enum parse_state state;
	/* the header being worked on, valid in STATE_BODY */
	char kind[FRAME_KIND_MAX + 1];
	size_t header_len;
	size_t payload_len;
	uint32_t crc;
	/* complete frames: a ring */
	struct frame queue[FRAME_MAX_QUEUED];
	size_t q_head, q_count;
	int errors;
	char last_error[256];
};

static uint32_t crc_table[256];
static bool crc_table_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
	crc_table_ready = true;
}

uint32_t frame_crc32(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	uint32_t c = 0xFFFFFFFFu;

	/* Idempotent: two threads racing here compute the same table. */
	if (!crc_table_ready)
		crc_init();
	for (size_t i = 0; i < len; i++)
		c = crc_table[(c ^ b[i]) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

static bool kind_valid(const char *kind, size_t n)
{
	if (n == 0 || n > FRAME_KIND_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = kind[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int frame_write(int fd, const char *kind, const char *payload, size_t len)
{
	char header[HEADER_MAX];
	int n, r;

	if (!kind || !kind_valid(kind, strlen(kind)))
		return -EINVAL;
	if (len > FRAME_MAX_PAYLOAD)
		return -E2BIG;
	if (len > 0 && !payload)
		return -EINVAL;
	n = snprintf(header, sizeof(header), "\nSLFRAME v1 %s %zu %08x\n", kind, len,
		     (unsigned)frame_crc32(payload, len));
	if (n < 0 || (size_t)n >= sizeof(header))
		return -EINVAL;
	r = write_all(fd, header, (size_t)n);
	if (r < 0)
		return r;
	r = write_all(fd, payload, len);
	if (r < 0)
		return r;
	return write_all(fd, "\nSLEND\n", 7);
}

struct frame_parser *frame_parser_new(size_t max_payload)
{
	struct frame_parser *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (max_payload == 0 || max_payload > FRAME_MAX_PAYLOAD)
		max_payload = FRAME_MAX_PAYLOAD;
	p->max_payload = max_payload;
	/* header + payload + optional '\r' + trailer: the most a frame needs */
	p->cap = max_payload + HEADER_MAX + 1 + TRAILER_LEN;
	p->state = STATE_SEARCH;
	return p;
}

void frame_clear(struct frame *f)
{
	if (!f)
		return;
	free(f->payload);
	memset(f, 0, sizeof(*f));
}

void frame_parser_free(struct frame_parser *p)
{
	if (!p)
		return;
	while (p->q_count > 0) {
		frame_clear(&p->queue[p->q_head]);
		p->q_head = (p->q_head + 1) % FRAME_MAX_QUEUED;
		p->q_count--;
	}
	free(p->buf);
	free(p);
}

static void parser_error(struct frame_parser *p, const char *fmt, ...) _frame_printf_(2, 3);
static void parser_error(struct frame_parser *p, const char *fmt, ...)
{
	va_list ap;

	p->errors++;
	va_start(ap, fmt);
	vsnprintf(p->last_error, sizeof(p->last_error), fmt, ap);
	va_end(ap);
}

/* Drops the first n bytes of the buffer. */
static void parser_consume(struct frame_parser *p, size_t n)
{
	if (n >= p->len) {
		p->len = 0;
		return;
	}
	memmove(p->buf, p->buf + n, p->len - n);
	p->len -= n;
}

static const char *find_magic(const char *buf, size_t len)
{
	return memmem(buf, len, MAGIC, MAGIC_LEN);
}

/* Parses "SLFRAME v1 <kind> <len> <crc8>" (line without '\n', maybe with a
 * trailing '\r') into the parser's current header. 0 or -EINVAL/-E2BIG with
 * the error recorded. */
static int parse_header(struct frame_parser *p, const char *line, size_t n)
{
	char copy[HEADER_MAX + 1], *save = NULL, *tok[6];
	int ntok = 0;
	unsigned long long plen = 0;
	uint32_t crc = 0;

	if (n > 0 && line[n - 1] == '\r')
		n--;
	memcpy(copy, line, n);
	copy[n] = '\0';
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (ntok == 5) {
			ntok++;
			break;
		}
		tok[ntok++] = t;
	}
	if (ntok != 5) {
		parser_error(p, "A frame header has %d fields instead of 5.", ntok);
		return -EINVAL;
	}
	if (strcmp(tok[1], "v1") != 0) {
		parser_error(p, "A frame header has the unsupported version '%.16s'.", tok[1]);
		return -EINVAL;
	}
	if (!kind_valid(tok[2], strlen(tok[2]))) {
		parser_error(p, "A frame header has the invalid kind '%.16s'.", tok[2]);
		return -EINVAL;
	}
	/* At most 10 digits: never parse (let alone allocate) a huge number. */
	size_t digits = strlen(tok[3]);
	if (digits == 0 || strspn(tok[3], "0123456789") != digits) {
		parser_error(p, "Frame '%s' has the invalid payload length '%.16s'.", tok[2],
			     tok[3]);
		return -EINVAL;
	}
	if (digits > 10) {
		parser_error(
		    p,
		    "Frame '%s' has a payload length of %zu digits, over the limit of %zu bytes.",
		    tok[2], digits, p->max_payload);
		return -E2BIG;
	}
	for (size_t i = 0; i < digits; i++)
		plen = plen * 10 + (unsigned)(tok[3][i] - '0');
	if (plen > p->max_payload) {
		parser_error(
		    p, "Frame '%s' has a payload length of %llu bytes, over the limit of %zu.",
		    tok[2], plen, p->max_payload);
		return -E2BIG;
	}
	if (strlen(tok[4]) != 8 || strspn(tok[4], "0123456789abcdefABCDEF") != 8) {
		parser_error(p, "Frame '%s' has the invalid checksum field '%.16s'.", tok[2],
			     tok[4]);
		return -EINVAL;
	}
	crc = (uint32_t)strtoul(tok[4], NULL, 16);

	snprintf(p->kind, sizeof(p->kind), "%s", tok[2]);
	p->payload_len = (size_t)plen;
	p->crc = crc;
	return 0;
}

static void parser_enqueue(struct frame_parser *p, const char *payload)
{
	struct frame *f;
	char *copy;

	if (p->q_count >= FRAME_MAX_QUEUED) {
		parser_error(p, "Frame '%s' was dropped: %d frames are already waiting.", p->kind,
			     FRAME_MAX_QUEUED);
		return;
	}
	copy = malloc(p->payload_len + 1);
	if (!copy) {
		parser_error(p, "Frame '%s' was dropped: out of memory for %zu bytes.", p->kind,
			     p->payload_len);
		return;
	}
	memcpy(copy, payload, p->payload_len);
	copy[p->payload_len] = '\0';
	f = &p->queue[(p->q_head + p->q_count) % FRAME_MAX_QUEUED];
	snprintf(f->kind, sizeof(f->kind), "%s", p->kind);
	f->payload = copy;
	f->len = p->payload_len;
	p->q_count++;
}

/* Runs the state machine over the buffered bytes as far as it can go. */
static void parser_process(struct frame_parser *p)
{
	for (;;) {
		switch (p->state) {
		case STATE_SEARCH: {
			const char *m = find_magic(p->buf, p->len);
			if (!m) {
				/* keep a possible partial magic at the end */
				if (p->len > MAGIC_LEN - 1)
					parser_consume(p, p->len - (MAGIC_LEN - 1));
				return;
			}
			parser_consume(p, (size_t)(m - p->buf));
			p->state = STATE_HEADER;
			break;
		}
		case STATE_HEADER: {
			size_t scan = p->len < HEADER_MAX ? p->len : HEADER_MAX;
			const char *nl = memchr(p->buf, '\n', scan);
			if (!nl) {
				if (p->len < HEADER_MAX)
					return;
				parser_error(p,
					     "A frame header has no end of line within %d bytes.",
					     HEADER_MAX);
				parser_consume(p, 1);
				p->state = STATE_SEARCH;
				break;
			}
			if (parse_header(p, p->buf, (size_t)(nl - p->buf)) < 0) {
				parser_consume(p, 1);
				p->state = STATE_SEARCH;
				break;
			}
			p->header_len = (size_t)(nl - p->buf) + 1;
			p->state = STATE_BODY;
			break;
		}
		case STATE_BODY: {
			size_t q = p->header_len + p->payload_len;
			if (p->len < q + 1)
				return;
			/* a tty may have turned the trailer's "\n" into "\r\n" */
			if (p->buf[q] == '\r')
				q++;
			if (p->len < q + TRAILER_LEN)
				return;
			if (memcmp(p->buf + q, TRAILER, TRAILER_LEN) != 0) {
				parser_error(
				    p,
				    "Frame '%s' of %zu bytes does not end with the SLEND trailer.",
				    p->kind, p->payload_len);
				/* the header may have been noise: resynchronize right after it */
				parser_consume(p, 1);
				p->state = STATE_SEARCH;
				break;
			}
			const char *payload = p->buf + p->header_len;
			uint32_t crc = frame_crc32(payload, p->payload_len);
			size_t bad = 0;
			if (crc != p->crc)
				parser_error(
				    p,
				    "Frame '%s' of %zu bytes has a bad checksum: the header says "
				    "'%08x', the payload has '%08x'.",
				    p->kind, p->payload_len, (unsigned)p->crc, (unsigned)crc);
			else if (!utf8_valid(payload, p->payload_len, &bad))
				/* Payloads are JSON text: guest bytes stop here if not UTF-8. */
				parser_error(p,
					     "Frame '%s' of %zu bytes is not valid UTF-8 at offset "
					     "%zu.",
					     p->kind, p->payload_len, bad);
			else
				parser_enqueue(p, payload);
			parser_consume(p, q + TRAILER_LEN);
			p->state = STATE_SEARCH;
			break;
		}
		}
	}
}

/* Makes room for at least want bytes in total, growing geometrically up to cap. */
static int parser_reserve(struct frame_parser *p, size_t want)
{
	size_t n;
	char *b;

	if (want <= p->alloc)
		return 0;
	n = p->alloc ? p->alloc : 4096;
	while (n < want)
		n *= 2;
	if (n > p->cap)
		n = p->cap;
	b = realloc(p->buf, n);
	if (!b)
		return -ENOMEM;
	p->buf = b;
	p->alloc = n;
	return 0;
}

int frame_parser_feed(struct frame_parser *p, const void *buf, size_t len)
{
	const char *in = buf;

	while (len > 0) {
		/* The state machine always leaves fewer than cap bytes behind,
		 * so there is room for at least one more byte here. */
		size_t room = p->cap - p->len;
		size_t chunk = len < room ? len : room;
		if (parser_reserve(p, p->len + chunk) < 0) {
			parser_error(
			    p, "The frame parser ran out of memory; %zu bytes were dropped.", len);
			p->len = 0;
			p->state = STATE_SEARCH;
			break;
		}
		memcpy(p->buf + p->len, in, chunk);
		p->len += chunk;
		in += chunk;
		len -= chunk;
		parser_process(p);
	}
	return (int)p->q_count;
}

int frame_parser_next(struct frame_parser *p, struct frame *ret)
{
	if (p->q_count == 0)
		return 0;
	*ret = p->queue[p->q_head];
	memset(&p->queue[p->q_head], 0, sizeof(struct frame));
	p->q_head = (p->q_head + 1) % FRAME_MAX_QUEUED;
	p->q_count--;
	return 1;
}

int frame_parser_errors(const struct frame_parser *p, const char **ret_last_message)
{
	if (ret_last_message)
		*ret_last_message = p->errors > 0 ? p->last_error : NULL;
	return p->errors;
}

void frame_parser_finish(struct frame_parser *p)
{
	if (p->state == STATE_HEADER)
		parser_error(p, "The stream ended inside a frame header.");
	else if (p->state == STATE_BODY) {
		size_t have = p->len > p->header_len ? p->len - p->header_len : 0;
		if (have > p->payload_len)
			have = p->payload_len;
		parser_error(p, "Frame '%s' is truncated: %zu of %zu payload bytes arrived.",
			     p->kind, have, p->payload_len);
	}
	p->len = 0;
	p->state = STATE_SEARCH;
}
