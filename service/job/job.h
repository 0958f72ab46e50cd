/* A job: the user's spec, validated against results-schema/job.schema.json,
 * plus the checks a schema cannot express (references between variants and
 * kernels, the CI shorthand, limits), and its expansion into the form that is
 * run and stored ("the spec as it was run").
 *
 * Patches and config fragments in a spec are one of:
 *   {"series": "linux-6.1"}            the built-in series under guest-kernel/
 *   {"path": "fix.patch"}              a file relative to the job file (CLI only)
 *   {"name": "fix.patch", "content": "..."}   inline (what the service accepts)
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "util/error.h"

enum job_origin {
	JOB_ORIGIN_CLI,	    /* local files may be named, relative to base_dir */
	JOB_ORIGIN_SERVICE, /* untrusted: no local paths, only built-ins and inline content */
};

struct job_limits {
	int max_vcpus;		/* 64 */
	int max_repeat;		/* 50 */
	int max_patches;	/* 200 */
	size_t max_patch_bytes; /* 4 MiB each */
	int max_guest_seconds;	/* a job's budget: job_budget_s() */
	int max_memory_mb;	/* 4096: one guest's memory */
	int max_total_vcpus;	/* 64: vcpus x variants, the job's guests all at once */
	/* The service's "git_sources" (source_policy.h): directories, each a
	 * realpath, under which a service job's `git:` tree may lie; none by
	 * default (borrowed). */
	char *const *git_sources;
	size_t n_git_sources;
};

/* What one kernel build is budgeted at, in seconds: a cold build of the
 * built-in config on the 2-core reference host (docs/service.md). */
#define JOB_BUILD_ESTIMATE_S 900

/* The wall-clock deadline of one run (boot, every workload, power-off):
 * 90 s of boot allowance under TCG (45 s with KVM) plus each workload's
 * timeout_s + 5 s. workloads is an expanded job's or a run plan's
 * "workloads" array (borrowed). The runner enforces exactly this. */
int job_run_deadline_s(json_object *workloads, bool tcg);
/* The seconds an expanded job (borrowed) may keep the host busy: repeat
 * (its max) x variants x job_run_deadline_s() (TCG unless the job asks for
 * "kvm") plus JOB_BUILD_ESTIMATE_S for each kernel it may build. */
long long job_budget_s(json_object *expanded);

/* The defaults above. */
const struct job_limits *job_default_limits(void);

/* A kernel source with a relative local path made absolute: "tarball:PATH"
 * and "git:PATH@REF" (the ref after the last '@' kept) against base_dir,
 * itself against the working directory (NULL: the working directory).
 * Anything else ("debian:...", absolute paths) is copied. The one place
 * this is done: a CLI job's sources (job file's directory) and `schedlab
 * test --base`. malloc'd, or NULL on failure (errno set). */
char *job_source_absolute(const char *source, const char *base_dir);

/* A name as the job schema's $defs/name has it (a job's, a variant's, a
 * schedule's or a trend series'): [A-Za-z0-9][A-Za-z0-9._-]*, at most
 * JOB_NAME_MAX bytes. */
#define JOB_NAME_MAX 64
bool job_name_valid(const char *s);

/* Validates spec (borrowed) and returns, in *ret_expanded, a new reference to
 * the expanded spec: shorthand expanded, defaults filled in. On failure err
 * names the JSON path and the reason. base_dir is used only for
 * JOB_ORIGIN_CLI paths. This is the stored and served form of a job;
 * job_expand() builds the typed form from it. */
int job_expand_json(json_object *spec, enum job_origin origin, const char *base_dir,
		    const struct job_limits *limits, json_object **ret_expanded,
		    struct sl_error *err);

/* ---- the typed job ----
 *
 * Every string and array below points into the expanded spec that struct job
 * holds a reference to (job->spec): they live as long as the job, and
 * nothing in it is to be freed separately. */

/* A patch or config fragment after expansion: local paths have been read and
 * inlined, so only built-ins and inline content remain. */
enum job_file_kind {
	JOB_FILE_BUILTIN, /* {"series": name} for a patch, {"builtin": name} for a config */
	JOB_FILE_INLINE,  /* {"name": ..., "content": ...} */
};

