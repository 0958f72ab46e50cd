/* The sandbox's seccomp filter (util/sandbox_filter.h): an allow-list built
 * with libseccomp and exported as the cBPF program bwrap's --seccomp reads.
 *
 * Allowed: the calls a sandboxed build was measured to make
 * (bench/sandbox-syscalls.sh: kconfig, patch, make/gcc/as/ld/objtool, the
 * relink with kallsyms and pahole, the compressor, tools/sched_ext's clang,
 * bpftool and libbpf, and the python3, perl and shell the tests run inside),
 * each with its siblings a newer glibc or an older kernel picks instead
 * (stat/newfstatat/statx, pipe/pipe2, dup2/dup3, wait4/waitid...), listed
 * below by family. Any other call fails with ENOSYS, not EPERM: a tool
 * treats ENOSYS as "this kernel is too old" and falls back (glibc does for
 * clone3, faccessat2, close_range, openat2, statx, rseq), so a call a future
 * toolchain adds costs a fallback, not a failed build. The calls that reach
 * kernel surface a build has no use for (namespaces, mounts, tracing, module
 * and BPF loading, keyrings, userfaultfd, io_uring, the clock) fail with
 * EPERM, named, so that a tool that tries one says "not permitted"; so do
 * every socket but AF_UNIX and a clone() with a namespace flag.
 *
 * SCHEDLAB_SECCOMP_LOG=1 in the service's environment turns ENOSYS into
 * "allow and log" (the kernel's audit log, `dmesg | grep type=1326`): how
 * to find what a new toolchain needs, as bench/sandbox-syscalls.sh does. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/sandbox_filter.h"

/* Allowed, by family: each call a build was measured to make and the
 * siblings that do the same job for another glibc, kernel or ABI (the
 * 32-bit names matter only to a 32-bit tool; the x86 ABI gets the list). */
static const char *const allowed[] = {
    /* files: open, read, write, seek, stat, directories, links */
    "read",
    "write",
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "close_range",
    "lseek",
    "_llseek",
    "pread64",
    "pwrite64",
    "readv",
    "writev",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "sendfile",
    "sendfile64",
    "copy_file_range",
    "splice",
    "tee",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "stat64",
    "fstat64",
    "lstat64",
    "fstatat64",
    "statfs",
    "fstatfs",
    "statfs64",
    "fstatfs64",
    "access",
    "faccessat",
    "faccessat2",
    "getdents",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "mkdir",
    "mkdirat",
    "rmdir",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "unlink",
    "unlinkat",
    "symlink",
    "symlinkat",
    "readlink",
    "readlinkat",
    "chmod",
    "fchmod",
    "fchmodat",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "chown32",
    "fchown32",
    "lchown32",
    "umask",
    "truncate",
    "ftruncate",
    "truncate64",
    "ftruncate64",
    "fallocate",
    "fadvise64",
    "fadvise64_64",
    "readahead",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "syncfs",
    "sync",
    "flock",
    "fcntl",
    "fcntl64",
    "ioctl",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "mknod",
    "mknodat",
    "getxattr",
    "lgetxattr",
    "fgetxattr",
    "listxattr",
    "llistxattr",
    "flistxattr",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "dup",
    "dup2",
    "dup3",
    "pipe",
    "pipe2",
    "memfd_create",
    /* waiting on files, pipes and events (make's jobserver, python) */
    "select",
    "_newselect",
    "pselect6",
    "poll",
    "ppoll",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "eventfd",
    "eventfd2",
    "signalfd",
    "signalfd4",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "inotify_rm_watch",
    /* AF_UNIX sockets (socket() itself has its own rule below) */
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "getsockname",
    "getpeername",
    "setsockopt",
    "getsockopt",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "shutdown",
    /* memory */
    "brk",
    "mmap",
    "mmap2",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "mincore",
    "msync",
    "mlock",
    "mlock2",
    "munlock",
    "membarrier",
    /* processes and threads (clone() has its own rule below) */
    "fork",
    "vfork",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "wait4",
    "waitid",
    "waitpid",
    "kill",
    "tkill",
    "tgkill",
    "getpid",
    "getppid",
    "gettid",
    "getpgid",
    "setpgid",
    "getpgrp",
    "getsid",
    "setsid",
    "set_tid_address",
    "set_robust_list",
    "get_robust_list",
    "futex",
    "futex_time64",
    "futex_waitv",
    "rseq",
    "arch_prctl",
    "set_thread_area",
    "get_thread_area",
    "prctl",
    "sched_yield",
    "sched_getaffinity",
    "sched_setaffinity",
    "sched_getparam",
    "sched_getscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_getattr",
    "getpriority",
    "setpriority",
    "getrlimit",
    "ugetrlimit",
    "setrlimit",
    "prlimit64",
    "getrusage",
    "pidfd_open",
    "pidfd_send_signal",
    /* signals */
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "sigreturn",
    "rt_sigpending",
    "rt_sigtimedwait",
    "rt_sigtimedwait_time64",
    "rt_sigsuspend",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "sigaltstack",
    "pause",
    "alarm",
    "getitimer",
    "setitimer",
    /* identity, read or set to what it already is (no capabilities here) */
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    "getuid32",
    "geteuid32",
    "getgid32",
    "getegid32",
    "getresuid32",
    "getresgid32",
    "getgroups32",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setfsuid",
    "setfsgid",
    "setgroups",
    "capget",
    "uname",
    /* time and the system's figures */
    "time",
    "gettimeofday",
    "clock_gettime",
    "clock_gettime64",
    "clock_getres",
    "clock_getres_time64",
    "clock_nanosleep",
    "clock_nanosleep_time64",
    "nanosleep",
    "times",
    "sysinfo",
    "getcpu",
    "getrandom",
    "timer_create",
    "timer_settime",
    "timer_gettime",
    "timer_getoverrun",
    "timer_delete",
    "restart_syscall",
};

