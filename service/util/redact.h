/* Host paths out of user-visible text. A failed job's error message is
 * shown to whoever can read the API; the host's directories (the state
 * directory, the kernel cache, /usr/src, a temp dir) are none of their
 * business, but the file a message is about is. */
#pragma once

#include <stddef.h>

/* Copies in to out (of size out_size, always NUL-terminated), each absolute
 * path (a '/' at the start or after a space, quote, '(', '=', ':' or ',',
 * followed by at least one more '/') replaced by "<host>/" and its last
 * component: "cannot read '/srv/x/jobs/ab/0001-fix.patch'" becomes "cannot
 * read '<host>/0001-fix.patch'". */
void redact_host_paths(const char *in, char *out, size_t out_size);
