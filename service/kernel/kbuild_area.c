/* Work areas of a source tree (docs/kernel-builds.md "Builds at
 * once"): builds of one source with different patches run at once, each in
 * its own area. Area 0 is trees/<id>/ (the tree as it always was); area
 * i >= 1 is trees/<id>.<i>/ with its own src/, obj/, applied/ and lock
 * "<area>.lock". A new area is seeded from area 0 under area 0's lock: its
 * src/ is a hard-link copy (patch(1) writes a file it changes anew, so the
 * areas never share a changed file), the rest a real copy (make rewrites
 * objects in place). In the sandbox an area's directories are bound at area
 * 0's paths, so the objects and tools it copied (which record absolute
 * paths) are still its own and make stays incremental; without the sandbox
 * the first build in a new area rebuilds what recorded area 0's path. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "kernel/kbuild-internal.h"
#include "kernel/kbuild.h"
#include "util/fs.h"
#include "util/time.h"

void kbuild_area_order(const int *shared, size_t n, size_t *order)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		order[m++] = i;
	/* a stable insertion sort (n <= KBUILD_MAX_TREE_SLOTS): ties keep the
	 * lower index first */
	for (size_t i = 1; i < m; i++)
		for (size_t j = i; j > 0; j--) {
			size_t a = order[j - 1], c = order[j];
			if (shared[c] <= shared[a])
				break;
			order[j - 1] = c;
			order[j] = a;
		}
}

int kbuild_area_slots(const struct kbuild_opts *o)
{
	int n = o ? o->tree_slots : 1;
	return n < 1 ? 1 : n > KBUILD_MAX_TREE_SLOTS ? KBUILD_MAX_TREE_SLOTS : n;
}

char *kbuild_area_path(const char *trees, const char *tree_id, int area)
{
	char name[64];
	if (area == 0)
		snprintf(name, sizeof(name), "%s", tree_id);
	else
		snprintf(name, sizeof(name), "%s.%d", tree_id, area);
	return fs_path_join(trees, name);
}

/* How many of k's patches, from the first, the area holds: -1 when it has
 * no source yet. Read without the area's lock: only an order of
 * preference, which the lock's holder may make stale. */
static int area_shared(const char *area, const struct key_inputs *k)
{
	_cleanup_free_ char *mk = fs_path_join(area, "src/Makefile");
	if (!fs_exists(mk))
		return -1;
	size_t listed;
	int same = kbuild_tree_patches_in_common(area, k, &listed);
	return same < 0 ? 0 : same;
}

/* "<area>.lock" (malloc'd; NULL without memory). */
static char *lock_of(const char *area)
{
	char *p = NULL;
	return asprintf(&p, "%s.lock", area) < 0 ? NULL : p;
}

/* Copies area 0 into area (absent or a leftover of a seed that was
 * stopped), under area 0's lock. Area 0 without a source: nothing (the
 * build extracts its own). */
