/* The sandbox's cgroup (util/sandbox_cgroup.h) and sandbox_run(), which
 * puts the command line of util/sandbox.c, the filter of
 * util/sandbox_filter.c and the cgroup together around cmd_run(). */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "util/cmd.h"
#include "util/fs.h"
#include "util/macro.h"
#include "util/sandbox.h"
#include "util/sandbox_cgroup.h"
#include "util/sandbox_filter.h"

#define CGROUP2_MAGIC 0x63677270 /* CGROUP2_SUPER_MAGIC, linux/magic.h */
#define CGROUP_MNT    "/sys/fs/cgroup"

static const char *const controllers[] = {"memory", "pids", "cpu"};

/* True when the space-separated list has word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/* The service's own cgroup v2 path ("0::/x" of /proc/self/cgroup) below
 * the mount, into ret; -1 when there is none. */
static int own_cgroup(char *ret, size_t len)
{
	_cleanup_free_ char *text = NULL;
	struct sl_error ignored;
	if (fs_read_file("/proc/self/cgroup", 64 * 1024, &text, NULL, &ignored) < 0)
		return -1;
	for (char *l = text; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(l, "0::/", 4) == 0) {
			snprintf(ret, len, "%s%s", CGROUP_MNT,
				 strcmp(l + 3, "/") == 0 ? "" : l + 3);
			return 0;
		}
		l = nl ? nl + 1 : NULL;
	}
	return -1;
}

int sandbox_cgroup_base(char *ret_base, size_t base_len, char *ret_reason, size_t reason_len)
{
	char base[4096];
	const char *env = getenv("SCHEDLAB_BUILD_CGROUP");
	if (env && *env)
		snprintf(base, sizeof(base), "%s", env);
	else if (own_cgroup(base, sizeof(base)) < 0) {
		snprintf(ret_reason, reason_len,
			 "the service is in no cgroup v2 (no \"0::\" line in /proc/self/cgroup)");
		return -1;
	}
	struct statfs sf;
	if (statfs(base, &sf) < 0) {
		snprintf(ret_reason, reason_len, "'%s': %s", base, strerror(errno));
		return -1;
	}
	if (sf.f_type != CGROUP2_MAGIC) {
		snprintf(ret_reason, reason_len,
			 "'%s' is not on a cgroup v2 hierarchy (a cgroup v1 or hybrid host)", base);
		return -1;
	}
	char path[4200];
	_cleanup_free_ char *have = NULL, *enabled = NULL;
	struct sl_error e = {0};
	snprintf(path, sizeof(path), "%s/cgroup.controllers", base);
	if (fs_read_file(path, 4096, &have, NULL, &e) < 0) {
		snprintf(ret_reason, reason_len, "%s", e.message);
		return -1;
	}
	have[strcspn(have, "\n")] = '\0';
	for (size_t i = 0; i < sizeof(controllers) / sizeof(controllers[0]); i++)
		if (!has_word(have, controllers[i])) {
			snprintf(ret_reason, reason_len,
				 "'%s' is not delegated the %s controller (it has: %s)", base,
				 controllers[i], *have ? have : "none");
			return -1;
		}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", base);
	if (fs_read_file(path, 4096, &enabled, NULL, &e) < 0) {
		snprintf(ret_reason, reason_len, "%s", e.message);
		return -1;
	}
	if (!has_word(enabled, "memory") || !has_word(enabled, "pids") ||
	    !has_word(enabled, "cpu")) {
		_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
		static const char add[] = "+memory +pids +cpu";
		/* EBUSY: the cgroup has processes of its own (the service's);
		 * cgroup v2 keeps processes in leaves only */
		if (fd < 0 || write(fd, add, strlen(add)) < 0) {
			snprintf(ret_reason, reason_len,
				 "cannot enable memory, pids and cpu in '%s': %s (set "
				 "SCHEDLAB_BUILD_CGROUP to a delegated cgroup without processes)",
				 path, strerror(errno));
			return -1;
		}
	}
	snprintf(ret_base, base_len, "%s", base);
	return 0;
}

static int write_limit(const char *dir, const char *file, const char *value, struct sl_error *err)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		return error_set(err, ERR_INTERNAL, errno, "Cannot write '%s' to '%s': %s.", value,
				 path, strerror(errno));
	return 0;
}

