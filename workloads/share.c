/* share: per-uid CPU hogs, to measure fair sharing between users.
 *
 *   share --uids 1000:1,1001:3 --seconds 5 --cpus 0
 *
 * Started as root by the agent. For each uid it forks the given number of
 * hogs; each hog joins /sys/fs/cgroup/schedlab/user-<uid>.slice when that
 * group exists, drops to the uid, pins itself to the CPUs and spins. After a
 * warm-up the CPU time of every hog is sampled over the window (per-process
 * CPU clocks, nanoseconds), summed per uid and compared with the share the
 * scheduler should give: weight-proportional between groups (their
 * cpu.weight), equal per task without groups, each hog using at most one CPU.
 *
 * Prints one JSON object: {"tool":"share","metrics":{"cpu_fraction.<uid>":..,
 * "share_error":..},"details":{..}}. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/wl.h"
#include "util/macro.h"

#define SHARE_MAX_UIDS	  64
#define SHARE_MAX_HOGS	  256
#define SHARE_MAX_SECONDS 3600
#define SHARE_GROUP_DIR	  "/sys/fs/cgroup/schedlab"

struct share_uid {
	unsigned uid;
	int hogs;
	bool grouped;	 /* its hogs run in user-<uid>.slice */
	unsigned weight; /* that group's cpu.weight, or 0 */
	double cpu_s;	 /* measured CPU seconds in the window */
	double expected; /* expected fraction of the hogs' CPU time */
};

struct hog {
	pid_t pid;
	size_t uid_index;
	clockid_t clock;
	double t0;
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: share --uids UID:HOGS[,UID:HOGS...] [--seconds S] [--warmup S] [--cpus LIST]\n"
	    "             [--group-dir DIR]\n"
	    "\n"
	    "Runs HOGS busy processes per uid pinned to the CPUs in LIST (e.g. 0 or 0-1,3;\n"
	    "default: all online CPUs) and measures each uid's fraction of their CPU time\n"
	    "over S seconds (default 5) after a warm-up (default 1 s). A hog joins\n"
	    "DIR/user-<uid>.slice (default %s) when it exists.\n"
	    "Prints one JSON object with metrics cpu_fraction.<uid> and share_error.\n",
	    SHARE_GROUP_DIR);
}

static int parse_uids(const char *spec, struct share_uid *uids, size_t *ret_n)
{
	_cleanup_free_ char *copy = strdup(spec);
	char *save = NULL;
	size_t n = 0;
	int total = 0;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		unsigned long uid, hogs = 1;
		if (colon)
			*colon = '\0';
		if (n == SHARE_MAX_UIDS || wl_parse_uint(tok, 2147483646, &uid) < 0 ||
		    (colon && (wl_parse_uint(colon + 1, SHARE_MAX_HOGS, &hogs) < 0 || hogs == 0)))
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if (uids[i].uid == uid)
				return -EINVAL;
		total += (int)hogs;
		if (total > SHARE_MAX_HOGS)
			return -E2BIG;
		uids[n++] = (struct share_uid){.uid = (unsigned)uid, .hogs = (int)hogs};
	}
	if (n == 0)
		return -EINVAL;
	*ret_n = n;
	return 0;
}

/* "0", "0-3", "0,2-3" */
static int parse_cpus(const char *s, cpu_set_t *set)
{
	_cleanup_free_ char *copy = strdup(s);
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	CPU_ZERO(set);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		unsigned long a, b;
		if (dash)
			*dash = '\0';
		if (wl_parse_uint(tok, CPU_SETSIZE - 1, &a) < 0)
			return -EINVAL;
		b = a;
		if (dash && (wl_parse_uint(dash + 1, CPU_SETSIZE - 1, &b) < 0 || b < a))
			return -EINVAL;
		for (unsigned long c = a; c <= b; c++)
			CPU_SET(c, set);
	}
	return CPU_COUNT(set) > 0 ? 0 : -EINVAL;
}

static int read_uint_file(const char *path, unsigned long *ret)
{
	FILE *f = fopen(path, "re");
	unsigned long v;
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%lu", &v);
	fclose(f);
	if (n != 1)
		return -EINVAL;
	*ret = v;
	return 0;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) < 0)
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The hog: never returns. Errors go to stderr; the hog then exits, and the
 * parent notices that it is gone. */
static _Noreturn void hog_main(const struct share_uid *u, const char *group_dir,
			       const cpu_set_t *cpus)
{
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (u->grouped) {
		char path[512];
		snprintf(path, sizeof(path), "%s/user-%u.slice/cgroup.procs", group_dir, u->uid);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0\n", 2) != 2) {
			fprintf(stderr, "share: the hog for uid %u could not join '%s': %s\n",
				u->uid, path, strerror(errno));
			_exit(1);
		}
		close(fd);
	}
	if (geteuid() == 0 && u->uid != 0) {
		if (setgroups(0, NULL) < 0 || setgid(u->uid) < 0 || setuid(u->uid) < 0) {
			fprintf(stderr, "share: the hog could not switch to uid %u: %s\n", u->uid,
				strerror(errno));
			_exit(1);
		}
	}
	if (sched_setaffinity(0, sizeof(*cpus), cpus) < 0) {
		fprintf(stderr, "share: the hog for uid %u could not pin itself: %s\n", u->uid,
			strerror(errno));
		_exit(1);
	}
	for (volatile unsigned long spin = 0;; spin++)
		;
}

