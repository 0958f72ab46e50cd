/* What the kernel build's files share: the source and key inputs, the
 * build context split by concern, and what each file provides, bottom
 * first (the layer order is in docs/architecture.md, "Inside kernel/"; no
 * file calls a file above it). Not a public interface; kbuild.h is. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "kernel/kernel_spec.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/macro.h"
#include "util/sandbox.h"

struct kbuild_opts;
struct kbuild_artifact;

#define KBUILD_KEY_VERSION	"schedlab-kbuild-v1"
#define KBUILD_MAX_CONFIG_LINES 4096
/* A cold tinyconfig+fragment build compiles about this many objects; the
 * real count of the last full build replaces it (trees/<id>/objects). */
#define KBUILD_DEFAULT_OBJECTS 1100
#define KBUILD_MAKE_TIMEOUT_S  3600
#define KBUILD_STEP_TIMEOUT_S  600
/* Under the tree: the object directories of debug kernels, one per preset. */
#define KBUILD_DEBUG_OBJS "objs-debug"
/* Under the tree: an untrusted build's copy of the object directory it
 * starts from, made before its make and removed after it (one at a time:
 * builds of a tree hold its lock). */
#define KBUILD_UNTRUSTED_OBJ "obj-untrusted"
/* In an object directory trusted builds reuse: the key of the last build
 * that completed there ("<key>\n"). Removed before such a build touches the
 * tree (patch, config, make) and written after its make succeeded, so a
 * build stopped half-way leaves none; it goes with the directory when the
 * tree is extracted again. An untrusted build whose base's key it does not
 * hold builds the base there first (docs/kernel-builds.md "Untrusted
 * builds"). */
#define KBUILD_OBJ_COMPLETE ".schedlab-complete"
/* The sandbox's limits per process (util/sandbox.h): address space (a
 * compiler of a kernel unit needs a few hundred MiB), the largest file
 * (vmlinux of this config is tens of MiB) and the processes of the
 * sandbox's uid (make -j2 uses about 20). */
#define KBUILD_SANDBOX_AS_BYTES	   (4ULL << 30)
#define KBUILD_SANDBOX_FSIZE_BYTES (1ULL << 30)
#define KBUILD_SANDBOX_NPROC	   512
/* memory.max of a sandboxed step's cgroup, where there is one: the build's
 * processes together (RLIMIT_AS holds each alone) */
#define KBUILD_SANDBOX_MEM_BYTES (8ULL << 30)
/* Raw bytes of a step's output kept for a failure's excerpt (which keeps at
 * most KBUILD_EXCERPT_MAX of them, sanitized). */
#define KBUILD_TAIL_MAX 16384
/* Bytes of a step's output kept for its caller (the tail). */
#define KBUILD_CAPTURE_MAX  (64 * 1024)
#define FIRST_ERROR_CONTEXT 3 /* lines kept after a step's first compiler error */

/* ---- kbuild_key.c: sources and the key ---- */

enum source_kind { SOURCE_DEBIAN, SOURCE_TARBALL, SOURCE_GIT };

struct source {
	enum source_kind kind;
	char path[PATH_MAX]; /* the tarball or the git tree */
	char ref[256];	     /* git only */
	char identity[512];  /* what the key covers: kind + content hash or commit */
	char tree_id[17];    /* 16 hex digits of sha256(identity): trees/<tree_id>/ */
};

/* The key, plus what meta.json records about the inputs. */
struct key_inputs {
	struct source src;
	char compiler[256];
	char config_sha[HASH_HEX_LEN];
	char debug_sha[HASH_HEX_LEN]; /* the debug preset's fragment; "" without one */
	size_t npatches;
	char (*patch_sha)[HASH_HEX_LEN];
	char key[HASH_HEX_LEN];
};

/* Fills k from s (source identity, compiler version, input hashes); always
 * call kbuild_key_inputs_done(k) afterwards, also on failure. */
int kbuild_key_compute(const char *cache_dir, const struct kernel_spec *s, struct key_inputs *k,
		       struct sl_error *err);
void kbuild_key_inputs_done(struct key_inputs *k);

/* ---- the build context, split by concern ---- */

/* The build log (kbuild_log.c): build.log, the caller's log and progress,
 * and the raw tail a failure's excerpt is cut from. */