static int area_seed(struct build_ctx *b, const char *area0, const char *area, struct sl_error *err)
{
	_cleanup_free_ char *mk0 = fs_path_join(area0, "src/Makefile");
	if (!fs_exists(mk0))
		return 0;
	_cleanup_free_ char *lock0 = lock_of(area0), *tmp = NULL;
	if (!lock0 || asprintf(&tmp, "%s.seed", area) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_close_ int fd0 = -1;
	int r = kbuild_lock_take(lock0, b->o, &b->log, &fd0, err);
	if (r < 0)
		return r;
	double t0 = time_monotonic_s();
	kbuild_log(&b->log, "seeding work area %d from area 0 of the tree", b->tree.area);
	if ((r = fs_rm_rf(area, err)) < 0 || (r = fs_rm_rf(tmp, err)) < 0 ||
	    (r = fs_mkdir_p(tmp, err)) < 0)
		return r;
	_cleanup_free_ char *src0 = fs_path_join(area0, "src");
	char *const links[] = {"cp", "-al", src0, tmp, NULL};
	int ex = 0;
	r = kbuild_run_step(b, KBUILD_ON_HOST, links, area0, KBUILD_STEP_TIMEOUT_S, &ex, NULL, err);
	if (r < 0)
		return r;
	/* every part but the source and an untrusted build's copy */
	static const char *const parts[] = {"obj", "applied", "objects", KBUILD_DEBUG_OBJS};
	char *argv[4 + ELEMENTSOF(parts) + 2] = {"cp", "-a", "--reflink=auto"};
	size_t n = 3;
	char *paths[ELEMENTSOF(parts)] = {0};
	for (size_t i = 0; ex == 0 && i < ELEMENTSOF(parts); i++) {
		paths[i] = fs_path_join(area0, parts[i]);
		if (paths[i] && fs_exists(paths[i]))
			argv[n++] = paths[i];
	}
	argv[n++] = tmp;
	argv[n] = NULL;
	if (ex == 0 && n > 4)
		r = kbuild_run_step(b, KBUILD_ON_HOST, argv, area0, KBUILD_STEP_TIMEOUT_S, &ex,
				    NULL, err);
	for (size_t i = 0; i < ELEMENTSOF(parts); i++)
		free(paths[i]);
	if (r < 0)
		return r;
	if (ex != 0)
		return error_set(err, ERR_INTERNAL, EIO,
				 "Cannot copy the kernel tree into work area %d (cp exit %d).",
				 b->tree.area, ex);
	if (rename(tmp, area) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot rename '%s': %s.", tmp,
				 strerror(errno));
	kbuild_log(&b->log, "seeded work area %d in %.1f s", b->tree.area, time_monotonic_s() - t0);
	return 0;
}

int kbuild_area_take(struct build_ctx *b, const char *trees, int *ret_lock_fd, struct sl_error *err)
{
	int n = kbuild_area_slots(b->o);
	char *areas[KBUILD_MAX_TREE_SLOTS] = {0};
	int shared[KBUILD_MAX_TREE_SLOTS];
	size_t order[KBUILD_MAX_TREE_SLOTS];
	int r = 0, fd = -1;
	_cleanup_free_ char *mk = NULL, *lock = NULL;
	for (int i = 0; i < n; i++) {
		if (!(areas[i] = kbuild_area_path(trees, b->k->src.tree_id, i))) {
			r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			goto out;
		}
		shared[i] = n == 1 ? 0 : area_shared(areas[i], b->k);
	}
	kbuild_area_order(shared, (size_t)n, order);
	int chosen = -1;
	for (int i = 0; n > 1 && i < n && chosen < 0; i++) {
		_cleanup_free_ char *l = lock_of(areas[order[i]]);
		r = l ? kbuild_lock_try(l, &fd, err)
		      : error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		if (r < 0)
			goto out;
		if (r > 0)
			chosen = (int)order[i];
	}
	if (chosen < 0) {
		/* every area busy (or only one): wait for the one preferred */
		chosen = (int)order[0];
		if (!(lock = lock_of(areas[chosen]))) {
			r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			goto out;
		}
		if ((r = kbuild_lock_take(lock, b->o, &b->log, &fd, err)) < 0)
			goto out;
	}
	b->tree.area = chosen;
	b->tree.dir = TAKE_PTR(areas[chosen]);
	b->tree.dir_seen = strdup(b->sandbox.on && chosen > 0 ? areas[0] : b->tree.dir);
	if (!b->tree.dir_seen) {
		r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		goto out;
	}
	if (n > 1)
		kbuild_log(&b->log,
			   "work area %d of %d of the tree (%d of its patches applied there)",
			   chosen, n, shared[chosen] < 0 ? 0 : shared[chosen]);
	mk = fs_path_join(b->tree.dir, "src/Makefile");
	if (chosen > 0 && mk && !fs_exists(mk) &&
	    (r = area_seed(b, areas[0], b->tree.dir, err)) < 0)
		goto out;
	r = fs_mkdir_p(b->tree.dir, err);
out:
	for (int i = 0; i < n; i++)
		free(areas[i]);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	kbuild_cache_touch(b->tree.dir); /* the area's LRU stamp (kbuild_cache_evict) */
	*ret_lock_fd = fd;
	return 0;
}

char *kbuild_area_seen(const struct build_ctx *b, const char *host)
{
	size_t tl = strlen(b->tree.dir);
	if (strcmp(b->tree.dir, b->tree.dir_seen) == 0 || strncmp(host, b->tree.dir, tl) != 0 ||
	    (host[tl] != '/' && host[tl] != '\0'))
		return strdup(host);
	char *out = NULL;
	if (asprintf(&out, "%s%s", b->tree.dir_seen, host + tl) < 0)
		return NULL;
	return out;
}
