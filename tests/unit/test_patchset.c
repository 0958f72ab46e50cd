/* patchset_from_mbox(): real git format-patch output (a series with a cover
 * letter, one patch, a plain git diff; tests/data/patchset/), a list
 * archive's mboxrd, CRLF, the errors (NUL bytes, no diff, encodings, too
 * large, too many patches) and the names it makes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "job/job.h"
#include "job/patchset.h"
#include "util/fs.h"

static char *fixture(const char *name, size_t *ret_len)
{
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *dir = fs_path_join(root, "tests/data/patchset");
	_cleanup_free_ char *path = fs_path_join(dir, name);
	char *data = NULL;
	struct sl_error err = {0};
	if (fs_read_file(path, 1 << 20, &data, ret_len, &err) < 0)
		fail_msg("%s", err.message);
	return data;
}

static json_object *split_ok(const char *data, size_t len, const char *default_name,
			     size_t expect_n)
{
	json_object *out = NULL;
	struct sl_error err = {0};
	if (patchset_from_mbox(data, len, default_name, &out, &err) < 0)
		fail_msg("unexpected error: %s", err.message);
	assert_non_null(out);
	assert_int_equal(json_object_array_length(out), expect_n);
	return out;
}

static void split_fails(const char *data, size_t len, enum error_kind kind, const char *needle)
{
	json_object *out = NULL;
	struct sl_error err = {0};
	int r = patchset_from_mbox(data, len, "x.patch", &out, &err);
	if (r >= 0)
		fail_msg("expected an error containing '%s'", needle);
	assert_null(out);
	assert_int_equal(err.kind, kind);
	if (!strstr(err.message, needle))
		fail_msg("message '%s' lacks '%s'", err.message, needle);
}

static const char *name_of(json_object *patches, size_t i)
{
	json_object *p = json_object_array_get_idx(patches, i), *v = NULL;
	assert_true(json_object_object_get_ex(p, "name", &v));
	return json_object_get_string(v);
}

static const char *content_of(json_object *patches, size_t i)
{
	json_object *p = json_object_array_get_idx(patches, i), *v = NULL;
	assert_true(json_object_object_get_ex(p, "content", &v));
	return json_object_get_string(v);
}

/* A name the job schema's file_name pattern accepts. */
static void assert_safe_name(const char *name)
{
	size_t n = strlen(name);
	assert_true(n >= 1 && n <= PATCHSET_MAX_NAME);
	assert_true((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
		    (name[0] >= '0' && name[0] <= '9'));
	for (const char *c = name; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+",
			    *c))
			fail_msg("name '%s' has '%c'", name, *c);
}

static void test_series_with_cover_letter(void **state)
{
	(void)state;
	size_t len = 0;
	_cleanup_free_ char *data = fixture("series-cover.mbox", &len);
	_cleanup_json_ json_object *p = split_ok(data, len, "series.mbox", 2);
	assert_string_equal(name_of(p, 0), "0001-sched-rt-comment-the-first-counter.patch");
	/* The folded subject is unfolded, then cut at a word within 64. */
	assert_string_equal(
	    name_of(p, 1),
	    "0002-sched-rt-comment-the-third-counter-with-a-very-long-subject-line.patch");
	assert_true(strlen(name_of(p, 1)) - strlen("0002-.patch") <= PATCHSET_MAX_SLUG);
	/* Each patch is its own whole message, From_ line first, nothing of
	 * the cover letter or of the other patch. */
	const char *c0 = content_of(p, 0), *c1 = content_of(p, 1);
	assert_true(strncmp(c0, "From 6d401d09", 13) == 0);
	assert_non_null(strstr(c0, "+static int rt_a; /* first */\n"));
	assert_null(strstr(c0, "third"));
	assert_null(strstr(c0, "BLURB"));
	/* A commit message line starting with "From " does not split. */
	assert_non_null(strstr(c0, "\nFrom the scheduler's point of view"));
	assert_non_null(strstr(c0, "\nFrom 1234 Mon Sep 17 00:00:00 2001 is not a separator"));
	assert_true(strncmp(c1, "From de35d1eb", 13) == 0);
	assert_non_null(strstr(c1, "+static int rt_c; /* third */\n"));
	assert_null(strstr(c1, "BLURB"));
}