struct kbuild_log {
	const struct kbuild_opts *o; /* the caller's log_fd, progress, userdata */
	int fd;			     /* the artifact's build.log */
	unsigned long objects;	     /* compiled so far in this make */
	unsigned long estimate;	     /* expected objects for a full build */
	double percent;
	char last_error[512];
	/* The first "error:" line of the current step and up to
	 * FIRST_ERROR_CONTEXT lines after it (the compiler's caret lines): a
	 * parallel make goes on compiling after an error, and its lines can push
	 * the error out of the tail; the excerpt puts it back. */
	char first_error[1024];
	int first_error_lines;
	/* The current step's output and the "schedlab:" lines after it: the
	 * last KBUILD_TAIL_MAX bytes, raw (kbuild_run_step() starts it over). */
	char tail[KBUILD_TAIL_MAX];
	size_t tail_len;
};

/* The tree a build works in (kbuild_area.c, kernel_tree.c). */
struct kbuild_tree {
	char *dir, *src, *obj;
	/* The work area (kbuild_area.c) dir is, and where a sandboxed step
	 * sees dir, src and obj_trusted: area 0's paths for an area i >= 1,
	 * else the same as on the host. */
	int area;
	char *dir_seen, *src_seen, *obj_trusted_seen;
	/* The object directory trusted builds reuse (obj/ or a debug preset's);
	 * obj is the same, or for an untrusted sandboxed build the throwaway
	 * copy KBUILD_UNTRUSTED_OBJ of it (on the host; make sees it at
	 * obj_trusted's path, kbuild_obj_seen()). */
	char *obj_trusted;
};

/* The sandbox the untrusted steps run in (kbuild_sandbox.c). */
struct kbuild_sandbox {
	bool on;      /* patch and make run sandboxed (not o->no_sandbox) */
	bool as_root; /* ...by root: the tree is handed to SANDBOX_UID */
	/* what held the last sandboxed step (written into meta.json) */
	struct sandbox_report report;
};

/* One build: the job's inputs (o, s, k, cache_dir), the parts above and
 * what a failed step leaves for the failure report. */
struct build_ctx {
	const struct kbuild_opts *o;
	const struct kernel_spec *s;
	const struct key_inputs *k;
	const char *cache_dir;
	struct kbuild_tree tree;
	struct kbuild_log log;
	struct kbuild_sandbox sandbox;
	char source_version[64];
	char failed_patch[256];	 /* set by kernel_tree_patch() when a patch fails */
	char failed_option[128]; /* set by kernel_config_apply() when Kconfig drops one */
};

/* ---- kbuild_log.c: the build log (the bottom of kernel/'s build files) ---- */

/* A "schedlab: ..." line to build.log, the caller's log and progress. */
void kbuild_log(struct kbuild_log *log, const char *fmt, ...) _printf_(2, 3);
/* Appends line and a newline to log's tail, dropping the oldest bytes. */
void kbuild_log_tail(struct kbuild_log *log, const char *line);
/* The sanitized excerpt of log's tail (struct kbuild_failure.log_excerpt):
 * malloc'd, or NULL when the tail is empty or memory ran out. */
char *kbuild_tail_excerpt(const struct kbuild_log *log);
/* err's message (which quotes file names from a patch) as sanitized text,
 * cut at a character boundary when it no longer fits. */
void kbuild_log_sanitize_error(struct sl_error *err);
/* snprintf for messages where cutting the text short is fine. */
void kbuild_trunc_printf(char *buf, size_t len, const char *fmt, ...) _printf_(3, 4);
/* The last path component of p (p itself when it has no '/'). */
const char *kbuild_base_name(const char *p);

/* ---- kbuild_step.c: the command runner every step goes through ---- */

/* Where a step runs: on the host (extracting the source: schedlab's own
 * commands on trusted input), or sandboxed when b->sandbox.on is set: patch
 * with the source writable and applied/ read-only; make with the source
 * read-only, obj/ writable and ccache read-only. */
enum kbuild_where { KBUILD_ON_HOST, KBUILD_SANDBOX_PATCH, KBUILD_SANDBOX_MAKE };

/* The object directory as make sees it (its O=): b->tree.obj, except that an
 * untrusted build's copy is bound at the path of the directory it copies
 * (b->tree.obj_trusted), so that every absolute path the copied objects and
 * tools recorded still names them and make stays incremental. */
