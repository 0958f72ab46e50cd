/* Kernel builds: a spec {source, patches, config fragment} becomes a bzImage
 * in a content-addressed cache, <cache>/kernels/<key>/ (bzImage, config,
 * build.log, meta.json; see docs/kernel-builds.md). The key covers the source
 * identity, the ordered patch contents, the fragment contents and the
 * compiler version, so a hit is always the same kernel. Concurrent builds of
 * one key build once (flock); the cache is bounded with LRU eviction. */
#pragma once

#include <stdbool.h>
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
};

/* Parses {"source": S, "patches": [paths], "series": "path", "config": "path"}
 * ("patches" and/or "series"; a series lists one patch path per line relative
 * to itself, '#' starts a comment). Relative paths are resolved against
 * base_dir (NULL: the current directory) and must exist. Does not take the
 * reference to spec. On success *ret is owned by the caller
 * (kernel_spec_free). Errors are ERR_INVALID/ERR_NOT_FOUND with err->path
 * naming the field. */
int kernel_spec_from_json(json_object *spec, const char *base_dir, struct kernel_spec **ret,
			  struct sl_error *err);
void kernel_spec_free(struct kernel_spec *s);

struct kbuild_opts {
	const char *cache_dir;		    /* NULL: fs_default_cache_dir() */
	int jobs;			    /* make -j; <= 0: number of online CPUs */
	unsigned long long cache_max_bytes; /* 0: no bound */
	int log_fd;			    /* >= 0: build output is also appended here */
	/* Called with a percent estimate and the output line, from the calling thread. */
	void (*progress)(void *ud, double percent, const char *line);
	int (*cancelled)(void *ud); /* polled during long steps; nonzero stops with ERR_CANCELLED */
	void *userdata;
};

struct kbuild_artifact {
	char key[65];
	char *dir, *bzimage, *config, *log, *meta_path;
	json_object *meta; /* owned: {key, source, source_version, patches, config_sha256, compiler,
			      build_seconds} */
	bool cached;	   /* true when it came from the cache without building */
};

/* Computes the cache key of s without building anything (hashes the patches
 * and fragment, and the source: a tarball's sha256 is remembered by path, size
 * and mtime under <cache>/sources, so cache_dir is needed; NULL: default). */
int kbuild_key_in(const char *cache_dir, const struct kernel_spec *s, char ret_key[65],
		  struct sl_error *err);
/* kbuild_key_in() with the default cache directory. */
int kbuild_key(const struct kernel_spec *s, char ret_key[65], struct sl_error *err);

/* Returns the artifact for s, building it when it is not cached: extract (or
 * reuse) the source tree, apply the patches (a patch that does not apply is an
 * ERR_BUILD error naming it, its file and hunk), configure (tinyconfig +
 * fragment + olddefconfig; an option Kconfig dropped is an ERR_BUILD error
 * naming it), make bzImage with ccache. Blocks while another process builds
 * the same key. On success *ret is owned by the caller. */
int kbuild_build(const struct kbuild_opts *o, const struct kernel_spec *s,
		 struct kbuild_artifact **ret, struct sl_error *err);
void kbuild_artifact_free(struct kbuild_artifact *a);

/* For unit tests only. compiler_version, when set, replaces `gcc --version`;
 * build, when set, replaces extract/patch/configure/make: it must write
 * out_dir/bzImage and out_dir/config. NULL restores the real steps. */
struct kbuild_test_hooks {
	const char *compiler_version;
	int (*build)(void *ud, const struct kernel_spec *s, const char *out_dir,
		     struct sl_error *err);
	void *userdata;
};
void kbuild_set_test_hooks(const struct kbuild_test_hooks *h);
