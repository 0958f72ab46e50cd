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