const char *kbuild_obj_seen(const struct build_ctx *b);
/* Runs one step through cmd_run(), where says where; its output goes to
 * build.log (and the caller's log). A non-zero exit is returned in
 * *ret_exit, not as an error; a step past its time limit (timeout_s, or
 * o->timeout_s when shorter) is ERR_BUILD "build_failed". */
int kbuild_run_step(struct build_ctx *b, enum kbuild_where where, char *const argv[],
		    const char *cwd, int timeout_s, int *ret_exit, char **ret_output,
		    struct sl_error *err);
struct cmd_opts;
/* kbuild_run_step()'s sandboxed step (kernel/kbuild_sandbox.c): argv run
 * under util/sandbox.h with where's binds, cwd as the sandbox sees it and
 * opts (its env_extra the step's environment); the first step logs what
 * held it, and b->sandbox.report keeps the last one's for meta.json.
 * Returns and errors as sandbox_run(). */
int kbuild_run_sandboxed(struct build_ctx *b, enum kbuild_where where, char *const argv[],
			 const char *cwd, int timeout_s, const struct cmd_opts *opts, int *ret_exit,
			 char **ret_output, struct sl_error *err);
/* As root with the sandbox on, hands path (recursively, never following a
 * symlink) to SANDBOX_UID so the sandboxed steps may write it; else nothing. */
int kbuild_sandbox_own(const struct kbuild_sandbox *sb, const char *path, struct sl_error *err);

/* ---- kbuild_copy.c: copies into and out of a build ---- */

/* The size caps of what the host takes from a build's object directory or
 * source tree (docs/kernel-builds.md "Files from the sandbox"): a
 * tinyconfig bzImage is a few MiB, a .config of an allyesconfig about
 * 300 KiB, a sched_ext loader (libbpf linked in) a few MiB. */
#define KBUILD_MAX_BZIMAGE_BYTES   (64u << 20)
#define KBUILD_MAX_DOTCONFIG_BYTES (4u << 20)
#define KBUILD_MAX_LOADER_BYTES	   (64u << 20)
#define KBUILD_MAX_MAKEFILE_BYTES  (1u << 20)

/* Copies a file the host trusts (a job's patch, a cached kernel) with mode
 * 0644. Not for anything a build wrote: kbuild_copy_output(). */
int kbuild_copy_file(const char *from, const char *to, struct sl_error *err);
/* The uid whose read access a file a build left must have
 * (fs_untrusted.reader_uid): the sandbox's when root runs the sandbox, else
 * -1 (the build ran as this process's user). */
long kbuild_reader_uid(bool sandbox, bool as_root);
/* The fs_untrusted of a build run in sb for a file named what of at most
 * max bytes. */
struct fs_untrusted kbuild_untrusted(const struct kbuild_sandbox *sb, const char *what, size_t max);
/* fs_copy_untrusted() of root/rel (a directory the build could write) to
 * the host path to with mode; a refusal is ERR_BUILD "build_failed". */
int kbuild_copy_output(const struct kbuild_sandbox *sb, const char *root, const char *rel,
		       const char *what, size_t max, const char *to, mode_t mode,
		       struct sl_error *err);
/* Whether the tree's applied/list holds exactly k's patches, in order
 * (the tree's src/ is then k's source; a tree with no list has none). */
bool kbuild_tree_has_patches(const char *tree, const struct key_inputs *k);
/* How many of k's patches, from the first, the tree's applied/list holds
 * (*ret_listed: how many it lists); a tree with no list holds none, an
 * unreadable list is -1. */
int kbuild_tree_patches_in_common(const char *tree, const struct key_inputs *k, size_t *ret_listed);

/* Whether the .config text sets opt ("CONFIG_X=y"). */
bool kbuild_config_text_has(const char *text, const char *opt);

/* The source seen by a sandboxed step (make's cwd and -C): b->tree.src_seen
 * in the sandbox, else b->tree.src. */
const char *kbuild_src_seen(const struct build_ctx *b);

/* ---- kbuild_area.c: work areas, builds of one tree at once ---- */

#define KBUILD_MAX_TREE_SLOTS 8

