/* The bubblewrap command line of util/sandbox.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/sandbox.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* What of the host's root the sandbox sees, read-only: the system, and of
 * /etc only what the dynamic linker and the tools need. Not /etc as a whole:
 * a service's configuration (and its token digests) may live there. */
static const char *const system_dirs[] = {"/usr",   "/bin",   "/sbin",	"/lib",
					  "/lib32", "/lib64", "/libx32"};
static const char *const etc_files[] = {
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",	 "/etc/alternatives",
    "/etc/passwd",	"/etc/group",	   "/etc/nsswitch.conf", "/etc/localtime",
};

struct vec {
	char **v;
	size_t n, cap;
	bool oom;
};

static void push(struct vec *a, const char *s)
{
	if (a->oom)
		return;
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		char **nv = realloc(a->v, cap * sizeof(char *));
		if (!nv) {
			a->oom = true;
			return;
		}
		a->v = nv;
		a->cap = cap;
	}
	if (!(a->v[a->n] = strdup(s))) {
		a->oom = true;
		return;
	}
	a->v[++a->n] = NULL;
}

/* "<option><n>", e.g. "--nproc=512" (option may be ""). */
static void push_num(struct vec *a, const char *option, unsigned long long n)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%s%llu", option, n);
	push(a, buf);
}

/* A merged-/usr host has /bin -> usr/bin: the sandbox gets the same link. */
static void push_system_dir(struct vec *a, const char *dir)
{
	char target[256];
	ssize_t k = readlink(dir, target, sizeof(target) - 1);
	if (k > 0) {
		target[k] = '\0';
		push(a, "--symlink");
		push(a, target);
		push(a, dir);
		return;
	}
	push(a, "--ro-bind-try");
	push(a, dir);
	push(a, dir);
}

/* True when dir (length n) is below a system directory or is a parent that
 * an earlier bind (binds[0..before)) already made. */
static bool parent_made(const char *dir, size_t n, const struct sandbox_bind *binds, size_t before)
{
	for (size_t i = 0; i < N_OF(system_dirs); i++) {
		size_t l = strlen(system_dirs[i]);
		if (n >= l && strncmp(dir, system_dirs[i], l) == 0 && (dir[l] == '/' || n == l))
			return true;
	}
	for (size_t i = 0; i < before; i++) {
		const char *at = binds[i].at ? binds[i].at : binds[i].path;
		if (strncmp(at, dir, n) == 0 && at[n] == '/')
			return true;
	}
	return false;
}

/* "--perms 0755 --dir P" for every parent P of path, from the top. */
static void push_parents(struct vec *a, const char *path, const struct sandbox_bind *binds,
			 size_t before)
{
	for (const char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		size_t n = (size_t)(p - path);
		if (parent_made(path, n, binds, before))
			continue;
		char dir[4096];
		snprintf(dir, sizeof(dir), "%.*s", (int)n, path);
		push(a, "--perms");
		push(a, "0755");
		push(a, "--dir");
		push(a, dir);
	}
}

static void push_namespaces(struct vec *a, const struct sandbox_spec *sp)
{
	push(a, "--unshare-net");
	push(a, "--unshare-pid");
	push(a, "--unshare-ipc");
	push(a, "--unshare-uts");
	push(a, "--unshare-cgroup-try");
	if (!sp->as_root) {
		/* bwrap drops every capability in the user namespace it makes,
		 * and only in one can it forbid the build making more */
		push(a, "--unshare-user");
		push(a, "--disable-userns");
	}
	push(a, "--die-with-parent");
	push(a, "--new-session");
	if (!sp->as_root && !sp->no_seccomp) {
		push(a, "--seccomp");
		push_num(a, "", SANDBOX_SECCOMP_FD);
	}
}

/* As root, after prlimit: setpriv drops to SANDBOX_UID (no groups, no
 * capabilities, no_new_privs), then a second bwrap makes the user
 * namespace, mapping SANDBOX_UID to itself (bwrap as root would map it to
 * the host's 0, whom RLIMIT_NPROC does not hold), forbids further user
 * namespaces and loads the filter; its root is the outer sandbox's
 * (--dev-bind / /, with /proc, /dev and /tmp below: a plain --bind would
 * remount /dev nodev, and /dev/null would refuse writes). The outer bwrap runs as root
 * because only root reaches a cache below root's 0700 home: bwrap 0.8
 * resolves even --bind-fd's source by its path. */
