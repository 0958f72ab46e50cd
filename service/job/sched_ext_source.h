/* A user's own sched_ext scheduler in a variant (docs/sched-ext.md, "Your
 * own scheduler"): "sched_ext": {"source": {"name": NAME, "bpf": <NAME.bpf.c>,
 * "loader": <NAME.c>}, "args": [...]}. This file checks that object (the
 * name an identifier, both files text within SCHED_EXT_SOURCE_MAX bytes, the
 * args bounded printable ASCII), inlines the CLI's bpf_path/loader_path, and
 * names the content: the tag that keeps two versions of one NAME apart in the
 * guest. The build is kernel/scx_user_build.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "util/error.h"

/* Bytes of NAME.bpf.c and of NAME.c, each at most (the schema's maxLength). */
#define SCHED_EXT_SOURCE_MAX (256 * 1024)
/* Characters of NAME: [a-z][a-z0-9_]{0,31}. */
#define SCHED_EXT_NAME_MAX 32
/* Hex digits of a source's tag (sched_ext_source_tag()). */
#define SCHED_EXT_TAG_LEN 16

/* For a CLI job (local_files), replaces "bpf_path" and "loader_path" of
 * scx's "source" (borrowed, changed in place) by "bpf" and "loader", read
 * from those paths relative to base_dir; the service (!local_files) refuses
 * paths. An error names "<path>.source.bpf_path" (or loader_path). Nothing
 * without a source. */
int sched_ext_source_inline(json_object *scx, bool local_files, const char *base_dir,
			    const char *path, struct sl_error *err);

/* Checks a "source" object after inlining: a valid name (sched_ext_check()
 * refuses the examples' names), both "bpf" and "loader" present, NUL-free, within
 * SCHED_EXT_SOURCE_MAX; args (may be NULL) at most 16 strings of printable
 * ASCII. Errors name "<path>.source.name", "<path>.source.bpf", ... or
 * "<path>.args[i]". */
int sched_ext_source_check(json_object *source, json_object *args, const char *path,
			   struct sl_error *err);

/* Which of a user's two files a compiler's error line is in. */
enum sched_ext_source_file {
	SCHED_EXT_FILE_NONE,   /* neither: the skeleton, NAME.bpf.o, the tree's files */
	SCHED_EXT_FILE_BPF,    /* NAME.bpf.c: "$.variants.<v>.sched_ext.source.bpf" */
	SCHED_EXT_FILE_LOADER, /* NAME.c: "... .source.loader" */
};

/* The file of scheduler name whose error line (may be NULL) starts exactly
 * with "NAME.bpf.c:" or "NAME.c:" (clang's "FILE:LINE:COL: error: ..."),
 * else SCHED_EXT_FILE_NONE: NAME.bpf.skel.h, NAME.bpf.o or a header of the
 * tree are not the user's files. */
enum sched_ext_source_file sched_ext_source_error_file(const char *name, const char *line);

/* Whether name is a valid NAME ([a-z][a-z0-9_]{0,31}). */
bool sched_ext_source_name_valid(const char *name);

/* The first SCHED_EXT_TAG_LEN hex digits of sha256 over the name and both
 * files (length-prefixed, so no two inputs share a stream): the guest
 * directory of the loader, SCHED_EXT_GUEST_DIR/<kernel>/<tag>/<name>. */
void sched_ext_source_tag(const char *name, const char *bpf, const char *loader,
			  char out[SCHED_EXT_TAG_LEN + 1]);
