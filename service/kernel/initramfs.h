/* Guest initramfs images (cpio "newc", gzip), written with libarchive.
 *
 * The base image holds the agent at /init, the rt-tests binaries and exactly
 * the shared libraries they need (elfdeps.h), schedlab's workloads under
 * INITRAMFS_WORKLOAD_DIR, the directories the agent mounts on, and
 * /dev/console (so early printk works before devtmpfs). It is cached by
 * content. A run appends a second small archive holding /schedlab/plan.json;
 * the kernel unpacks concatenated archives in order. */
#pragma once

#include "util/error.h"

/* Bumped whenever the image layout changes, so old cache entries are unused. */
#define INITRAMFS_FORMAT_VERSION "schedlab-initramfs/2"
/* Where build/workloads/<name> lands in the guest: plans name them here. */
#define INITRAMFS_WORKLOAD_DIR "/usr/bin"
/* Where the plan lands in the guest (docs/contracts.md section 1). */
#define INITRAMFS_PLAN_PATH "/schedlab/plan.json"
#define INITRAMFS_MAX_PLAN  (1u << 20)

/* A file at a path of its own in the image (e.g. a sched_ext loader). */
struct initramfs_file {
	const char *host;  /* host path */
	const char *image; /* path in the image, without the leading '/' */
};

struct initramfs_inputs {
	const char *agent;	   /* host path of the static agent -> /init */
	const char *const *tools;  /* NULL-terminated host paths -> /usr/bin/<basename>;
				      NULL: initramfs_default_tools() */
	const char *workloads_dir; /* every regular file in it -> INITRAMFS_WORKLOAD_DIR/;
				      NULL or missing: none */
	/* More programs, each with the shared libraries it needs (elfdeps.h). */
	const struct initramfs_file *files;
	size_t n_files;
};

/* The rt-tests programs of Debian's rt-tests that schedlab runs
 * (rt-migrate-test, cyclictest, hackbench, pi_stress, pip_stress,
 * cyclicdeadline) under /usr/bin; NULL-terminated. */
const char *const *initramfs_default_tools(void);

/* Returns in *ret_path (malloc'd) the base image for in, building it into
 * <cache_dir>/initramfs/<sha256>.cpio.gz unless it is already there. The key
 * covers the format version and every input file's in-image path and content.
 * Returns 0 on a cache hit, 1 when it built the image, negative errno on error.
 * Safe against concurrent builders (temp file + rename). */
int initramfs_base(const char *cache_dir, const struct initramfs_inputs *in, char **ret_path,
		   struct sl_error *err);

/* Writes a gzip cpio archive holding only INITRAMFS_PLAN_PATH (plan, borrowed,
 * serialized plainly; at most INITRAMFS_MAX_PLAN bytes) to fd at its current
 * position. */
int initramfs_write_plan(int fd, json_object *plan, struct sl_error *err);

/* Writes out_path = base image + plan archive (one initrd for the guest). */
int initramfs_with_plan(const char *base_path, json_object *plan, const char *out_path,
			struct sl_error *err);