static void push_inner(struct vec *a, const struct sandbox_spec *sp)
{
	push(a, "setpriv");
	push_num(a, "--reuid=", SANDBOX_UID);
	push_num(a, "--regid=", SANDBOX_UID);
	push(a, "--clear-groups");
	push(a, "--inh-caps=-all");
	push(a, "--bounding-set=-all");
	push(a, "--no-new-privs");
	push(a, "--");
	push(a, "bwrap");
	push(a, "--unshare-user");
	push(a, "--uid");
	push_num(a, "", SANDBOX_UID);
	push(a, "--gid");
	push_num(a, "", SANDBOX_UID);
	push(a, "--disable-userns");
	push(a, "--die-with-parent");
	if (!sp->no_seccomp) {
		push(a, "--seccomp");
		push_num(a, "", SANDBOX_SECCOMP_FD);
	}
	push(a, "--dev-bind");
	push(a, "/");
	push(a, "/");
	push(a, "--chdir");
	push(a, sp->chdir ? sp->chdir : "/");
	push(a, "--");
}

static void push_env(struct vec *a, char *const *env)
{
	push(a, "--clearenv");
	push(a, "--setenv");
	push(a, "PATH");
	push(a, "/usr/bin:/bin");
	push(a, "--setenv");
	push(a, "HOME");
	push(a, "/tmp");
	push(a, "--setenv");
	push(a, "TMPDIR");
	push(a, "/tmp");
	for (char *const *e = env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
		push(a, "--setenv");
		push(a, name);
		push(a, eq + 1);
	}
}

static void push_system(struct vec *a)
{
	for (size_t i = 0; i < N_OF(system_dirs); i++)
		push_system_dir(a, system_dirs[i]);
	/* /usr/local is the host's own software (and maybe its secrets), not
	 * the distribution's: an empty tmpfs over it. Only where it exists: a
	 * mount point cannot be made in the read-only /usr. */
	struct stat st;
	if (stat("/usr/local", &st) == 0 && S_ISDIR(st.st_mode)) {
		push(a, "--tmpfs");
		push(a, "/usr/local");
		push(a, "--remount-ro");
		push(a, "/usr/local");
	}
	/* bwrap would make /etc 0700, out of SANDBOX_UID's reach */
	push(a, "--perms");
	push(a, "0755");
	push(a, "--dir");
	push(a, "/etc");
	for (size_t i = 0; i < N_OF(etc_files); i++) {
		push(a, "--ro-bind-try");
		push(a, etc_files[i]);
		push(a, etc_files[i]);
	}
}

static void push_binds(struct vec *a, const struct sandbox_spec *sp)
{
	/* bwrap makes a bind's missing parents 0700: as SANDBOX_UID the
	 * command could not reach them. They are empty directories of the
	 * sandbox's own root, so 0755 shows nothing of the host. */
	for (size_t i = 0; i < sp->n_binds; i++)
		push_parents(a, sp->binds[i].at ? sp->binds[i].at : sp->binds[i].path, sp->binds,
			     i);
	for (size_t i = 0; i < sp->n_binds; i++) {
		const struct sandbox_bind *b = &sp->binds[i];
		push(a, b->writable ? "--bind" : "--ro-bind");
		push(a, b->path);
		push(a, b->at ? b->at : b->path);
	}
}

int sandbox_argv(const struct sandbox_spec *sp, char *const argv[], char ***ret,
		 struct sl_error *err)
{
	struct vec a = {0};
	push(&a, "bwrap");
	push_namespaces(&a, sp);
	push_env(&a, sp->env);
	push_system(&a);
	push(&a, "--dev");
	push(&a, "/dev");
	push(&a, "--proc");
	push(&a, "/proc");
	push(&a, "--perms");
	push(&a, "1777");
	push(&a, "--size");
	push_num(&a, "", sp->tmp_bytes ? sp->tmp_bytes : 256ULL << 20);
	push(&a, "--tmpfs");
	push(&a, "/tmp");
	push_binds(&a, sp);
	push(&a, "--chdir");
	push(&a, sp->chdir ? sp->chdir : "/");
	push(&a, "--");
	push(&a, "prlimit");
	if (sp->cpu_s)
		push_num(&a, "--cpu=", sp->cpu_s);
	if (sp->as_bytes)
		push_num(&a, "--as=", sp->as_bytes);
	if (sp->fsize_bytes)
		push_num(&a, "--fsize=", sp->fsize_bytes);
	if (sp->nproc)
		push_num(&a, "--nproc=", sp->nproc);
	push(&a, "--core=0");
	push(&a, "--");
	if (sp->as_root)
		push_inner(&a, sp);
	for (size_t i = 0; argv[i]; i++)
		push(&a, argv[i]);
	if (a.oom) {
		strv_free(a.v);
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	*ret = a.v;
	return 0;
}

int sandbox_check(const char *what_instead, struct sl_error *err)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	_cleanup_free_ char *copy = strdup(path);
	if (!copy)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	char *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char p[4096];
		snprintf(p, sizeof(p), "%s/bwrap", d);
		if (access(p, X_OK) == 0)
			return 0;
	}
	return error_set(err, ERR_INTERNAL, ENOENT,
			 "Sandboxed kernel builds need bubblewrap (the 'bwrap' command, Debian "
			 "package 'bubblewrap'), which is not installed; install it, or %s for a "
			 "trusted tree.",
			 what_instead);
}
