/* A commit range of a local git tree (commit_range.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job/commit_range.h"
#include "job/patchset.h"
#include "util/cmd.h"
#include "util/json.h"
#include "util/macro.h"

#define GIT_TIMEOUT_S 300

/* git as the range needs it: no system config (format.* settings of the
 * host's admin), no prompt, no pager. */
static char *const git_env[] = {"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat",
				NULL};

void commit_range_done(struct commit_range *r)
{
	free(r->tree);
	free(r->commits);
	memset(r, 0, sizeof(*r));
}

static bool range_ref_ok(const char *s, size_t n)
{
	char buf[JOB_SOURCE_REF_MAX + 1];
	if (n == 0 || n > JOB_SOURCE_REF_MAX || s[0] == '.' || s[0] == '/')
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return job_source_ref_valid(buf);
}

/* Fills r (zeroed) with tree (n_tree bytes), BASE (n_base bytes) and HEAD,
 * the refs checked. */
static int range_set(struct commit_range *r, const char *tree, size_t n_tree, const char *base,
		     size_t n_base, const char *head, const char *field, struct sl_error *err)
{
	if (!range_ref_ok(base, n_base) || !range_ref_ok(head, strlen(head)))
		return error_set_path(err, ERR_INVALID, field,
				      "BASE and HEAD of a commit range must be refs of letters, "
				      "digits and '._/^~-', not starting with '-', '.' or '/', "
				      "e.g. 'git:linux@v6.1..HEAD' or 'git:.@HEAD~3..HEAD'.");
	r->tree = strndup(tree, n_tree);
	if (!r->tree)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	memcpy(r->base_ref, base, n_base);
	snprintf(r->head_ref, sizeof(r->head_ref), "%s", head);
	return 0;
}

int commit_range_parse(const char *text, const char *field, struct commit_range *r,
		       struct sl_error *err)
{
	memset(r, 0, sizeof(*r));
	const char *at = strncmp(text, "git:", 4) == 0 ? strrchr(text + 4, '@') : NULL;
	const char *dots = at ? strstr(at + 1, "..") : NULL;
	if (!at || at == text + 4 || !dots || strlen(text) > 4096)
		return error_set_path(err, ERR_INVALID, field,
				      "A commit range must look like 'git:TREE@BASE..HEAD' "
				      "(e.g. 'git:linux@v6.1..HEAD').");
	const char *base = at + 1;
	return range_set(r, text + 4, (size_t)(at - (text + 4)), base, (size_t)(dots - base),
			 dots + 2, field, err);
}

int commit_range_set(struct commit_range *r, const char *tree, const char *base_ref,
		     const char *head_ref, const char *field, struct sl_error *err)
{
	memset(r, 0, sizeof(*r));
	if (!tree[0])
		return error_set_path(err, ERR_INVALID, field, "The commit range has no tree.");
	return range_set(r, tree, strlen(tree), base_ref, strlen(base_ref), head_ref, field, err);
}

/* git -C tree ARGS...; *ret_exit its status, *ret_out its output (capped). */
static int git(const struct commit_range *r, char **args, size_t cap, int *ret_exit, char **ret_out,
	       struct sl_error *err)
{
	char *argv[16] = {"git", "-C", r->tree};
	size_t n = 3;
	for (; args[n - 3] && n < 15; n++)
		argv[n] = args[n - 3];
	argv[n] = NULL;
	struct cmd_opts o = {
	    .log_fd = -1, .capture_max = cap, .timeout_s = GIT_TIMEOUT_S, .env_extra = git_env};
	return cmd_run(argv, &o, ret_exit, ret_out, err);
}

static int resolve_ref(const struct commit_range *r, const char *ref, const char *which,
		       const char *field, char out[65], struct sl_error *err)
{
	char rev[JOB_SOURCE_REF_MAX + 16];
	snprintf(rev, sizeof(rev), "%s^{commit}", ref);
	char *args[] = {"rev-parse", "--verify", "--quiet", rev, NULL};
	_cleanup_free_ char *outp = NULL;
	int ex = 0;
	int r_ = git(r, args, 4096, &ex, &outp, err);
	if (r_ < 0)
		return r_;
	size_t len = outp ? strspn(outp, "0123456789abcdef") : 0;
	if (ex != 0 || (len != 40 && len != 64))
		return error_set_path(err, ERR_NOT_FOUND, field,
				      "%s '%s' does not name a commit in the tree.", which, ref);
	memcpy(out, outp, len);
	out[len] = '\0';
	return 0;
}