struct job_file {
	enum job_file_kind kind;
	const char *builtin; /* JOB_FILE_BUILTIN: the series or fragment under guest-kernel/ */
	const char *name;    /* JOB_FILE_INLINE: the file name; NULL for an unnamed config */
	const char *content; /* JOB_FILE_INLINE: content_len bytes, NUL-terminated */
	size_t content_len;
};

struct job_kernel {
	const char *name;   /* the key in "kernels" */
	const char *source; /* "debian:linux-source-6.1", or (CLI) a local tree or tarball */
	struct job_file *patches;
	size_t n_patches;
	struct job_file config; /* default: the built-in "linux-6.1" fragment */
	/* NULL, or a debug preset ("lockdep"): the kernel is built with
	 * guest-kernel/<tree>/debug-<preset>.config merged after config, <tree>
	 * the config's built-in name (an inline config: the first built-in
	 * series', else linux-6.1). docs/kernel-bugs.md "The debug variant". */
	const char *debug;
	/* "schedstat": true: the kernel is built with CONFIG_SCHEDSTATS added
	 * after its fragment (a kernel key of its own; the built-in configs do
	 * not change), and its runs snapshot /proc/schedstat around each
	 * workload (docs/workloads.md "schedstat"). */
	bool schedstat;
	/* The job's guest has NUMA nodes (guest.numa): the kernel is built
	 * with NUMA added after its fragment, like schedstat. Derived, not a
	 * field of the job's JSON. */
	bool numa;
};

/* The largest sockets, cores or threads count of guest.topology. */
#define GUEST_TOPOLOGY_MAX 64

/* The most NUMA nodes of guest.numa, and the least memory of one. */
#define GUEST_NUMA_MAX	  8
#define GUEST_NUMA_MIN_MB 64

/* One NUMA node of guest.numa: its vCPUs (bit N: vCPU N) and memory. */
struct job_numa_cell {
	uint64_t cpus;
	int memory_mb;
};

struct job_guest {
	int vcpus;     /* default 2 */
	int memory_mb; /* default 512 */
	/* guest.topology, all 0 when the job sets none (libvirt's default: one
	 * socket of vcpus cores); else their product is vcpus. */
	int sockets, cores, threads;
	/* guest.numa (docs/guests.md "NUMA"): n_numa 0 for none; else every
	 * vCPU in exactly one node and the nodes' memory adds up to
	 * memory_mb, and every kernel of the job is built with NUMA. */
	struct job_numa_cell numa[GUEST_NUMA_MAX];
	size_t n_numa;
	/* guest.pinning "off" (docs/guests.md "Pinning"): never pin; the
	 * default "auto" pins each vCPU to a host CPU of its own when the host
	 * has CPUs to spare. */
	bool pinning_off;
};

enum job_hrtick {
	JOB_HRTICK_DEFAULT, /* unset: the kernel's default */
	JOB_HRTICK_ON,
	JOB_HRTICK_OFF,
};

struct job_uid_share {
	unsigned uid; /* 0..65535 */
	int share;    /* 1..262144; 1024 is the default weight */
};

struct job_tunable {
	const char *name; /* a file under /sys/kernel/debug/sched/, e.g. "latency_ns" */
	long long value;  /* 0..4294967295 */
};

struct job_variant {
	const char *name;		 /* the key in "variants" */
	const struct job_kernel *kernel; /* the kernel it boots (in job->kernels) */
	const char **features;		 /* sched features in order, e.g. "NO_RT_PUSH" */
	size_t n_features;
	enum job_hrtick hrtick;
	struct job_uid_share *uid_shares;
	size_t n_uid_shares;
	struct job_tunable *sched_tunables;
	size_t n_sched_tunables;
	/* sched_ext (job/sched_ext.h): the BPF scheduler the agent starts
	 * before the workloads, or NULL for the kernel's own classes. */
	const char *scx_scheduler;
	const char **scx_args;
	size_t n_scx_args;
	/* A user's own scheduler (job/sched_ext_source.h): scx_scheduler is
	 * its NAME, these the contents of NAME.bpf.c and NAME.c; NULL for an
	 * example of the tree. */
	const char *scx_bpf, *scx_loader;
};

