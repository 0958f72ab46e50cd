/* A user's own sched_ext scheduler built against a job's kernel
 * (docs/sched-ext.md, "Your own scheduler"): NAME.bpf.c and NAME.c are added
 * as one more example to a scratch copy of the kernel tree's tools/sched_ext
 * (with the parts of tools/ its Makefile builds libbpf and bpftool from), and
 * that Makefile builds them in the build sandbox (util/sandbox.h: only the
 * scratch directory writable, no network, a time limit), against the BTF of
 * the job's own bzImage (scripts/extract-vmlinux). The loader is cached by
 * content under the kernel's cache entry:
 * <kernel dir>/sched_ext/user/<key>/NAME, where the key covers
 * SCX_USER_KEY_VERSION, the kernel's cache key, the clang's version and the
 * name and both files. libbpf and bpftool, which the first build against a
 * kernel makes, are kept beside (<kernel dir>/sched_ext/user/tools-<key of
 * the kernel and clang>/) and copied into the next build's output with their
 * mtimes, so make skips them; the copy of the tree's parts is kept beside
 * them too (<tools dir>.src), so later builds need neither the tree nor its
 * lock. */
#pragma once

#include <stddef.h>

#include "job/sched_ext_source.h"
#include "kernel/kbuild.h"
#include "kernel/kernel_spec.h"
#include "util/error.h"
#include "util/hash.h"

/* Bump when the build's recipe changes: every user scheduler rebuilds. */
#define SCX_USER_KEY_VERSION "schedlab-scx-user-v1"
/* The wall-clock limit of the build (libbpf, bpftool, one BPF program and its
 * loader: about 30 s on an idle 2-core host). */
#define SCX_USER_TIMEOUT_S 900
/* Under KBUILD_SCX_DIR of the kernel's cache entry. */
#define SCX_USER_DIR "user"

struct scx_user_source {
	const char *name;   /* NAME (job/sched_ext_source.h checked it) */
	const char *bpf;    /* NAME.bpf.c */
	const char *loader; /* NAME.c */
};

/* The build's key (hex) from its inputs: pure, for tests and the cache. */
void scx_user_key(const char *kernel_key, const char *clang_version,
		  const struct scx_user_source *src, char out[HASH_HEX_LEN]);

/* Returns in *ret_loader (malloc'd) the host path of src's loader built
 * against kernel a (built from spec s, whose tree supplies tools/), building
 * it when it is not cached; o gives the cache, the log, cancel and
 * no_sandbox. A program that does not build is ERR_BUILD, code
 * "build_failed", whose message ends with make's last lines (paths relative
 * to tools/sched_ext, no host path). *ret_file (may be NULL) says which of
 * the user's files the compiler's first error is in
 * (sched_ext_source_error_file()) when make failed on one of them, and is
 * SCHED_EXT_FILE_NONE otherwise: success, an error elsewhere in the build,
 * and every failure that is not make's (clang missing, the tree busy, the
 * time limit, ...). */
int scx_user_build(const struct kbuild_opts *o, const struct kernel_spec *s,
		   const struct kbuild_artifact *a, const struct scx_user_source *src,
		   char **ret_loader, enum sched_ext_source_file *ret_file, struct sl_error *err);
