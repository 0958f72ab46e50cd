/* A commit range of a local git tree, "git:TREE@BASE..HEAD" (`schedlab
 * test --range`): the commits a bisection steps through, one step per
 * commit, each named by its hash and subject. parse checks the text (no git runs),
 * resolve asks git (both refs name commits, BASE is an ancestor of HEAD,
 * no merge commits, at most max_commits commits) and lists the commits
 * oldest first, patches writes them as the inline patches a job carries.
 * Every error names the field it was given (a CLI option or a JSON path).
 * docs/testing-your-patch.md "A commit range" is the user's side. */
#pragma once

#include <stddef.h>
#include <json-c/json.h>

#include "job/source_policy.h"
#include "util/error.h"

/* The longest subject kept per commit (bytes; longer ones are cut). */
#define COMMIT_RANGE_MAX_SUBJECT 200

struct range_commit {
	char hash[65]; /* full hex object name (sha1 40, sha256 64) */
	char subject[COMMIT_RANGE_MAX_SUBJECT + 1];
};

struct commit_range {
	char *tree; /* as given (malloc'd); the caller makes it absolute */
	char base_ref[JOB_SOURCE_REF_MAX + 1], head_ref[JOB_SOURCE_REF_MAX + 1];
	/* filled by commit_range_resolve() */
	char base_commit[65], head_commit[65];
	struct range_commit *commits; /* n, oldest first */
	size_t n;
};

/* Parses "git:TREE@BASE..HEAD" into r (zeroed first): TREE non-empty,
 * BASE and HEAD refs job_source_ref_valid() accepts and not starting with
 * '.' or '/' (so never an option, a "..." or a path). ERR_INVALID at field. */
int commit_range_parse(const char *text, const char *field, struct commit_range *r,
		       struct sl_error *err);

/* The same from its parts (a tree and two refs given apart): TREE
 * non-empty, the refs checked as commit_range_parse's. */
int commit_range_set(struct commit_range *r, const char *tree, const char *base_ref,
		     const char *head_ref, const char *field, struct sl_error *err);

/* Resolves a parsed range whose tree is an absolute directory: fills
 * base_commit, head_commit and commits. Refused (ERR_INVALID or
 * ERR_NOT_FOUND at field): a tree that is not a directory, a ref that
 * names no commit, BASE not an ancestor of HEAD, an empty range, merge
 * commits in it (a merge is not one step: bisect a linear range), more
 * than max_commits commits. */
int commit_range_resolve(struct commit_range *r, size_t max_commits, const char *field,
			 struct sl_error *err);

/* The resolved range's commits as a new JSON array of inline patches
 * ({"name", "content"}, oldest first, one per commit), from `git
 * format-patch` without renames, attachments or signature, so that a
 * commit's patch (and the kernel cache key built from it) depends on the
 * commit only. ERR_INVALID at field when git's patches are not one per
 * commit (e.g. a commit that changes nothing). */
int commit_range_patches(const struct commit_range *r, const char *field, json_object **ret_patches,
			 struct sl_error *err);

/* The resolved commits as a new JSON array [{"commit", "subject"}]. */
json_object *commit_range_commits_json(const struct commit_range *r);

/* What a bisection over a parsed range whose tree is an absolute
 * directory needs (the CLI's --range, a change point's commit range):
 * resolves it (commit_range_resolve, at most max_commits commits) and
 * gives its commits as inline patches (*ret_patches, commit_range_patches),
 * the commits themselves (*ret_commits, commit_range_commits_json) and the
 * base they apply to, "git:TREE@<BASE's commit>" (*ret_base, malloc'd).
 * The steps are that base plus the first k commits' patches, so all of
 * them share one source tree and build incrementally (a source per commit
 * would be a cold build per step: kernel/kbuild_key.c keys a tree by its
 * commit); for a linear range that is the tree at commit k. Errors as
 * resolve's and patches'. */
int commit_range_bisect_inputs(struct commit_range *r, size_t max_commits, const char *field,
			       json_object **ret_patches, json_object **ret_commits,
			       char **ret_base, struct sl_error *err);

void commit_range_done(struct commit_range *r);