struct job_workload {
	const char *name; /* unique in the job; default: the tool's name */
	const char *tool; /* "rt-migrate-test", "cyclictest", "share" or "slice" */
	const char **args;
	size_t n_args;
	int timeout_s;	   /* default 120 */
	int uid;	   /* default 0 (root) */
	long maxerr_us;	   /* rt-migrate-test's --maxerr; -1 when the spec sets none */
	json_object *spec; /* the workload's entry in the expanded spec (borrowed) */
};

struct job_gate {
	const char *workload; /* a workload's name */
	const char *metric;   /* e.g. "inversions", "latency_us.p99" */
	bool has_threshold;   /* false: the metric's default threshold */
	double threshold;
	bool relative;	 /* threshold is a fraction of the baseline median */
	bool is_default; /* added because the job named no gates (job/suite.h) */
};

enum job_placement {
	JOB_PLACEMENT_TOGETHER, /* the default: every run of the job on one host */
	JOB_PLACEMENT_SPREAD,	/* whole rounds of repeats to the hosts in turn */
};

/* What a noisy run does to the verdict (compare/noise.h). */
enum job_noise_policy {
	JOB_NOISE_EXCLUDE, /* the default: left out of the comparisons and rerun */
	JOB_NOISE_KEEP,	   /* counted like any other run */
	JOB_NOISE_FAIL,	   /* a noisy candidate run fails the job */
};

/* A run whose vCPUs waited more than this share of it for a host CPU is
 * noisy, unless the job names its own noise_limit_pct or the host's A/A
 * calibration sets a lower one (compare/calibration.h). */
#define JOB_NOISE_LIMIT_DEFAULT_PCT 25.0

struct job {
	json_object *spec; /* the expanded spec (one reference, owned) */
	const char *name;
	const char *description; /* NULL if none */
	struct job_kernel *kernels;
	size_t n_kernels;
	struct job_guest guest;
	struct job_variant *variants;
	size_t n_variants;
	const struct job_variant *baseline; /* in variants */
	struct job_workload *workloads;
	size_t n_workloads;
	int repeat;	/* boots per variant, default 3; with adaptive repeats the most */
	int repeat_min; /* adaptive repeats: the fewest (compare/sequential.h); else repeat */
	struct job_gate *gates;
	size_t n_gates;
	/* The job said "gates": [] (no gates on purpose). False in jobs stored
	 * before defaults existed, whose empty gates meant "none given". */
	bool gates_opt_out;
	const char *suite;	 /* "rt", "latency", "fair", "all", "debug", or NULL */
	const char *accelerator; /* "auto" (the default), "kvm" or "tcg" */
	bool has_placement;	 /* whether the spec names a placement */
	enum job_placement placement;
	const char **host_labels;
	size_t n_host_labels;
	/* Absent from jobs stored before they existed: then the defaults. */
	double alpha; /* the level a test must reach, default 0.05 (compare/sequential.h) */
	enum job_noise_policy noise_policy;
	double noise_limit_pct; /* JOB_NOISE_LIMIT_DEFAULT_PCT when not given */
	bool noise_limit_given; /* the job named noise_limit_pct */
};

/* Validates and expands spec (borrowed) as job_expand_json() does, and returns
 * the typed job in *ret (owned by the caller, free with job_free()). The job
 * holds the expanded spec as job->spec. On failure err names the JSON path
 * and the reason and *ret is untouched. */
int job_expand(json_object *spec, enum job_origin origin, const char *base_dir,
	       const struct job_limits *limits, struct job **ret, struct sl_error *err);

/* Builds the typed job from an already expanded spec (borrowed; the job takes
 * its own reference), e.g. one read back from the store. Does not validate
 * against the schema again, but checks every member it reads: a spec that is
 * not in the expanded form is ERR_INVALID, never a crash. */
int job_from_expanded(json_object *expanded, struct job **ret, struct sl_error *err);

/* Frees job and drops its reference to the spec. Accepts NULL; returns NULL. */
struct job *job_free(struct job *job);

/* The variant, kernel or workload of that name in job, or NULL. */
const struct job_variant *job_find_variant(const struct job *job, const char *name);
const struct job_kernel *job_find_kernel(const struct job *job, const char *name);
const struct job_workload *job_find_workload(const struct job *job, const char *name);

static inline void job_freep(struct job **job)
{
	job_free(*job);
}
#define _cleanup_job_ _cleanup_(job_freep)
