/* Sched features, tunables and per-uid groups; see sched.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/sched.h"
#include "agent/util.h"

/* The features file lists about 30 names; debugfs files are small. */
#define SCHED_READ_MAX (64 * 1024)

unsigned agent_sched_share_to_weight(long long share)
{
	/* past 1024 * 10000 the result clamps anyway; this also keeps
	 * share * 100 from overflowing */
	if (share >= 1024LL * 10000)
		return 10000;
	if (share <= 0)
		return 1;
	long long w = (share * 100 + 512) / 1024;
	if (w < 1)
		return 1;
	if (w > 10000)
		return 10000;
	return (unsigned)w;
}

bool agent_sched_features_has(const char *text, const char *feature)
{
	size_t n = strlen(feature);
	const char *p = text;

	if (n == 0)
		return false;
	while ((p = strstr(p, feature))) {
		bool start = p == text || strchr(" \t\r\n", p[-1]);
		bool end = p[n] == '\0' || strchr(" \t\r\n", p[n]);
		if (start && end)
			return true;
		p++;
	}
	return false;
}

int agent_sched_apply_feature(const char *root, const char *feature, char *msg, size_t msglen)
{
	_cleanup_free_ char *path = agent_path(root, SCHED_FEATURES_PATH);
	_cleanup_free_ char *line = NULL;
	_cleanup_free_ char *text = NULL;
	int r;

	if (asprintf(&line, "%s\n", feature) < 0)
		return -ENOMEM;
	r = agent_write_file(path, line, 0);
	if (r == -EINVAL) {
		snprintf(msg, msglen, "feature '%s' is not known to this kernel", feature);
		return r;
	}
	if (r < 0) {
		snprintf(msg, msglen, "feature '%s' could not be written to '%s': %s", feature,
			 path, strerror(-r));
		return r;
	}
	r = agent_read_file(path, SCHED_READ_MAX, &text, NULL);
	if (r < 0) {
		snprintf(msg, msglen, "feature '%s' could not be read back from '%s': %s", feature,
			 path, strerror(-r));
		return r;
	}
	if (!agent_sched_features_has(text, feature)) {
		snprintf(msg, msglen, "feature '%s' was written but does not read back from '%s'",
			 feature, path);
		return -ENODATA;
	}
	return 0;
}

/* Parses the leading integer of a debugfs or cgroup file's text. */
static int parse_leading_ll(const char *text, long long *ret)
{
	char *end = NULL;

	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (errno || end == text)
		return -EINVAL;
	while (*end == ' ' || *end == '\n')
		end++;
	if (*end != '\0')
		return -EINVAL;
	*ret = v;
	return 0;
}

int agent_sched_apply_tunable(const char *root, const char *name, long long value, char *msg,
			      size_t msglen)
{
	_cleanup_free_ char *dir = agent_path(root, SCHED_DEBUG_DIR);
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *text = NULL;
	char num[32];
	long long back;
	int r;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	snprintf(num, sizeof(num), "%lld\n", value);
	r = agent_write_file(path, num, 0);
	if (r == -ENOENT) {
		snprintf(msg, msglen, "tunable '%s' does not exist in this kernel (no file '%s')",
			 name, path);
		return r;
	}
	if (r < 0) {
		snprintf(msg, msglen, "tunable '%s' could not be set to '%lld' in '%s': %s", name,
			 value, path, strerror(-r));
		return r;
	}
	r = agent_read_file(path, SCHED_READ_MAX, &text, NULL);
	if (r < 0) {
		snprintf(msg, msglen, "tunable '%s' could not be read back from '%s': %s", name,
			 path, strerror(-r));
		return r;
	}
	if (parse_leading_ll(text, &back) < 0 || back != value) {
		snprintf(msg, msglen, "tunable '%s' reads back as '%.32s' after writing '%lld'",
			 name, text, value);
		return -ENODATA;
	}
	return 0;
}

/* O_CREAT: a no-op on cgroupfs, where these files always exist, and what lets
 * host mode work on a plain directory tree. */
static int cgroup_write(const char *path, const char *s)
{
	return agent_write_file(path, s, O_CREAT);
}

int agent_sched_cgroup_prepare(const char *root, char *msg, size_t msglen)
{
	static const char *const levels[] = {SCHED_CGROUP_ROOT, SCHED_CGROUP_DIR};

	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *dir = agent_path(root, levels[i]);
		_cleanup_free_ char *ctl = NULL;
		int r;

		if (i > 0 && mkdir(dir, 0755) < 0 && errno != EEXIST) {
			snprintf(msg, msglen, "cgroup '%s' could not be created: %s", dir,
				 strerror(errno));
			return -errno;
		}
		if (asprintf(&ctl, "%s/cgroup.subtree_control", dir) < 0)
			return -ENOMEM;
		r = cgroup_write(ctl, "+cpu");
		if (r < 0) {
			snprintf(msg, msglen, "the cpu controller could not be enabled in '%s': %s",
				 ctl, strerror(-r));
			return r;
		}
	}
	return 0;
}

char *agent_sched_cgroup_procs_path(const char *root, uid_t uid)
{
	_cleanup_free_ char *dir = agent_path(root, SCHED_CGROUP_DIR);
	char *p;

	if (asprintf(&p, "%s/user-%u.slice/cgroup.procs", dir, (unsigned)uid) < 0)
		abort();
	return p;
}

int agent_sched_cgroup_add_uid(const char *root, uid_t uid, unsigned weight, char *msg,
			       size_t msglen)
{
	_cleanup_free_ char *base = agent_path(root, SCHED_CGROUP_DIR);
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *wpath = NULL;
	_cleanup_free_ char *text = NULL;
	char num[16];
	long long back;
	int r;

	if (asprintf(&dir, "%s/user-%u.slice", base, (unsigned)uid) < 0 ||
	    asprintf(&wpath, "%s/cpu.weight", dir) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(msg, msglen, "cgroup '%s' for uid %u could not be created: %s", dir,
			 (unsigned)uid, strerror(-r));
		return r;
	}
	snprintf(num, sizeof(num), "%u\n", weight);
	r = cgroup_write(wpath, num);
	if (r < 0) {
		snprintf(msg, msglen, "cpu.weight '%u' for uid %u could not be written to '%s': %s",
			 weight, (unsigned)uid, wpath, strerror(-r));
		return r;
	}
	r = agent_read_file(wpath, SCHED_READ_MAX, &text, NULL);
	if (r < 0) {
		snprintf(msg, msglen, "cpu.weight for uid %u could not be read back from '%s': %s",
			 (unsigned)uid, wpath, strerror(-r));
		return r;
	}
	if (parse_leading_ll(text, &back) < 0 || back != (long long)weight) {
		snprintf(msg, msglen,
			 "cpu.weight for uid %u reads back as '%.32s' after writing '%u'",
			 (unsigned)uid, text, weight);
		return -ENODATA;
	}
	return 0;
}
