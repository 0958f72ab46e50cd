/* build/agent --decode: see decode.h. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "agent/decode.h"
#include "agent/util.h"
#include "proto/frame.h"

/* --decode: the host's view of a frame stream, for tests and debugging. */
int agent_decode_frames(const char *path)
{
	struct frame_parser *p = frame_parser_new(0);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	const char *last = NULL;
	struct frame f;
	char buf[65536];
	ssize_t n;
	int errors;

	if (!p)
		return 2;
	if (fd < 0) {
		fprintf(stderr, "agent: '%s' could not be opened: %s.\n", path, strerror(errno));
		frame_parser_free(p);
		return 2;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		frame_parser_feed(p, buf, (size_t)n);
		while (frame_parser_next(p, &f) == 1) {
			printf("%s %s\n", f.kind, f.payload);
			frame_clear(&f);
		}
	}
	frame_parser_finish(p);
	errors = frame_parser_errors(p, &last);
	if (errors > 0)
		fprintf(stderr, "agent: %d frame errors in '%s'; the last: %s\n", errors, path,
			last);
	frame_parser_free(p);
	return errors > 0 || n < 0 ? 1 : 0;
}
