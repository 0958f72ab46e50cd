/* The journal that keeps the shared source tree pristine under untrusted
 * patches (docs/kernel-builds.md "A tree no patch can poison"): before a
 * patch is applied or reverted, the files it touches are hashed and the
 * step is written down (fsync'd); after a revert every such file must be
 * back to its hash, and after a crash the hashes say which side of the step
 * the tree is on. Anything else means the tree is re-extracted. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kbuild-internal.h"
#include "util/fs.h"
#include "util/hash.h"

/* A source file larger than this is taken as changed (the largest file of
 * a kernel tree is a few MiB of firmware or generated tables). */
#define TREE_GUARD_MAX_FILE (64u << 20)
/* Files one patch may touch, and the bytes of its manifest. */
#define TREE_GUARD_MAX_FILES	20000
#define TREE_GUARD_MAX_MANIFEST (TREE_GUARD_MAX_FILES * (2 * HASH_HEX_LEN + PATH_MAX / 8))

/* The state of one file as a hash: "-" missing, else sha256 of its kind,
 * permission bits and content (a regular file) or target (a symlink); "?"
 * when it is neither or cannot be read below src without a symlink. */
static void state_hash(const char *src, const char *rel, char out[HASH_HEX_LEN])
{
	_cleanup_free_ char *path = fs_path_join(src, rel);
	struct stat st;
	snprintf(out, HASH_HEX_LEN, "?");
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			snprintf(out, HASH_HEX_LEN, "-");
		return;
	}
	char head[32];
	snprintf(head, sizeof(head), "%c%04o", S_ISLNK(st.st_mode) ? 'L' : 'F',
		 (unsigned)(st.st_mode & 0777));
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(path, target, sizeof(target));
		if (n < 0 || (size_t)n >= sizeof(target))
			return;
		struct hash_ctx *h = hash_new();
		hash_update_str(h, head);
		hash_update(h, target, (size_t)n);
		hash_final_hex(h, out);
		return;
	}
	if (!S_ISREG(st.st_mode))
		return;
	struct fs_untrusted u = {
	    .what = "source file", .max = TREE_GUARD_MAX_FILE, .reader_uid = -1};
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	struct sl_error ignored;
	if (fs_read_untrusted(src, rel, &u, &data, &len, &ignored) < 0)
		return;
	struct hash_ctx *h = hash_new();
	hash_update_str(h, head);
	hash_update(h, data, len);
	hash_final_hex(h, out);
}

void tree_guard_free(struct tree_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->files[i].path);
	free(m->files);
	m->files = NULL;
	m->n = 0;
}

/* A file name as patch(1) printed it, 'quoted' when it has odd bytes:
 * kept only when it is a plain relative path (patch refuses the others). */
static int manifest_add(struct tree_manifest *m, const char *name, size_t n)
{
	if (n >= 2 && (name[0] == '\'' || name[0] == '"') && name[n - 1] == name[0]) {
		name++;
		n -= 2;
	}
	if (n == 0 || n >= PATH_MAX || name[0] == '/' || memchr(name, '\n', n))
		return 0;
	char *p = strndup(name, n);
	if (!p)
		return -ENOMEM;
	for (const char *c = p; *c;) {
		size_t k = strcspn(c, "/");
		if ((k == 2 && c[0] == '.' && c[1] == '.') || k == 0) {
			free(p);
			return 0;
		}
		c += k;
		c += *c == '/';
	}
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->files[i].path, p) == 0) {
			free(p);
			return 0;
		}
	if (m->n >= TREE_GUARD_MAX_FILES) {
		free(p);
		return -E2BIG;
	}
	struct tree_file *nf = realloc(m->files, (m->n + 1) * sizeof(*nf));
	if (!nf) {
		free(p);
		return -ENOMEM;
	}
	m->files = nf;
	m->files[m->n++] = (struct tree_file){.path = p, .before = "-", .after = "?"};
	return 0;
}

int tree_guard_from_dry_run(const char *src, const char *dry_output, struct tree_manifest *m,
			    struct sl_error *err)
{
	*m = (struct tree_manifest){0};
	for (const char *l = dry_output; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		static const char pre[] = "checking file ";
		if (len > sizeof(pre) - 1 && strncmp(l, pre, sizeof(pre) - 1) == 0) {
			const char *name = l + sizeof(pre) - 1;
			size_t n = len - (sizeof(pre) - 1);
			/* "NEW (renamed from OLD)", "NEW (copied from OLD)" */
			const char *paren = memmem(name, n, " (", 2);
			int r = manifest_add(m, name, paren ? (size_t)(paren - name) : n);
			if (r >= 0 && paren) {
				const char *from =
				    memmem(paren, n - (size_t)(paren - name), " from ", 6);
				const char *end = memchr(paren, ')', n - (size_t)(paren - name));
				if (from && end && end > from + 6)
					r = manifest_add(m, from + 6, (size_t)(end - from - 6));
			}
			if (r < 0) {
				tree_guard_free(m);
				return error_set(err, r == -E2BIG ? ERR_BUILD : ERR_INTERNAL, -r,
						 r == -E2BIG
						     ? "The patch touches more than %d files."
						     : "Out of memory (%d).",
						 TREE_GUARD_MAX_FILES);
			}
		}
		l = nl ? nl + 1 : NULL;
	}
	for (size_t i = 0; i < m->n; i++)
		state_hash(src, m->files[i].path, m->files[i].before);
	return 0;
}

