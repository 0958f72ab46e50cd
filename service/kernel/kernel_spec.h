/* What a kernel is built from: a source, an ordered list of patches and a
 * config fragment. The one parser of series files and the one builder of
 * kernel specs, used by `schedlab kernel` (a spec file) and by the runner (a
 * job's kernels), so both read a series file the same way. Every path a spec
 * holds is absolute and names an existing regular file. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "util/error.h"

/* Bounds on what a spec may name: patches and fragments may come from users. */
#define KBUILD_MAX_PATCHES	256
#define KBUILD_MAX_PATCH_BYTES	(16u * 1024 * 1024)
#define KBUILD_MAX_CONFIG_BYTES (1024u * 1024)
#define KBUILD_MAX_SERIES_BYTES (64u * 1024)

struct kernel_spec {
	/* "debian:linux-source-6.1" (/usr/src/linux-source-6.1.tar.xz),
	 * "tarball:/abs/linux.tar.xz" or "git:/abs/tree@ref" */
	char *source;
	char **patches; /* NULL-terminated absolute paths, applied in order */
	char *config;	/* absolute path of the config fragment */
	/* A debug preset (docs/kernel-bugs.md "The debug variant"): NULL, or its
	 * name ("lockdep") and the absolute path of its fragment, merged after
	 * config (its options win). Part of the cache key; such a kernel is built
	 * in an object directory of its own beside the normal one. */
	char *debug;
	char *debug_config;
	/* Some input (a patch, the fragment) came from a user, not from
	 * schedlab's own series and configs. With the sandbox on, such a build
	 * runs make in a throwaway copy of the tree's object directory and never
	 * writes the one later builds reuse (docs/kernel-builds.md "Untrusted
	 * builds"). Not part of the key: the kernel is the same. */
	bool untrusted;
	/* An untrusted spec's trusted base, or NULL: the same source, built-in
	 * series and config only (untrusted false, no base of its own), the
	 * kernel other jobs share. Before the copy, the build brings the tree's
	 * object directory to it when it does not hold that build complete
	 * (docs/kernel-builds.md "Untrusted builds"). Set by materialize_kernel()
	 * and by kernel_spec_from_json() ("untrusted": true: "series", "config"
	 * and "debug" make the base, "patches" are the untrusted part). */
	struct kernel_spec *base;
};

/* The longest debug preset name: lowercase letters, digits and '-'. */
#define KBUILD_DEBUG_NAME_MAX 32

/* Reads a quilt-style series file: one patch path per line, relative to the
 * series file's directory; '#' starts a comment; blank lines, surrounding
 * blanks and CRs are ignored; the only option accepted after a name is
 * "-p1". Every patch must exist; at most KBUILD_MAX_PATCHES. On success
 * *ret_patches is a NULL-terminated vector of absolute paths owned by the
 * caller (strv_free). Errors are ERR_INVALID/ERR_NOT_FOUND/ERR_TOO_LARGE with
 * err->path "series" and a message naming the file and line. */
int kernel_series_read(const char *series, char ***ret_patches, struct sl_error *err);

/* Starts a spec with no patches and no config. A relative "tarball:" path is
 * resolved against base_dir (NULL: the current directory) and must exist.
 * On success *ret is owned by the caller (kernel_spec_free). */
int kernel_spec_new(const char *source, const char *base_dir, struct kernel_spec **ret,
		    struct sl_error *err);

/* Appends one patch; a relative path is resolved against base_dir (NULL: the
 * current directory). field names the input in errors ("$.patches[0]"). */
int kernel_spec_add_patch(struct kernel_spec *s, const char *base_dir, const char *path,
			  const char *field, struct sl_error *err);

/* Appends the patches a series file lists (kernel_series_read); a relative
 * series path is resolved against base_dir. */
int kernel_spec_add_series(struct kernel_spec *s, const char *base_dir, const char *series,
			   const char *field, struct sl_error *err);

/* Sets the config fragment; a relative path is resolved against base_dir. */
int kernel_spec_set_config(struct kernel_spec *s, const char *base_dir, const char *path,
			   const char *field, struct sl_error *err);

/* Sets the debug preset: name ("lockdep": 1..KBUILD_DEBUG_NAME_MAX of
 * [a-z0-9-]) and its fragment; a relative path is resolved against base_dir,
 * and path NULL means "debug-NAME.config" beside the spec's config fragment
 * (which must be set). field names the input in errors. */
int kernel_spec_set_debug(struct kernel_spec *s, const char *name, const char *base_dir,
			  const char *path, const char *field, struct sl_error *err);

/* Parses {"source": S, "patches": [paths], "series": "path", "config": "path",
 * "debug": "lockdep", "debug_config": "path", "untrusted": true} ("patches" and/or
 * "series", see
 * kernel_series_read; "debug_config" defaults to debug-NAME.config beside
 * "config", kernel_spec_set_debug). Relative paths are
 * resolved against base_dir (NULL: the current directory) and must exist.
 * Does not take the reference to spec. On success *ret is owned by the caller
 * (kernel_spec_free). Errors are ERR_INVALID/ERR_NOT_FOUND with err->path
 * naming the field. */
int kernel_spec_from_json(json_object *spec, const char *base_dir, struct kernel_spec **ret,
			  struct sl_error *err);

/* Frees s; NULL is fine. */
void kernel_spec_free(struct kernel_spec *s);