/* o->tree_slots bounded to 1..KBUILD_MAX_TREE_SLOTS. */
int kbuild_area_slots(const struct kbuild_opts *o);
/* trees/<tree_id> for area 0, trees/<tree_id>.<area> after it (malloc'd). */
char *kbuild_area_path(const char *trees, const char *tree_id, int area);
/* The order in which a build tries n areas (order[0..n)), given how many of
 * its patches each holds from the first (shared[i]; -1: no source yet):
 * most shared first, then the lower index; an area with no source last,
 * so a new area is seeded only when every other one is busy. */
void kbuild_area_order(const int *shared, size_t n, size_t *order);
/* Takes the lock of an area of b's tree under trees/ (the first free one in
 * kbuild_area_order(); all busy: waits for the first), seeds it from area 0
 * when it is new, and sets b->tree.area, b->tree.dir and b->tree.dir_seen; *ret_lock_fd
 * holds the lock and its last-used is touched (LRU eviction). With one
 * slot, area 0 as before. */
int kbuild_area_take(struct build_ctx *b, const char *trees, int *ret_lock_fd,
		     struct sl_error *err);
/* host (a path under b->tree.dir or elsewhere) as a sandboxed step sees it
 * (malloc'd, NULL without memory). */
char *kbuild_area_seen(const struct build_ctx *b, const char *host);

/* ---- kbuild_cache.c: the content-addressed cache ---- */

/* Takes an exclusive flock on path, polling so that a cancel (o may be NULL)
 * can stop the wait; says once in the log (b may be NULL) that it waits. */
/* One try at an exclusive flock on path (created if need be): 1 and *ret_fd
 * when taken, 0 when another holds it, < 0 on an error. */
int kbuild_lock_try(const char *path, int *ret_fd, struct sl_error *err);
int kbuild_lock_take(const char *path, const struct kbuild_opts *o, struct kbuild_log *log,
		     int *ret_fd, struct sl_error *err);
/* Loads a complete artifact directory; -ENOENT when it is not (yet) there. */
int kbuild_cache_load(const char *dir, const char *key, struct kbuild_artifact **ret,
		      struct sl_error *err);
/* Stamps dir as just used, for LRU eviction. */
void kbuild_cache_touch(const char *dir);
/* Evicts least recently used entries of the cache until kernels/ plus
 * trees/ fit in max bytes (kbuild_opts.cache_max_bytes: 0 the default,
 * KBUILD_CACHE_UNLIMITED none): kernel artifacts and source tree areas in
 * one order of their last-used stamps. Never the kernel keep (a key, may
 * be NULL), never one whose build lock is held, never a kernel a loaded
 * artifact pins. Best effort: the cache is only a cache. */
void kbuild_cache_evict(const char *cache_dir, const char *keep, unsigned long long max);
/* KBUILD_CACHE_DEFAULT_PERCENT of the size of cache_dir's filesystem; 0
 * when it cannot be read. */
unsigned long long kbuild_cache_default_max(const char *cache_dir);
/* Tests: the filesystem size kbuild_cache_default_max() uses, instead of
 * statvfs(); NULL restores statvfs(). */
void kbuild_cache_set_size_hook(unsigned long long (*fn)(const char *path));

/* ---- kernel_tree.c: the shared source tree ---- */

/* Extracts the source into b->tree.src with an empty b->tree.obj and applied/. */
int kernel_tree_extract(struct build_ctx *b, struct sl_error *err);
/* Sets b->source_version from the top Makefile. */
int kernel_tree_read_version(struct build_ctx *b, struct sl_error *err);
/* Brings b->tree.src to pristine + the spec's patches (ERR_BUILD
 * "patch_does_not_apply" naming the patch, file and hunk; the patch's file
 * name in b->failed_patch). */
int kernel_tree_patch(struct build_ctx *b, struct sl_error *err);
/* What patch(1)'s output out (untrusted: it quotes the patch) says about a
 * failed run, as one sentence into buf (len bytes): "file 'F' hunk #N
 * FAILED at line L", a missing or already patched file, or the reason patch
 * gave; never empty. */
void kernel_tree_patch_explain(const char *out, char *buf, size_t len);

/* ---- tree_guard.c: the journal of patch steps in the shared tree ---- */

/* One file a patch touches, relative to src/, and its state hash
 * before the patch and after it ("-": missing, "?": not known yet). */
struct tree_file {
	char *path;
	char before[HASH_HEX_LEN];
	char after[HASH_HEX_LEN];
};
struct tree_manifest {
	struct tree_file *files;
	size_t n;
};
enum tree_side { TREE_BEFORE, TREE_AFTER, TREE_NEITHER };