void tree_guard_hash_after(const char *src, struct tree_manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		state_hash(src, m->files[i].path, m->files[i].after);
}

enum tree_side tree_guard_side(const char *src, const struct tree_manifest *m, char *bad,
			       size_t bad_len)
{
	bool before = true, after = true;
	if (bad_len)
		bad[0] = '\0';
	for (size_t i = 0; i < m->n; i++) {
		char now[HASH_HEX_LEN];
		state_hash(src, m->files[i].path, now);
		bool b = strcmp(now, "?") != 0 && strcmp(now, m->files[i].before) == 0;
		bool a = strcmp(now, "?") != 0 && strcmp(now, m->files[i].after) == 0;
		if (!b && bad_len && !bad[0])
			snprintf(bad, bad_len, "%s", m->files[i].path);
		before = before && b;
		after = after && a;
	}
	return before ? TREE_BEFORE : after ? TREE_AFTER : TREE_NEITHER;
}

/* Writes text to dir/name atomically and makes the rename durable. */
static int write_durable(const char *dir, const char *name, const char *text, struct sl_error *err)
{
	_cleanup_free_ char *path = fs_path_join(dir, name);
	int r = fs_write_file_atomic(path, text, strlen(text), err);
	if (r < 0)
		return r;
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot sync '%s': %s.", dir,
				 strerror(errno));
	return 0;
}

static char *manifest_name(size_t index)
{
	char *name = NULL;
	return asprintf(&name, "%04zu.files", index) < 0 ? NULL : name;
}

int tree_guard_save(const char *applied, size_t index, const struct tree_manifest *m,
		    struct sl_error *err)
{
	size_t cap = 64, len = 0;
	for (size_t i = 0; i < m->n; i++)
		cap += strlen(m->files[i].path) + 2 * HASH_HEX_LEN + 4;
	_cleanup_free_ char *text = malloc(cap);
	_cleanup_free_ char *name = manifest_name(index);
	if (!text || !name)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	text[0] = '\0';
	for (size_t i = 0; i < m->n; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s %s %s\n", m->files[i].before,
					m->files[i].after, m->files[i].path);
	return write_durable(applied, name, text, err);
}

int tree_guard_load(const char *applied, size_t index, struct tree_manifest *m,
		    struct sl_error *err)
{
	*m = (struct tree_manifest){0};
	_cleanup_free_ char *name = manifest_name(index);
	if (!name)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_free_ char *path = fs_path_join(applied, name);
	_cleanup_free_ char *text = NULL;
	int r = fs_read_file(path, TREE_GUARD_MAX_MANIFEST, &text, NULL, err);
	if (r < 0)
		return r;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *s1 = strchr(l, ' ');
		char *s2 = s1 ? strchr(s1 + 1, ' ') : NULL;
		if (!s2 || (size_t)(s1 - l) >= HASH_HEX_LEN ||
		    (size_t)(s2 - s1 - 1) >= HASH_HEX_LEN ||
		    manifest_add(m, s2 + 1, strlen(s2 + 1)) < 0 || !m->n ||
		    strcmp(m->files[m->n - 1].path, s2 + 1) != 0) {
			tree_guard_free(m);
			return error_set(err, ERR_INTERNAL, EBADMSG,
					 "The patch manifest '%s' is malformed.", path);
		}
		snprintf(m->files[m->n - 1].before, HASH_HEX_LEN, "%.*s", (int)(s1 - l), l);
		snprintf(m->files[m->n - 1].after, HASH_HEX_LEN, "%.*s", (int)(s2 - s1 - 1),
			 s1 + 1);
	}
	return 0;
}

int tree_guard_step_write(const char *applied, const char *step, size_t index, const char *sha,
			  struct sl_error *err)
{
	char text[128];
	snprintf(text, sizeof(text), "%s %zu %.64s\n", step, index, sha);
	return write_durable(applied, "step", text, err);
}

int tree_guard_step_read(const char *applied, char step[16], size_t *ret_index,
			 char sha[HASH_HEX_LEN])
{
	_cleanup_free_ char *path = fs_path_join(applied, "step");
	_cleanup_free_ char *text = NULL;
	struct sl_error ignored;
	if (fs_read_file(path, 256, &text, NULL, &ignored) < 0)
		return fs_exists(path) ? -EIO : 0;
	unsigned long idx;
	char s[16], h[HASH_HEX_LEN];
	if (sscanf(text, "%15s %lu %64s", s, &idx, h) != 3 || strlen(h) != HASH_HEX_LEN - 1 ||
	    (strcmp(s, "apply") != 0 && strcmp(s, "revert") != 0))
		return -EBADMSG;
	snprintf(step, 16, "%s", s);
	memcpy(sha, h, HASH_HEX_LEN);
	*ret_index = idx;
	return 1;
}

int tree_guard_step_done(const char *applied, struct sl_error *err)
{
	_cleanup_free_ char *path = fs_path_join(applied, "step");
	if (unlink(path) < 0 && errno != ENOENT)
		return error_set(err, ERR_INTERNAL, errno, "Cannot remove '%s': %s.", path,
				 strerror(errno));
	return 0;
}

void tree_guard_crash_point(const char *where)
{
	/* tests only: a kill -9 at this point of the journal */
	const char *want = getenv("SCHEDLAB_TEST_TREE_CRASH");
	if (want && strcmp(want, where) == 0)
		raise(SIGKILL);
}
