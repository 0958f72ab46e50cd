/* File helpers with size caps. All fds are O_CLOEXEC. */
#pragma once

#include <stddef.h>
#include "util/error.h"

/* Reads at most max bytes of path into a malloc'd NUL-terminated buffer.
 * A file longer than max is an ERR_TOO_LARGE error. ret_len may be NULL. */
int fs_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len,
		 struct sl_error *err);
/* Writes data to path atomically (temp file in the same directory, fsync,
 * rename, fsync of the directory: the new file survives a power loss once
 * this returns). */
int fs_write_file_atomic(const char *path, const void *data, size_t len, struct sl_error *err);
/* mkdir -p with mode 0755. */
int fs_mkdir_p(const char *path, struct sl_error *err);
/* mkdir -p whose last directory, when it is created, has mode 0700 (the
 * parents 0755); an existing one is left as it is. */
int fs_mkdir_private(const char *path, struct sl_error *err);
/* fsync() of a directory: what was created, renamed or removed in it is on
 * disk. */
int fs_fsync_dir(const char *dir, struct sl_error *err);
/* rm -rf; a missing path is not an error. Refuses "/" and "". */
int fs_rm_rf(const char *path, struct sl_error *err);
/* malloc'd "a/b" joined with exactly one '/'. Never NULL (aborts on OOM). */
char *fs_path_join(const char *a, const char *b);
/* 1 if path exists, 0 if not. */
int fs_exists(const char *path);
/* The cache root: $SCHEDLAB_CACHE, else $XDG_CACHE_HOME/schedlab, else
 * $HOME/.cache/schedlab. malloc'd. */
char *fs_default_cache_dir(void);
/* The repository's data root (guest-kernel/, results-schema/, build/):
 * $SCHEDLAB_DATA_DIR, else the directory above the executable's build/ dir
 * when that holds guest-kernel/, else /usr/share/schedlab. malloc'd. */
char *fs_data_dir(void);

/* ---- fs_untrusted.c: files an untrusted process could have written ---- */

#include <stdbool.h>
#include <sys/types.h>

/* What may be read from below a directory an untrusted build could write. */
struct fs_untrusted {
	const char *what; /* named in errors: "kernel image", ".config" */
	size_t max;	  /* the size cap in bytes: a larger file is refused */
	/* The uid that wrote the tree (the sandbox's), whose read access the
	 * file must have (as its owner, else as "other"): a hard link to a
	 * file it could not read is refused. -1: no such check (the build ran
	 * as the host's own user). */
	long reader_uid;
};

/* Opens root/rel for reading. root is trusted; no component of rel may be a
 * symbolic link (openat2 RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH, else one
 * openat(O_NOFOLLOW) per component), nor "." or "..". The open never blocks
 * (O_NONBLOCK), the file must be regular (fstat), readable by
 * u->reader_uid and at most u->max bytes. Errors name the file and the
 * reason: ERR_NOT_FOUND when it is missing, ERR_BUILD when it is refused.
 * *ret_fd is the caller's (O_CLOEXEC, blocking again); ret_size may be NULL. */
int fs_open_untrusted(const char *root, const char *rel, const struct fs_untrusted *u, int *ret_fd,
		      size_t *ret_size, struct sl_error *err);
/* fs_open_untrusted() and the file into a malloc'd NUL-terminated buffer
 * (at most u->max bytes, also when it grows while read). ret_len may be
 * NULL. */
int fs_read_untrusted(const char *root, const char *rel, const struct fs_untrusted *u,
		      char **ret_data, size_t *ret_len, struct sl_error *err);
/* fs_open_untrusted() and a copy of what that fd reads to the host path to
 * (created or truncated, never through a symlink, with mode; removed again
 * on an error). */
int fs_copy_untrusted(const char *root, const char *rel, const struct fs_untrusted *u,
		      const char *to, mode_t mode, struct sl_error *err);
/* Tests only: resolve by components even where openat2 works. */
void fs_untrusted_force_fallback(bool on);
