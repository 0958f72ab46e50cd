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

/* Bytes of a failed build's log excerpt, at most. */
#define KBUILD_EXCERPT_MAX 4096

/* What a build that failed with ERR_BUILD says about itself, for a result
 * (docs/kernel-builds.md, "When a kernel does not build"). The error's code
 * (struct sl_error.code) is the status: "patch_does_not_apply",
 * "config_option_dropped" or "build_failed". Clear it with
 * kbuild_failure_clear(). */
struct kbuild_failure {
	char key[65];	  /* the cache key of the build; "" when it was not computed */
	char patch[256];  /* patch_does_not_apply: the file name of the patch that failed */
	char option[128]; /* config_option_dropped: the first option Kconfig dropped */
	/* The last lines of the failing step's output (patch, make, the config
	 * check) and of schedlab's own lines about it: malloc'd, at most
	 * KBUILD_EXCERPT_MAX bytes, valid UTF-8 with no control characters but
	 * '\n' and '\t' (untrusted bytes from make and patch are replaced by
	 * U+FFFD); NULL when there was no output at all. */
	char *log_excerpt;
};

/* Frees f's excerpt and zeroes f; NULL is fine. */
void kbuild_failure_clear(struct kbuild_failure *f);

/* The default bound of the cache, in percent of its filesystem's size. */
#define KBUILD_CACHE_DEFAULT_PERCENT 50
/* kbuild_opts.cache_max_bytes: no bound at all. */
#define KBUILD_CACHE_UNLIMITED (~0ULL)

struct kbuild_opts {
	const char *cache_dir; /* NULL: fs_default_cache_dir() */
	int jobs;	       /* make -j; <= 0: number of online CPUs */
	/* The bound of kernels/ plus trees/ (LRU eviction after each build):
	 * 0 is the default, KBUILD_CACHE_DEFAULT_PERCENT of the cache's
	 * filesystem; KBUILD_CACHE_UNLIMITED: no bound. */
	unsigned long long cache_max_bytes;
	int log_fd; /* >= 0: build output is also appended here */
	/* Called with a percent estimate and the output line, from the calling thread. */
	void (*progress)(void *ud, double percent, const char *line);
	int (*cancelled)(void *ud); /* polled during long steps; nonzero stops with ERR_CANCELLED */
	void *userdata;
	/* NULL, or filled when kbuild_build() fails with ERR_BUILD (untouched
	 * otherwise); the caller clears it with kbuild_failure_clear(). */
	struct kbuild_failure *failure;
	/* Patch application and every make run in a bubblewrap sandbox
	 * (util/sandbox.h, docs/kernel-builds.md "The sandbox") unless this is
	 * set: for trusted trees only. */
	bool no_sandbox;
	/* The wall-clock limit of each step in seconds (make included; a step
	 * past it is ERR_BUILD "build_failed"); <= 0: 600 s a step, 3600 s for
	 * make bzImage. */
	int timeout_s;
	/* Builds of one source tree that may run at once, each in its own work
	 * area (a copy of the tree, docs/kernel-builds.md "Builds at once");
	 * <= 1: one, the others wait for the tree's lock. At most 8. */
	int tree_slots;
};

/* The artifact's directory of sched_ext loaders (kernels whose config enables
 * SCHED_CLASS_EXT): <dir>/sched_ext/<scheduler>, built with the kernel. */
#define KBUILD_SCX_DIR "sched_ext"
/* In KBUILD_SCX_DIR when the schedulers did not build: why, one sentence.
 * The kernel is still a good artifact; only sched_ext variants fail. */
#define KBUILD_SCX_FAILED "build-failed.txt"

/* Whether the kernel's config file (an artifact's "config") sets
 * CONFIG_SCHED_CLASS_EXT=y. */
bool kbuild_config_has_scx(const char *config_path);

struct kbuild_artifact {
	char key[65];
	char *dir, *bzimage, *config, *log, *meta_path;
	json_object *meta; /* owned: {key, source, source_version, patches, config_sha256, compiler,
			      build_seconds} */
	bool cached;	   /* true when it came from the cache without building */
	/* The shared lock on <dir>/last-used that keeps eviction away while
	 * the artifact is loaded (kbuild_cache.c); closed by _free(). */
	bool pinned;
	int pin_fd;
};

/* Computes the cache key of s without building anything (hashes the patches
 * and fragment, and the source: a tarball's sha256 is remembered by path, size
 * and mtime under <cache>/sources, so cache_dir is needed; NULL: default). */
int kbuild_key_in(const char *cache_dir, const struct kernel_spec *s, char ret_key[65],
		  struct sl_error *err);
/* Whether a kernel source is well-formed and present on this host (a
 * Debian linux-source package installed, a tarball that exists) without
 * reading it; err names the field "$.source" (its message may name a host
 * path: the service words its own). */
int kbuild_source_check(const char *source, struct sl_error *err);
/* kbuild_key_in() with the default cache directory. */
int kbuild_key(const struct kernel_spec *s, char ret_key[65], struct sl_error *err);

/* Returns the artifact for s, building it when it is not cached: extract (or
 * reuse) the source tree, apply the patches (a patch that does not apply is an
 * ERR_BUILD error, code "patch_does_not_apply", naming it, its file and
 * hunk), configure (tinyconfig + fragment + olddefconfig; an option Kconfig
 * dropped is ERR_BUILD, code "config_option_dropped", naming it), make
 * bzImage with ccache (any other ERR_BUILD: code "build_failed"), and with
 * o->failure set, says what failed there. Blocks while another process builds
 * the same key. On success *ret is owned by the caller. Every step is a
 * cmd_run() command, so a dry run (util/cmd.h) records the build's command
 * lines. */
int kbuild_build(const struct kbuild_opts *o, const struct kernel_spec *s,
		 struct kbuild_artifact **ret, struct sl_error *err);
/* Frees a; NULL is fine. */
void kbuild_artifact_free(struct kbuild_artifact *a);