/* The files a patch's dry run (its output, patch(1)'s "checking file" lines,
 * renames and copies too) says it touches, each hashed now into before. */
int tree_guard_from_dry_run(const char *src, const char *dry_output, struct tree_manifest *m,
			    struct sl_error *err);
/* Hashes each file of m into after. */
void tree_guard_hash_after(const char *src, struct tree_manifest *m);
/* Which side of the patch every file of m is on; the first file not
 * back to before goes to bad. */
enum tree_side tree_guard_side(const char *src, const struct tree_manifest *m, char *bad,
			       size_t bad_len);
/* applied/NNNN.files: m of the index'th patch, written durably; and read. */
int tree_guard_save(const char *applied, size_t index, const struct tree_manifest *m,
		    struct sl_error *err);
int tree_guard_load(const char *applied, size_t index, struct tree_manifest *m,
		    struct sl_error *err);
void tree_guard_free(struct tree_manifest *m);
/* applied/step: "apply|revert INDEX SHA", written durably before the step;
 * read: 1 and the step, 0 when there is none, < 0 when unreadable;
 * removed when the list says what the step did. */
int tree_guard_step_write(const char *applied, const char *step, size_t index, const char *sha,
			  struct sl_error *err);
int tree_guard_step_read(const char *applied, char step[16], size_t *ret_index,
			 char sha[HASH_HEX_LEN]);
int tree_guard_step_done(const char *applied, struct sl_error *err);
/* Tests: raises SIGKILL when $SCHEDLAB_TEST_TREE_CRASH is where. */
void tree_guard_crash_point(const char *where);

/* ---- kbuild_scx.c: the sched_ext schedulers (docs/sched-ext.md) ---- */

/* A step's limit for the schedulers: libbpf, bpftool and four BPF programs
 * with their loaders, cold, on a loaded 2-core host. */
#define KBUILD_SCX_TIMEOUT_S 1800
/* The clang that compiles the BPF programs: 6.12's sched_ext headers need
 * clang 16 or later (Debian bookworm's default clang is 14). */
#define KBUILD_SCX_CLANG "clang-16"

/* When b's .config enables SCHED_CLASS_EXT: builds tools/sched_ext/ of the
 * tree against the tree's own vmlinux (BTF -> vmlinux.h with the tree's
 * bpftool, the tree's libbpf) in the make sandbox, and copies each loader
 * of sched_ext_schedulers() to out_dir/KBUILD_SCX_DIR/. Else nothing. When
 * they do not build, the kernel build still succeeds and
 * KBUILD_SCX_DIR/KBUILD_SCX_FAILED says why (kbuild.h). */
int kbuild_scx_build(struct build_ctx *b, const char *out_dir, struct sl_error *err);

/* ---- kernel_config.c: the .config ---- */

struct config_entry {
	char name[128];
	char value[512];  /* "n" for "is not set" */
	const char *from; /* the fragment's file name (borrowed from the spec) */
};

/* Reads and strictly parses the fragment s->config and, for a debug kernel,
 * s->debug_config after it (each at most KBUILD_MAX_CONFIG_LINES options):
 * one list in which an option the debug fragment sets again replaces the
 * base fragment's entry. *ret is the caller's to free. */
int kernel_config_read_fragment(const struct kernel_spec *s, struct config_entry **ret,
				size_t *ret_n, struct sl_error *err);
/* Parses a .config or a fragment (text, NUL-terminated, untrusted: a
 * submitter's fragment or what olddefconfig wrote in a tree a build could
 * change) into *ret (the caller frees it) and *ret_n entries. strict: a line
 * that is not an option, a comment or blank is ERR_INVALID naming what and
 * the line; otherwise it is skipped. A line of 1024 bytes or more, or more
 * than 4 * KBUILD_MAX_CONFIG_LINES options, fails either way. */
int kernel_config_parse(const char *text, const char *what, bool strict, struct config_entry **ret,
			size_t *ret_n, struct sl_error *err);
/* tinyconfig + fragment(s) + olddefconfig in b->tree.obj; then every option the
 * fragments asked for must have the asked value (ERR_BUILD
 * "config_option_dropped" otherwise, the first such option in
 * b->failed_option). */
int kernel_config_apply(struct build_ctx *b, struct sl_error *err);