/* "N\n" from git rev-list --count; -1 when it is not a number. */
static long count_of(const char *out)
{
	char *end = NULL;
	long n = out ? strtol(out, &end, 10) : -1;
	return end && end != out && (*end == '\n' || *end == '\0') && n >= 0 ? n : -1;
}

static int rev_count(const struct commit_range *r, const char *range, bool merges,
		     const char *field, long *ret, struct sl_error *err)
{
	char *args[] = {
	    "rev-list",	   "--count", merges ? (char *)"--merges" : (char *)"--no-merges",
	    (char *)range, "--",      NULL};
	_cleanup_free_ char *outp = NULL;
	int ex = 0;
	int rc = git(r, args, 4096, &ex, &outp, err);
	if (rc < 0)
		return rc;
	*ret = ex == 0 ? count_of(outp) : -1;
	if (*ret < 0)
		return error_set_path(err, ERR_INVALID, field,
				      "git rev-list could not count the commits of the range "
				      "(exit %d).",
				      ex);
	return 0;
}

/* Parses "<hash> <subject>\n" lines (git log --format='%H %s') into r. */
static int read_commits(struct commit_range *r, char *out, size_t want, const char *field,
			struct sl_error *err)
{
	r->commits = calloc(want ? want : 1, sizeof(*r->commits));
	if (!r->commits)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	char *save = NULL;
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t len = strspn(l, "0123456789abcdef");
		if (r->n >= want || (len != 40 && len != 64) || (l[len] != ' ' && l[len] != '\0'))
			return error_set_path(err, ERR_INVALID, field,
					      "git log listed the range's commits in an unexpected "
					      "form.");
		struct range_commit *c = &r->commits[r->n++];
		memcpy(c->hash, l, len);
		c->hash[len] = '\0';
		snprintf(c->subject, sizeof(c->subject), "%s", l[len] ? l + len + 1 : "");
		/* a cut subject ends on a whole UTF-8 character */
		size_t sl = strlen(c->subject);
		if (sl == COMMIT_RANGE_MAX_SUBJECT) {
			while (sl > 0 && ((unsigned char)c->subject[sl - 1] & 0xC0) == 0x80)
				sl--;
			if (sl > 0 && ((unsigned char)c->subject[sl - 1] & 0x80))
				sl--; /* the lead byte of the cut character */
			c->subject[sl] = '\0';
		}
	}
	if (r->n != want)
		return error_set_path(err, ERR_INVALID, field,
				      "git log listed %zu commits of the range, rev-list %zu.",
				      r->n, want);
	return 0;
}

int commit_range_resolve(struct commit_range *r, size_t max_commits, const char *field,
			 struct sl_error *err)
{
	struct stat st;
	if (!r->tree || r->tree[0] != '/' || stat(r->tree, &st) < 0 || !S_ISDIR(st.st_mode))
		return error_set_path(err, ERR_NOT_FOUND, field,
				      "The tree of the commit range is not a directory.");
	int rc = resolve_ref(r, r->base_ref, "BASE", field, r->base_commit, err);
	if (rc < 0 || (rc = resolve_ref(r, r->head_ref, "HEAD", field, r->head_commit, err)) < 0)
		return rc;
	if (strcmp(r->base_commit, r->head_commit) == 0)
		return error_set_path(err, ERR_INVALID, field,
				      "The range %s..%s holds no commits: both name %.12s.",
				      r->base_ref, r->head_ref, r->base_commit);
	char *anc[] = {"merge-base", "--is-ancestor", r->base_commit, r->head_commit, NULL};
	int ex = 0;
	if ((rc = git(r, anc, 4096, &ex, NULL, err)) < 0)
		return rc;
	if (ex != 0)
		return error_set_path(err, ERR_INVALID, field,
				      "BASE '%s' is not an ancestor of HEAD '%s'%s.", r->base_ref,
				      r->head_ref, ex == 1 ? "" : " (git merge-base failed)");
	char range[200];
	snprintf(range, sizeof(range), "%s..%s", r->base_commit, r->head_commit);
	long merges = 0, n = 0;
	if ((rc = rev_count(r, range, true, field, &merges, err)) < 0 ||
	    (rc = rev_count(r, range, false, field, &n, err)) < 0)
		return rc;
	if (merges > 0)
		return error_set_path(err, ERR_INVALID, field,
				      "The range %s..%s holds %ld merge commit(s): a merge is not "
				      "one step; bisect a linear range (e.g. the branch's own "
				      "commits, or a rebased copy).",
				      r->base_ref, r->head_ref, merges);
	if (n < 1)
		return error_set_path(err, ERR_INVALID, field, "The range %s..%s holds no commits.",
				      r->base_ref, r->head_ref);
	if ((size_t)n > max_commits)
		return error_set_path(err, ERR_INVALID, field,
				      "The range %s..%s holds %ld commits; at most %zu may be "
				      "bisected at once: narrow it.",
				      r->base_ref, r->head_ref, n, max_commits);
	char *log[] = {"log", "--reverse", "--no-merges", "--format=%H %s", range, "--", NULL};
	_cleanup_free_ char *outp = NULL;
	size_t cap = (size_t)n * (66 + COMMIT_RANGE_MAX_SUBJECT * 4) + 4096;
	if ((rc = git(r, log, cap, &ex, &outp, err)) < 0)
		return rc;
	if (ex != 0)
		return error_set_path(err, ERR_INVALID, field,
				      "git log of the range failed (exit %d).", ex);
	if (!outp && !(outp = strdup("")))
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	return read_commits(r, outp, (size_t)n, field, err);
}

