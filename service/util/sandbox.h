/* A command line that runs a command inside a bubblewrap sandbox
 * (docs/kernel-builds.md, "The sandbox"): new network, pid, ipc and uts
 * namespaces, an empty root holding only a read-only system (/usr and a few
 * files of /etc), /dev, /proc, a private size-capped /tmp and the binds the
 * caller lists, a clean environment, and resource limits set by prlimit(1)
 * inside. As root the command drops to SANDBOX_UID with setpriv(1) (a
 * process limit does not hold for uid 0); otherwise bwrap makes a user
 * namespace and drops every capability. This only builds argv: cmd_run()
 * runs it, and its timeout kills bwrap, whose pid 1 takes every sandboxed
 * process with it (--die-with-parent). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* The unprivileged uid and gid a sandbox started by root runs as. */
#define SANDBOX_UID 65534

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
};

/* The bwrap command line running argv under sp: a malloc'd NULL-terminated
 * vector (strv_free). argv's part starts after the last "--". */
int sandbox_argv(const struct sandbox_spec *sp, char *const argv[], char ***ret,
		 struct sl_error *err);

/* 0 when bwrap is in PATH; otherwise an ERR_INTERNAL error naming the Debian
 * package (bubblewrap) and what_instead, the way to go without a sandbox. */
int sandbox_check(const char *what_instead, struct sl_error *err);