/* Denied with EPERM. Names, so that a call this libseccomp or arch does not
 * know is skipped (seccomp_syscall_resolve_name gives __NR_SCMP_ERROR). */
static const char *const denied[] = {
    /* mounts and namespaces: the build has its own already */
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    /* another process's memory */
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    /* the kernel itself */
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "bpf",
    "perf_event_open",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "quotactl_fd",
    "syslog",
    "iopl",
    "ioperm",
    "lookup_dcookie",
    "vhangup",
    /* keyrings */
    "keyctl",
    "add_key",
    "request_key",
    /* large kernel surface no build tool uses */
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_by_handle_at",
    "name_to_handle_at",
    "fanotify_init",
    /* the host's clock */
    "clock_settime",
    "clock_adjtime",
    "settimeofday",
    "adjtimex",
    "stime",
    /* personas and the host's identity */
    "sethostname",
    "setdomainname",
};

/* The namespace flags clone() may not carry (unshare is denied outright). */
static const scmp_datum_t ns_flags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
					CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};

static void ctx_releasep(scmp_filter_ctx *c)
{
	if (*c)
		seccomp_release(*c);
}

/* A condition on the first argument. libseccomp's SCMP_A0() leaves datum_b
 * to the compound literal, which clang's -Wmissing-field-initializers (the
 * fuzz build) refuses. */
static struct scmp_arg_cmp arg0(enum scmp_compare op, scmp_datum_t a, scmp_datum_t b)
{
	return (struct scmp_arg_cmp){.arg = 0, .op = op, .datum_a = a, .datum_b = b};
}

static int rules_add_names(scmp_filter_ctx ctx, uint32_t action, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		int r = seccomp_rule_add(ctx, action, nr, 0);
		/* two names can be one call once libseccomp translates them to
		 * the x86 or x32 ABI (stat and stat64): the first rule stays,
		 * which is why the denied names go in first */
		if (r < 0 && r != -EEXIST)
			return r;
	}
	return 0;
}

/* The rules on socket() and clone() arguments, for the native ABI only: they
 * go in before the 32-bit ABIs are added, which get neither call (ENOSYS).
 * On x86 libseccomp also writes a socket() rule as socketcall(SYS_SOCKET),
 * where the two conditions below collide (EEXIST), and no build tool is a
 * 32-bit program. */