static void test_single_format_patch(void **state)
{
	(void)state;
	size_t len = 0;
	_cleanup_free_ char *data = fixture("single-format-patch.patch", &len);
	_cleanup_json_ json_object *p = split_ok(data, len, "my fix (v2).patch", 1);
	/* One patch takes the caller's name, made safe. */
	assert_string_equal(name_of(p, 0), "my-fix-v2-.patch");
	assert_string_equal(content_of(p, 0), data);
	/* Without a default name it is named after its subject. */
	_cleanup_json_ json_object *q = split_ok(data, len, NULL, 1);
	assert_string_equal(name_of(q, 0), "0001-sched-rt-comment-the-first-counter.patch");
}

static void test_plain_diff(void **state)
{
	(void)state;
	size_t len = 0;
	_cleanup_free_ char *data = fixture("plain.diff", &len);
	_cleanup_json_ json_object *p = split_ok(data, len, "plain.diff", 1);
	assert_string_equal(name_of(p, 0), "plain.diff");
	assert_string_equal(content_of(p, 0), data);
	_cleanup_json_ json_object *q = split_ok(data, len, NULL, 1);
	assert_string_equal(name_of(q, 0), "0001-patch.patch");
	/* A diff without git's header: "--- ", "+++ ", "@@ -". */
	const char *u = "--- a/f.c\n+++ b/f.c\n@@ -1 +1 @@\n-a\n+b\n";
	_cleanup_json_ json_object *r = split_ok(u, strlen(u), "u.patch", 1);
	assert_string_equal(content_of(r, 0), u);
}

static void test_list_archive_mboxrd(void **state)
{
	(void)state;
	size_t len = 0;
	_cleanup_free_ char *data = fixture("list-archive.mboxrd", &len);
	_cleanup_json_ json_object *p = split_ok(data, len, NULL, 2);
	/* "Re: [PATCH v2 0/2]" is a cover letter (reply), dropped. */
	assert_string_equal(name_of(p, 0), "0001-sched-rt-quote-a-line.patch");
	assert_string_equal(name_of(p, 1), "0002-sched-rt-a-plain-hunk-with-no-git-header.patch");
	const char *c0 = content_of(p, 0);
	/* mboxrd quoting undone: one '>' less. */
	assert_non_null(strstr(c0, "\nFrom here on the commit message was quoted"));
	assert_non_null(strstr(c0, "\n>From twice quoted.\n"));
	assert_null(strstr(c0, ">>From"));
	assert_null(strstr(c0, "A reply to the cover letter"));
}

static void test_crlf(void **state)
{
	(void)state;
	size_t len = 0;
	_cleanup_free_ char *data = fixture("series-cover.mbox", &len);
	_cleanup_free_ char *crlf = malloc(2 * len + 1);
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n')
			crlf[n++] = '\r';
		crlf[n++] = data[i];
	}
	_cleanup_json_ json_object *p = split_ok(crlf, n, NULL, 2);
	assert_string_equal(name_of(p, 0), "0001-sched-rt-comment-the-first-counter.patch");
	for (size_t i = 0; i < 2; i++)
		assert_null(strchr(content_of(p, i), '\r'));
	assert_non_null(strstr(content_of(p, 1), "+static int rt_c; /* third */\n"));
	/* A file converted twice: every CR before the LF goes; a lone CR stays. */
	const char *twice = "--- a/f\r\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-a\r\n+b\rc\r\r\n";
	_cleanup_json_ json_object *q = split_ok(twice, strlen(twice), "t.patch", 1);
	assert_string_equal(content_of(q, 0), "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\rc\n");
}

static void test_errors(void **state)
{
	(void)state;
	const char nul[] = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\0\n+b\n";
	split_fails(nul, sizeof(nul) - 1, ERR_INVALID, "NUL byte at offset 49");
	const char *prose = "Just some text.\nNo diff here.\n";
	split_fails(prose, strlen(prose), ERR_INVALID, "no diff");
	split_fails("", 0, ERR_INVALID, "no diff");
	size_t len = 0;
	_cleanup_free_ char *series = fixture("series-cover.mbox", &len);
	/* The cover letter alone. */
	const char *second = strstr(series + 1, "\nFrom 6d401d09");
	assert_non_null(second);
	split_fails(series, (size_t)(second - series) + 1, ERR_INVALID, "cover letter");
	const char *latin1 = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+\xe9\n";
	split_fails(latin1, strlen(latin1), ERR_INVALID, "not valid UTF-8 (line 5");
	const char *qp = "From x@y Thu Jan  1 00:00:00 1970\nSubject: [PATCH] a\n"
			 "Content-Transfer-Encoding: quoted-printable\n\n"
			 "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a=3D1\n+b=3D2\n";
	split_fails(qp, strlen(qp), ERR_INVALID, "encoded as quoted-printable");
	const char *mp = "From x@y Thu Jan  1 00:00:00 1970\nSubject: [PATCH] a\n"
			 "Content-Type: multipart/mixed; boundary=\"b\"\n\n--b\n";
	split_fails(mp, strlen(mp), ERR_INVALID, "multipart");
}

