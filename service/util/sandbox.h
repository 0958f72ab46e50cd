/* A command line that runs a command inside a bubblewrap sandbox
 * (docs/kernel-builds.md, "The sandbox"): new network, pid, ipc and uts
 * namespaces, an empty root holding only a read-only system (/usr and a few
 * files of /etc; /usr/local hidden), /dev, /proc, a private size-capped /tmp
 * and the binds the caller lists, a clean environment, resource limits set
 * by prlimit(1) inside, a seccomp filter (util/sandbox_filter.c) and, where
 * the host delegates one, a cgroup v2 of its own (util/sandbox_cgroup.c).
 * Always a user namespace with no capabilities and no further user
 * namespaces (--unshare-user --disable-userns). As root, the outer bwrap
 * (root reaches the binds) runs prlimit, setpriv(1) drops to SANDBOX_UID
 * and an inner bwrap makes the user namespace mapping SANDBOX_UID to itself
 * (not the host's 0, whom a process limit does not hold), with the filter.
 * sandbox_argv() only builds argv;
 * sandbox_run() runs it with cmd_run(), whose timeout kills bwrap, whose
 * pid 1 takes every sandboxed process with it (--die-with-parent). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* The unprivileged uid and gid a sandbox started by root runs as, on the
 * host and inside its user namespace. Used by nothing else: not 65534
 * (nobody), whose RLIMIT_NPROC count host daemons share. Above systemd's
 * container range (524288-1879048191) and below its foreign range
 * (2147352576-), and past any /etc/subuid range of the first 28000 users;
 * scripts/setup.sh names it schedlab-build in /etc/passwd when it is free. */
#define SANDBOX_UID 1900000000
/* The fd number bwrap reads the seccomp program from (--seccomp). */
#define SANDBOX_SECCOMP_FD 3

struct sandbox_bind {
	const char *path; /* absolute */
	bool writable;
	/* absolute: where it is bound inside; NULL: at path. Binding a copy at
	 * the original's path keeps every absolute path a build recorded valid. */
	const char *at;
};

struct sandbox_spec {
	const struct sandbox_bind *binds;
	size_t n_binds;
	const char *chdir;   /* absolute, or NULL: / */
	char *const *env;    /* NULL-terminated "K=V": the environment besides PATH, HOME, TMPDIR */
	bool as_root;	     /* the caller is uid 0 (see above) */
	unsigned long cpu_s; /* RLIMIT_CPU per process; 0: none */
	unsigned long long as_bytes;	/* RLIMIT_AS per process; 0: none */
	unsigned long long fsize_bytes; /* RLIMIT_FSIZE (largest file written); 0: none */
	unsigned long nproc;		/* RLIMIT_NPROC (processes of the sandbox's uid); 0: none */
	unsigned long long tmp_bytes;	/* size of the private /tmp; 0: 256 MiB */
	bool no_seccomp; /* no --seccomp (sandbox_run() passes the filter unless set) */
	/* The cgroup's limits (sandbox_run(); util/sandbox_cgroup.h): */
	unsigned long long mem_bytes; /* memory.max; 0: none */
	unsigned long cpus;	      /* cpu.max: this many CPUs' time; 0: none */
				      /* pids.max is nproc */
};

/* What a sandbox_run() held: for the build's log and meta.json. */
struct sandbox_report {
	bool ran;     /* a sandboxed command ran */
	bool seccomp; /* with the filter */
	/* "memory.max=N pids.max=N cpu.max=Q P" when a cgroup held it, else
	 * "unavailable: <reason>"; never a limit that was not written. */
	char cgroup[384];
	bool cgroup_held;
};

/* The bwrap command line running argv under sp: a malloc'd NULL-terminated
 * vector (strv_free). argv's part starts after the last "--". */
int sandbox_argv(const struct sandbox_spec *sp, char *const argv[], char ***ret,
		 struct sl_error *err);

struct cmd_opts;
/* Runs argv sandboxed under sp with cmd_run() and opts (whose cwd must be
 * NULL: sp->chdir is where it runs): the seccomp program at
 * SANDBOX_SECCOMP_FD unless sp->no_seccomp, and a cgroup of its own with
 * sp's limits where the host delegates one (else the reason is reported,
 * and the command runs without). ret_report (may be NULL) says which held.
 * Returns and errors as cmd_run(), and ERR_INTERNAL when the filter cannot
 * be made. */
int sandbox_run(const struct sandbox_spec *sp, char *const argv[], const struct cmd_opts *opts,
		int *ret_exit, char **ret_output, struct sandbox_report *ret_report,
		struct sl_error *err);

/* A new json-c object describing what sandboxed steps held: the uid, the
 * user namespace, the filter and the cgroup (or why none); caller puts it. */
struct json_object *sandbox_report_json(const struct sandbox_report *r, bool as_root);

/* 0 when bwrap is in PATH; otherwise an ERR_INTERNAL error naming the Debian
 * package (bubblewrap) and what_instead, the way to go without a sandbox. */
int sandbox_check(const char *what_instead, struct sl_error *err);
