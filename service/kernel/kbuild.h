/* Kernel builds: a spec {source, patches, config fragment} becomes a bzImage
 * in a content-addressed cache, <cache>/kernels/<key>/ (bzImage, config,
 * build.log, meta.json; see docs/kernel-builds.md). The key covers the source
 * identity, the ordered patch contents, the fragment contents and the
 * compiler version, so a hit is always the same kernel. Concurrent builds of
 * one key build once (flock); the cache is bounded with LRU eviction. */
#pragma once

#include <stdbool.h>
#include <json-c/json.h>

#include "kernel/kernel_spec.h"
#include "util/error.h"

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
 * the same key. On success *ret is owned by the caller. Every step is a
 * cmd_run() command, so a dry run (util/cmd.h) records the build's command
 * lines. */
int kbuild_build(const struct kbuild_opts *o, const struct kernel_spec *s,
		 struct kbuild_artifact **ret, struct sl_error *err);
/* Frees a; NULL is fine. */
void kbuild_artifact_free(struct kbuild_artifact *a);