int sandbox_cgroup_make(const char *base, const char *name, const struct sandbox_cgroup_limits *lim,
			char *ret_dir, size_t dir_len, struct sl_error *err)
{
	char dir[4096], mem[32] = "max", pids[32] = "max", cpu[48] = "max 100000";
	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	if (mkdir(dir, 0755) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create the cgroup '%s': %s.",
				 dir, strerror(errno));
	if (lim->mem_bytes)
		snprintf(mem, sizeof(mem), "%llu", lim->mem_bytes);
	if (lim->pids)
		snprintf(pids, sizeof(pids), "%lu", lim->pids);
	if (lim->cpus)
		snprintf(cpu, sizeof(cpu), "%lu 100000", lim->cpus * 100000UL);
	int r;
	if ((r = write_limit(dir, "memory.max", mem, err)) < 0 ||
	    (r = write_limit(dir, "pids.max", pids, err)) < 0 ||
	    (r = write_limit(dir, "cpu.max", cpu, err)) < 0) {
		sandbox_cgroup_remove(dir);
		return r;
	}
	snprintf(ret_dir, dir_len, "%s", dir);
	return 0;
}

void sandbox_cgroup_remove(const char *dir)
{
	struct statfs sf;
	bool real = statfs(dir, &sf) == 0 && sf.f_type == CGROUP2_MAGIC;
	if (!real) {
		struct sl_error ignored;
		fs_rm_rf(dir, &ignored);
		return;
	}
	for (int i = 0; i < 40 && rmdir(dir) < 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
}

/* The cgroup of one run, or the reason in rep (nothing is claimed then). */
static void cgroup_for(const struct sandbox_spec *sp, struct sandbox_report *rep, char *dir,
		       size_t len)
{
	static atomic_ulong seq;
	char base[4096], reason[300], name[64];
	if (sandbox_cgroup_base(base, sizeof(base), reason, sizeof(reason)) < 0) {
		snprintf(rep->cgroup, sizeof(rep->cgroup), "unavailable: %s", reason);
		return;
	}
	snprintf(name, sizeof(name), "schedlab-build-%ld-%lu", (long)getpid(),
		 (unsigned long)atomic_fetch_add(&seq, 1));
	struct sandbox_cgroup_limits lim = {sp->mem_bytes, sp->nproc, sp->cpus};
	struct sl_error e = {0};
	if (sandbox_cgroup_make(base, name, &lim, dir, len, &e) < 0) {
		/* cut short: a message of 1 KiB does not fit the report */
		snprintf(rep->cgroup, sizeof(rep->cgroup), "unavailable: %.300s", e.message);
		return;
	}
	rep->cgroup_held = true;
	snprintf(rep->cgroup, sizeof(rep->cgroup),
		 "memory.max=%llu pids.max=%lu cpu.max=%lu 100000", sp->mem_bytes, sp->nproc,
		 sp->cpus * 100000UL);
}

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int sandbox_run(const struct sandbox_spec *sp, char *const argv[], const struct cmd_opts *opts,
		int *ret_exit, char **ret_output, struct sandbox_report *ret_report,
		struct sl_error *err)
{
	struct sandbox_spec s = *sp;
	struct sandbox_report rep = {.ran = true, .seccomp = !sp->no_seccomp};
	int fds[CMD_PASS_FDS_MAX];
	size_t nfd = 0;
	char cg[4096] = "";
	int r = 0;
	/* a dry run (util/cmd.h) runs nothing: the command line alone */
	bool dry = cmd_dry_run_active();
	if (!dry && !s.no_seccomp) {
		if ((r = sandbox_filter_fd(err)) < 0)
			return r;
		fds[nfd++] = r; /* at SANDBOX_SECCOMP_FD */
	}
	if (dry)
		snprintf(rep.cgroup, sizeof(rep.cgroup), "unavailable: a dry run");
	else
		cgroup_for(&s, &rep, cg, sizeof(cg));
	_cleanup_strv_free_ char **wrapped = NULL;
	r = sandbox_argv(&s, argv, &wrapped, err);
	if (r >= 0) {
		struct cmd_opts o = *opts;
		o.pass_fds = fds;
		o.n_pass_fds = nfd;
		o.cgroup_dir = cg[0] ? cg : NULL;
		r = cmd_run(wrapped, &o, ret_exit, ret_output, err);
	}
	close_all(fds, nfd);
	if (cg[0])
		sandbox_cgroup_remove(cg);
	if (r >= 0 && ret_report)
		*ret_report = rep;
	return r;
}

json_object *sandbox_report_json(const struct sandbox_report *r, bool as_root)
{
	json_object *o = json_object_new_object();
	/* as root the dedicated uid, else the service's own (bwrap maps it) */
	json_object_object_add(o, "uid", json_object_new_int64(as_root ? SANDBOX_UID : geteuid()));
	json_object_object_add(o, "user_namespace", json_object_new_boolean(true));
	json_object_object_add(o, "seccomp",
			       json_object_new_string(r->seccomp ? sandbox_filter_name() : "none"));
	json_object_object_add(o, "cgroup", json_object_new_string(r->cgroup));
	return o;
}