/* Expected split of the hogs' CPU time: capacity cpus is shared between the
 * contenders in proportion to their weights, but no contender gets more than
 * its hogs can use (one CPU each); what a capped one cannot use goes to the
 * others (water-filling). A grouped uid is one contender of its cgroup weight;
 * an ungrouped hog is one contender of weight 100 (a nice-0 task, the same as
 * cpu.weight 100). */
static void compute_expected(struct share_uid *uids, size_t n, int ncpus)
{
	struct contender {
		size_t uid_index;
		double weight, cap, alloc;
		bool done;
	} c[SHARE_MAX_HOGS];
	size_t nc = 0;
	double capacity = ncpus, total = 0;

	for (size_t i = 0; i < n; i++) {
		if (uids[i].grouped) {
			c[nc++] = (struct contender){i, uids[i].weight, uids[i].hogs, 0, false};
			continue;
		}
		for (int h = 0; h < uids[i].hogs; h++)
			c[nc++] = (struct contender){i, 100, 1, 0, false};
	}
	for (;;) {
		double wsum = 0;
		bool capped = false;
		for (size_t k = 0; k < nc; k++)
			if (!c[k].done)
				wsum += c[k].weight;
		if (wsum <= 0 || capacity <= 1e-12)
			break;
		/* cap whoever would get more than it can use, then retry */
		for (size_t k = 0; k < nc; k++) {
			if (c[k].done || capacity * c[k].weight / wsum < c[k].cap)
				continue;
			c[k].alloc = c[k].cap;
			c[k].done = true;
			capacity -= c[k].cap;
			capped = true;
		}
		if (capped)
			continue;
		for (size_t k = 0; k < nc; k++)
			if (!c[k].done) {
				c[k].alloc = capacity * c[k].weight / wsum;
				c[k].done = true;
			}
		break;
	}
	for (size_t i = 0; i < n; i++)
		uids[i].expected = 0;
	for (size_t k = 0; k < nc; k++) {
		uids[c[k].uid_index].expected += c[k].alloc;
		total += c[k].alloc;
	}
	for (size_t i = 0; i < n; i++)
		uids[i].expected = total > 0 ? uids[i].expected / total : 0;
}