static int rules_add_native(scmp_filter_ctx ctx, struct sl_error *err)
{
	int r;
	/* AF_UNIX only (make's jobserver, python's multiprocessing); the
	 * network namespace has no route anyway */
	r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
			     arg0(SCMP_CMP_EQ, AF_UNIX, 0));
	if (r < 0)
		goto fail;
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
			     arg0(SCMP_CMP_NE, AF_UNIX, 0));
	if (r < 0)
		goto fail;
	/* clone() without a namespace flag; with one, EPERM, one rule a flag,
	 * as a rule tests (arg & mask) == value */
	scmp_datum_t all_ns = 0;
	for (size_t i = 0; i < ELEMENTSOF(ns_flags); i++) {
		all_ns |= ns_flags[i];
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				     arg0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
		if (r < 0)
			goto fail;
	}
	r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
			     arg0(SCMP_CMP_MASKED_EQ, all_ns, 0));
	if (r < 0)
		goto fail;
	/* clone3 takes its flags in memory, out of a filter's sight: it gets
	 * the default ENOSYS, on which glibc falls back to clone() (what
	 * Docker's profile does) */
	return 0;
fail:
	return error_set(err, ERR_INTERNAL, -r, "Cannot build the sandbox's seccomp filter: %s.",
			 strerror(-r));
}

/* The named calls, for every ABI in the filter. */
static int rules_add_lists(scmp_filter_ctx ctx, struct sl_error *err)
{
	int r = rules_add_names(ctx, SCMP_ACT_ERRNO(EPERM), denied, ELEMENTSOF(denied));
	if (r < 0 || (r = rules_add_names(ctx, SCMP_ACT_ALLOW, allowed, ELEMENTSOF(allowed))) < 0)
		goto fail;
	return 0;
fail:
	return error_set(err, ERR_INTERNAL, -r, "Cannot build the sandbox's seccomp filter: %s.",
			 strerror(-r));
}

/* Whether unlisted calls are allowed and logged instead of refused. */
static bool log_unlisted(void)
{
	const char *v = getenv("SCHEDLAB_SECCOMP_LOG");
	return v && strcmp(v, "1") == 0;
}

const char *sandbox_filter_name(void)
{
	return log_unlisted() ? "allow-list, others logged" : "allow-list";
}

int sandbox_filter_fd(struct sl_error *err)
{
	_cleanup_(ctx_releasep) scmp_filter_ctx ctx =
	    seccomp_init(log_unlisted() ? SCMP_ACT_LOG : SCMP_ACT_ERRNO(ENOSYS));
	if (!ctx)
		return error_set(err, ERR_INTERNAL, ENOMEM,
				 "Cannot build the sandbox's seccomp filter: out of memory.");
	int r = rules_add_native(ctx, err);
	if (r < 0)
		return r;
	/* the 32-bit ABIs of an x86-64 host get the lists: otherwise int 0x80
	 * would be a way around them */
	if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
		r = seccomp_arch_add(ctx, SCMP_ARCH_X86);
		if (r < 0 && r != -EEXIST)
			return error_set(err, ERR_INTERNAL, -r,
					 "Cannot add the x86 ABI to the seccomp filter: %s.",
					 strerror(-r));
		r = seccomp_arch_add(ctx, SCMP_ARCH_X32);
		if (r < 0 && r != -EEXIST)
			return error_set(err, ERR_INTERNAL, -r,
					 "Cannot add the x32 ABI to the seccomp filter: %s.",
					 strerror(-r));
	}
	r = rules_add_lists(ctx, err);
	if (r < 0)
		return r;
	_cleanup_close_ int fd = memfd_create("schedlab-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return error_set(err, ERR_INTERNAL, errno,
				 "Cannot create a memfd for the seccomp filter: %s.",
				 strerror(errno));
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return error_set(err, ERR_INTERNAL, -r, "Cannot export the seccomp filter: %s.",
				 strerror(-r));
	/* bwrap reads the program from the fd's offset to its end */
	if (lseek(fd, 0, SEEK_SET) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot rewind the seccomp filter: %s.",
				 strerror(errno));
	return TAKE_FD(fd);
}