int commit_range_patches(const struct commit_range *r, const char *field, json_object **ret_patches,
			 struct sl_error *err)
{
	char range[200];
	snprintf(range, sizeof(range), "%s..%s", r->base_commit, r->head_commit);
	char *args[] = {"format-patch",
			"--stdout",
			"--no-attach",
			"--no-cover-letter",
			"--no-signature",
			"--no-renames",
			"--no-numbered",
			range,
			"--",
			NULL};
	_cleanup_free_ char *outp = NULL;
	int ex = 0;
	int rc = git(r, args, (size_t)PATCHSET_MAX_INPUT_BYTES + 1, &ex, &outp, err);
	if (rc < 0)
		return rc;
	size_t len = outp ? strlen(outp) : 0;
	if (ex != 0)
		return error_set_path(err, ERR_INVALID, field, "git format-patch exited %d.", ex);
	if (len > PATCHSET_MAX_INPUT_BYTES)
		return error_set_path(err, ERR_TOO_LARGE, field,
				      "The range's patches are over %u bytes.",
				      PATCHSET_MAX_INPUT_BYTES);
	_cleanup_json_ json_object *patches = NULL;
	if (len == 0 || (rc = patchset_from_mbox(outp, len, NULL, &patches, err)) < 0) {
		if (len == 0)
			error_set(err, ERR_INVALID, EINVAL, "git format-patch wrote nothing.");
		err->kind = ERR_INVALID;
		snprintf(err->path, sizeof(err->path), "%s", field);
		return -EINVAL;
	}
	if (json_object_array_length(patches) != r->n)
		return error_set_path(err, ERR_INVALID, field,
				      "git format-patch wrote %zu patches for the range's %zu "
				      "commits: each commit must change something.",
				      json_object_array_length(patches), r->n);
	*ret_patches = TAKE_PTR(patches);
	return 0;
}

json_object *commit_range_commits_json(const struct commit_range *r)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < r->n; i++) {
		json_object *c = json_object_new_object();
		json_object_object_add(c, "commit", json_object_new_string(r->commits[i].hash));
		json_object_object_add(c, "subject", json_object_new_string(r->commits[i].subject));
		json_object_array_add(a, c);
	}
	return a;
}

int commit_range_bisect_inputs(struct commit_range *r, size_t max_commits, const char *field,
			       json_object **ret_patches, json_object **ret_commits,
			       char **ret_base, struct sl_error *err)
{
	_cleanup_json_ json_object *patches = NULL;
	int rc = commit_range_resolve(r, max_commits, field, err);
	if (rc < 0 || (rc = commit_range_patches(r, field, &patches, err)) < 0)
		return rc;
	char *base = NULL;
	if (asprintf(&base, "git:%s@%s", r->tree, r->base_commit) < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	*ret_patches = TAKE_PTR(patches);
	*ret_commits = commit_range_commits_json(r);
	*ret_base = base;
	return 0;
}
