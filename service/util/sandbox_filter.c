/* The sandbox's seccomp filter (util/sandbox_filter.h): a deny-list built
 * with libseccomp and exported as the cBPF program bwrap's --seccomp reads.
 *
 * A deny-list, not an allow-list: a kernel build runs make, gcc (cc1, as,
 * collect2, ld), perl, python3, bash, sed, awk, bc, flex, bison, openssl,
 * pahole, objtool, cpio, xz and ccache, and the calls they make change with
 * each glibc and toolchain update (clone3, rseq, faccessat2, close_range,
 * statx, openat2...). A missing entry in an allow-list would fail a build
 * after a routine upgrade with an EPERM deep inside some tool. What keeps
 * the build in is the user namespace without capabilities; this filter
 * takes away the kernel surface such a process can still reach: namespaces,
 * mounts, tracing, module and BPF loading, keyrings, userfaultfd, io_uring,
 * and every socket but AF_UNIX. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/sandbox_filter.h"

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

static int rules_add(scmp_filter_ctx ctx, struct sl_error *err)
{
	int r;
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		int nr = seccomp_syscall_resolve_name(denied[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (r < 0)
			goto fail;
	}
	/* every socket family but AF_UNIX (make's jobserver, python's
	 * multiprocessing); the network namespace has no route anyway */
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
			     arg0(SCMP_CMP_NE, AF_UNIX, 0));
	if (r < 0)
		goto fail;
	/* clone() with a namespace flag; one rule a flag, as a rule tests
	 * (arg & mask) == value */
	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				     arg0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
		if (r < 0)
			goto fail;
	}
	/* clone3 takes its flags in memory, out of a filter's sight: ENOSYS,
	 * on which glibc falls back to clone() (what Docker's profile does) */
	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (r < 0)
		goto fail;
	return 0;
fail:
	return error_set(err, ERR_INTERNAL, -r, "Cannot build the sandbox's seccomp filter: %s.",
			 strerror(-r));
}

int sandbox_filter_fd(struct sl_error *err)
{
	_cleanup_(ctx_releasep) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return error_set(err, ERR_INTERNAL, ENOMEM,
				 "Cannot build the sandbox's seccomp filter: out of memory.");
	/* the 32-bit ABIs of an x86-64 host get the same rules: otherwise
	 * int 0x80 would be a way around them */
	if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
		int r = seccomp_arch_add(ctx, SCMP_ARCH_X86);
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
	int r = rules_add(ctx, err);
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