static void kill_hogs(struct hog *hogs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (hogs[i].pid > 0)
			kill(hogs[i].pid, SIGKILL);
	for (size_t i = 0; i < n; i++)
		if (hogs[i].pid > 0)
			waitpid(hogs[i].pid, NULL, 0);
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The cgroup cpu.weight of each uid's slice under group_dir, where it has
 * one: such a uid is grouped. */
static void read_weights(struct share_uid *uids, size_t nuids, const char *group_dir)
{
	for (size_t i = 0; i < nuids; i++) {
		char path[512];
		unsigned long w = 0;
		snprintf(path, sizeof(path), "%s/user-%u.slice/cpu.weight", group_dir, uids[i].uid);
		if (read_uint_file(path, &w) == 0 && w >= 1 && w <= 10000) {
			uids[i].grouped = true;
			uids[i].weight = (unsigned)w;
		}
	}
}

/* Forks each uid's hogs into hogs (*nhogs of them) with their CPU clocks;
 * on a failure (said on stderr) the hogs started are killed and it is -1. */
static int start_hogs(struct share_uid *uids, size_t nuids, const char *group_dir,
		      const cpu_set_t *cpus, struct hog *hogs, size_t *nhogs)
{
	for (size_t i = 0; i < nuids; i++) {
		for (int h = 0; h < uids[i].hogs; h++) {
			pid_t pid = fork();
			if (pid < 0) {
				fprintf(stderr, "share: fork failed: %s.\n", strerror(errno));
				kill_hogs(hogs, *nhogs);
				return -1;
			}
			if (pid == 0)
				hog_main(&uids[i], group_dir, cpus);
			hogs[*nhogs] = (struct hog){.pid = pid, .uid_index = i};
			if (clock_getcpuclockid(pid, &hogs[*nhogs].clock) != 0) {
				(*nhogs)++;
				fprintf(stderr, "share: no CPU clock for hog %d.\n", (int)pid);
				kill_hogs(hogs, *nhogs);
				return -1;
			}
			(*nhogs)++;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"uids", required_argument, NULL, 'u'},
	    {"seconds", required_argument, NULL, 's'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"cpus", required_argument, NULL, 'c'},
	    {"group-dir", required_argument, NULL, 'g'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct share_uid uids[SHARE_MAX_UIDS];
	struct hog hogs[SHARE_MAX_HOGS];
	const char *uid_spec = NULL, *cpu_spec = NULL, *group_dir = SHARE_GROUP_DIR;
	double seconds = 5, warmup = 1, total = 0, err_max = 0;
	size_t nuids = 0, nhogs = 0;
	cpu_set_t cpus;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
		switch (c) {
		case 'u':
			uid_spec = optarg;
			break;
		case 's':
		case 'w': {
			double v;
			if (wl_parse_double(optarg, c == 's' ? 0.1 : 0, SHARE_MAX_SECONDS, &v) <
			    0) {
				fprintf(stderr, "share: invalid --%s '%s'.\n",
					c == 's' ? "seconds" : "warmup", optarg);
				return 2;
			}
			*(c == 's' ? &seconds : &warmup) = v;
			break;
		}
		case 'c':
			cpu_spec = optarg;
			break;
		case 'g':
			group_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !uid_spec) {
		usage(stderr);
		return 2;
	}
	if (parse_uids(uid_spec, uids, &nuids) < 0) {
		fprintf(stderr,
			"share: invalid --uids '%s': expected UID:HOGS[,...] with distinct "
			"uids and at most %d hogs in all.\n",
			uid_spec, SHARE_MAX_HOGS);
		return 2;
	}
	if (cpu_spec) {
		if (parse_cpus(cpu_spec, &cpus) < 0) {
			fprintf(stderr, "share: invalid --cpus '%s'.\n", cpu_spec);
			return 2;
		}
	} else if (sched_getaffinity(0, sizeof(cpus), &cpus) < 0) {
		fprintf(stderr, "share: sched_getaffinity failed: %s.\n", strerror(errno));
		return 1;
	}

	read_weights(uids, nuids, group_dir);
	compute_expected(uids, nuids, CPU_COUNT(&cpus));

	if (start_hogs(uids, nuids, group_dir, &cpus, hogs, &nhogs) < 0)
		return 1;

	sleep_s(warmup);
	double w0 = now_s(CLOCK_MONOTONIC);
	for (size_t i = 0; i < nhogs; i++)
		hogs[i].t0 = now_s(hogs[i].clock);
	sleep_s(seconds);
	double w1 = now_s(CLOCK_MONOTONIC);
	for (size_t i = 0; i < nhogs; i++) {
		double t1 = now_s(hogs[i].clock);
		if (isnan(t1) || isnan(hogs[i].t0)) {
			/* the hog died: its reason is on stderr */
			fprintf(stderr, "share: hog %d (uid %u) exited during the measurement.\n",
				(int)hogs[i].pid, uids[hogs[i].uid_index].uid);
			kill_hogs(hogs, nhogs);
			return 1;
		}
		uids[hogs[i].uid_index].cpu_s += t1 - hogs[i].t0;
		total += t1 - hogs[i].t0;
	}
	kill_hogs(hogs, nhogs);
	if (total <= 0) {
		fprintf(stderr, "share: the hogs got no CPU time in %.1f s.\n", seconds);
		return 1;
	}

	json_object *metrics = json_object_new_object(), *details = json_object_new_object();
	json_object *expected = json_object_new_object(), *cpu_s = json_object_new_object(),
		    *nh = json_object_new_object(), *weights = json_object_new_object();
	for (size_t i = 0; i < nuids; i++) {
		char key[48];
		double frac = uids[i].cpu_s / total;
		snprintf(key, sizeof(key), "cpu_fraction.%u", uids[i].uid);
		json_object_object_add(metrics, key, wl_json_double(frac, 4));
		snprintf(key, sizeof(key), "%u", uids[i].uid);
		json_object_object_add(expected, key, wl_json_double(uids[i].expected, 4));
		json_object_object_add(cpu_s, key, wl_json_double(uids[i].cpu_s, 4));
		json_object_object_add(nh, key, json_object_new_int(uids[i].hogs));
		json_object_object_add(weights, key,
				       uids[i].grouped ? json_object_new_int((int)uids[i].weight)
						       : NULL);
		if (uids[i].expected > 0) {
			double e = fabs(frac / uids[i].expected - 1);
			if (e > err_max)
				err_max = e;
		}
	}
	json_object_object_add(metrics, "share_error", wl_json_double(err_max, 4));
	json_object_object_add(details, "expected_fraction", expected);
	json_object_object_add(details, "cpu_seconds", cpu_s);
	json_object_object_add(details, "hogs", nh);
	json_object_object_add(details, "group_weight", weights);
	json_object_object_add(
	    details, "expected_from",
	    json_object_new_string("cgroup cpu.weight per grouped uid; equal "
				   "per task otherwise; at most one CPU per hog"));
	json_object_object_add(details, "cpus", json_object_new_int(CPU_COUNT(&cpus)));
	json_object_object_add(details, "seconds", wl_json_double((w1 - w0), 4));
	json_object_object_add(details, "warmup_seconds", wl_json_double(warmup, 4));
	json_object_object_add(details, "cpu_utilization",
			       wl_json_double(total / (w1 - w0) / CPU_COUNT(&cpus), 4));
	wl_print_result("share", metrics, details);
	return 0;
}