static void test_too_large(void **state)
{
	(void)state;
	const struct job_limits *lim = job_default_limits();
	/* One patch over the per-patch limit. */
	const char *head = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+";
	size_t n = strlen(head) + lim->max_patch_bytes + 2;
	_cleanup_free_ char *big = malloc(n + 1);
	memcpy(big, head, strlen(head));
	memset(big + strlen(head), 'x', n - strlen(head) - 1);
	big[n - 1] = '\n';
	big[n] = '\0';
	split_fails(big, n, ERR_TOO_LARGE, "over the limit of 4194304 bytes");
	/* The whole input over PATCHSET_MAX_INPUT_BYTES, checked before reading. */
	split_fails(big, (size_t)PATCHSET_MAX_INPUT_BYTES + 1, ERR_TOO_LARGE,
		    "over the limit of 16777216 bytes");
}

static void test_too_many_patches(void **state)
{
	(void)state;
	const struct job_limits *lim = job_default_limits();
#define MSG                                                                                        \
	"From 0000 Mon Sep 17 00:00:00 2001\nSubject: [PATCH %d/%d] p\n\n"                         \
	"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
	for (int count = lim->max_patches; count <= lim->max_patches + 1; count++) {
		size_t cap = (size_t)(count + 1) * 128, n = 0;
		_cleanup_free_ char *mbox = malloc(cap);
		for (int i = 1; i <= count; i++)
			n += (size_t)snprintf(mbox + n, cap - n, MSG, i, count);
		if (count == lim->max_patches) {
			_cleanup_json_ json_object *p = split_ok(mbox, n, NULL, (size_t)count);
			assert_string_equal(name_of(p, 0), "0001-p.patch");
			assert_string_equal(name_of(p, (size_t)count - 1), "0200-p.patch");
		} else
			split_fails(mbox, n, ERR_TOO_LARGE, "more than 200 patches");
	}
}

static void test_safe_names(void **state)
{
	(void)state;
	const char *msg = "From 0000 Mon Sep 17 00:00:00 2001\n"
			  "Subject: [RFC PATCH v3 1/1] ../../etc/passwd: sched/fair \xc3\xbc"
			  "ber $(rm -rf) `x` 'q' \"w\" & more; a/b\\c\n\n"
			  "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";
	_cleanup_json_ json_object *p = split_ok(msg, strlen(msg), NULL, 1);
	const char *name = name_of(p, 0);
	assert_safe_name(name);
	assert_true(strncmp(name, "0001-", 5) == 0);
	assert_null(strstr(name, "/"));
	assert_string_equal(name, "0001-etc-passwd-sched-fair-ber-rm-rf-x-q-w-more-a-b-c.patch");
	/* A default name with directories and dots is made safe as well. */
	const char *d = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";
	_cleanup_json_ json_object *q = split_ok(d, strlen(d), "../.hidden/evil name.patch", 1);
	assert_safe_name(name_of(q, 0));
	assert_string_equal(name_of(q, 0), "hidden-evil-name.patch");
	/* A name of nothing safe falls back to a numbered one. */
	_cleanup_json_ json_object *r = split_ok(d, strlen(d), "../..", 1);
	assert_string_equal(name_of(r, 0), "0001-patch.patch");
	/* patchset_safe_name: bounded, trimmed. */
	char longtext[400];
	memset(longtext, 'a', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	_cleanup_free_ char *cut = patchset_safe_name(longtext, PATCHSET_MAX_NAME);
	assert_int_equal(strlen(cut), PATCHSET_MAX_NAME);
	_cleanup_free_ char *empty = patchset_safe_name("--..", 10);
	assert_string_equal(empty, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_series_with_cover_letter),
	    cmocka_unit_test(test_single_format_patch),
	    cmocka_unit_test(test_plain_diff),
	    cmocka_unit_test(test_list_archive_mboxrd),
	    cmocka_unit_test(test_crlf),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_too_large),
	    cmocka_unit_test(test_too_many_patches),
	    cmocka_unit_test(test_safe_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
