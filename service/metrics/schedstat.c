/* schedstat.* metrics: the difference between two /proc/schedstat snapshots
 * the agent took right before and after a workload on a kernel built with
 * "schedstat": true (docs/workloads.md "schedstat"). Both snapshots are
 * untrusted text from the guest; everything is bounded and checked:
 *
 *   version 15                      (6.1; 6.12 prints 16)
 *   timestamp 4295123456
 *   cpu0 Y 0 S G W L T D P          9 counters (kernel/sched/stats.c)
 *   domain0 00000003 <36 counters>  8 x 3 load-balance counters, 12 more
 *
 * Version 15 orders the three load-balance idle types idle, busy, newly
 * idle; version 16 (enum cpu_idle_type changed) busy, idle, newly idle. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/json_get.h"

#define SS_MAX_CPUS    64
#define SS_MAX_DOMAINS 8
#define SS_CPU_FIELDS  9
#define SS_DOM_FIELDS  36
#define SS_MAX_LINE    1024

/* cpu line fields */
enum { SS_SCHED_COUNT = 2, SS_TTWU = 4, SS_TTWU_LOCAL = 5, SS_RUN_DELAY = 7 };
/* domain fields: lb counters at itype * 8 + k, then the 12 others */
enum { SS_LB_COUNT = 0, SS_LB_FAILED = 2, SS_LB_GAINED = 4 };
enum { SS_ALB_PUSHED = 26, SS_TTWU_WAKE_REMOTE = 33, SS_TTWU_MOVE_AFFINE = 34 };

struct ss_cpu {
	unsigned long long v[SS_CPU_FIELDS];
	unsigned long long dom[SS_MAX_DOMAINS][SS_DOM_FIELDS];
	int n_dom;
};

struct ss_snap {
	int version;
	int n_cpus;
	struct ss_cpu cpu[SS_MAX_CPUS];
};

/* Parses n unsigned decimal fields from s (space-separated, nothing after). */
static int ss_fields(const char *s, unsigned long long *out, int n)
{
	for (int i = 0; i < n; i++) {
		while (*s == ' ')
			s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		char *end;
		errno = 0;
		out[i] = strtoull(s, &end, 10);
		if (errno || (*end != ' ' && *end != '\0') || end - s > 20)
			return -EINVAL;
		s = end;
	}
	return *s == '\0' ? 0 : -EINVAL;
}

struct ss_parse {
	struct ss_snap *snap;
	const char *what;
	int line_no;
	bool seen_version;
	char why[160];
};

static int ss_line(const char *line, size_t len, void *ctx)
{
	struct ss_parse *p = ctx;
	struct ss_snap *s = p->snap;
	char buf[SS_MAX_LINE];
	p->line_no++;
	if (len == 0)
		return 0;
	if (len >= sizeof(buf)) {
		snprintf(p->why, sizeof(p->why), "line %d is longer than %d bytes", p->line_no,
			 SS_MAX_LINE - 1);
		return 1;
	}
	memcpy(buf, line, len);
	buf[len] = '\0';
	int n = 0;
	char tail;
	if (!p->seen_version) {
		if (sscanf(buf, "version %d%c", &s->version, &tail) != 1 ||
		    (s->version != 15 && s->version != 16)) {
			snprintf(p->why, sizeof(p->why),
				 "the first line is not 'version 15' or 'version 16'");
			return 1;
		}
		p->seen_version = true;
		return 0;
	}
	if (strncmp(buf, "timestamp ", 10) == 0)
		return 0;
	int idx;
	if (sscanf(buf, "cpu%d %n", &idx, &n) == 1 && n > 0) {
		if (idx != s->n_cpus || s->n_cpus >= SS_MAX_CPUS) {
			snprintf(p->why, sizeof(p->why),
				 "line %d: cpu%d is out of order or beyond %d CPUs", p->line_no,
				 idx, SS_MAX_CPUS);
			return 1;
		}
		if (ss_fields(buf + n, s->cpu[idx].v, SS_CPU_FIELDS) < 0) {
			snprintf(p->why, sizeof(p->why),
				 "line %d: cpu%d does not have %d whole numbers", p->line_no, idx,
				 SS_CPU_FIELDS);
			return 1;
		}
		s->n_cpus++;
		return 0;
	}
	char mask[160];
	if (sscanf(buf, "domain%d %159[0-9a-f,] %n", &idx, mask, &n) == 2 && n > 0) {
		struct ss_cpu *c = s->n_cpus ? &s->cpu[s->n_cpus - 1] : NULL;
		if (!c || idx != c->n_dom || c->n_dom >= SS_MAX_DOMAINS) {
			snprintf(p->why, sizeof(p->why),
				 "line %d: domain%d is out of order, before any CPU or beyond %d "
				 "levels",
				 p->line_no, idx, SS_MAX_DOMAINS);
			return 1;
		}
		if (ss_fields(buf + n, c->dom[idx], SS_DOM_FIELDS) < 0) {
			snprintf(p->why, sizeof(p->why),
				 "line %d: domain%d does not have %d whole numbers", p->line_no,
				 idx, SS_DOM_FIELDS);
			return 1;
		}
		c->n_dom++;
		return 0;
	}
	snprintf(p->why, sizeof(p->why), "line %d is neither a cpu nor a domain line", p->line_no);
	return 1;
}

static int ss_parse_snap(const char *text, size_t len, const char *what, struct ss_snap *s,
			 struct sl_error *err)
{
	struct ss_parse p = {.snap = s, .what = what};
	memset(s, 0, sizeof(*s));
	int r = metrics_each_line(text, len, what, ss_line, &p, err);
	if (r < 0)
		return r;
	if (r == 1)
		return error_set(err, ERR_INVALID, 0, "The %s does not parse: %s.", what, p.why);
	if (!p.seen_version || s->n_cpus == 0)
		return error_set(err, ERR_INVALID, 0, "The %s has no version or no CPU.", what);
	return 0;
}

/* after - before of one counter, or -1 when it went down. */
/* Every schedstat.* metric (per CPU, per domain, the sums and the tasks')
 * counters) says where the time went, not how good a kernel is: more
 * migrations or wake-ups are neither better nor worse by themselves, so
 * none has a direction; they explain a change in the tool's own metrics. */
static const struct metrics_name schedstat_names[] = {
    {"schedstat.*", "none", false},
};

const struct metrics_name *metrics_schedstat_name(const char *metric)
{
	return metrics_name_find(schedstat_names, ELEMENTSOF(schedstat_names), metric);
}

static double ss_delta(unsigned long long before, unsigned long long after)
{
	return after < before ? -1 : (double)(after - before);
}

static void ss_put(json_object *m, const char *name, double v)
{
	json_object_object_add(m, name, metrics_number(v));
}

int metrics_schedstat(const char *before, size_t before_len, const char *after, size_t after_len,
		      json_object *metrics, struct sl_error *err)
{
	_cleanup_free_ struct ss_snap *a = calloc(1, sizeof(*a));
	_cleanup_free_ struct ss_snap *b = calloc(1, sizeof(*b));
	if (!a || !b)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r = ss_parse_snap(before, before_len, "schedstat snapshot before the workload", a, err);
	if (r == 0)
		r = ss_parse_snap(after, after_len, "schedstat snapshot after the workload", b,
				  err);
	if (r < 0)
		return r;
	if (a->version != b->version || a->n_cpus != b->n_cpus)
		return error_set(err, ERR_INVALID, 0,
				 "The schedstat snapshots differ in version or CPU count.");
	for (int c = 0; c < a->n_cpus; c++)
		if (a->cpu[c].n_dom != b->cpu[c].n_dom)
			return error_set(err, ERR_INVALID, 0,
					 "The schedstat snapshots differ in CPU %d's domains.", c);
	/* enum cpu_idle_type: the offsets of idle, busy and newly idle */
	const int busy = a->version == 15 ? 1 : 0, idle = a->version == 15 ? 0 : 1, newidle = 2;
	const struct {
		const char *name;
		int itype;
	} itypes[] = {{"idle", idle}, {"busy", busy}, {"newidle", newidle}};

	int n_dom = 0;
	for (int c = 0; c < a->n_cpus; c++)
		n_dom = a->cpu[c].n_dom > n_dom ? a->cpu[c].n_dom : n_dom;
	size_t adding = (size_t)a->n_cpus * 5 + (size_t)n_dom * 11 + 4;
	if (json_object_object_length(metrics) + adding > METRICS_MAX_COUNT)
		return error_set(err, ERR_INVALID, 0,
				 "The schedstat metrics of %d CPUs would pass %d metrics.",
				 a->n_cpus, METRICS_MAX_COUNT);

	_cleanup_json_ json_object *m = json_object_new_object();
	double total_delay = 0, total_remote = 0, lb_migrations = 0;
	char name[METRICS_MAX_NAME];
	for (int c = 0; c < a->n_cpus; c++) {
		const unsigned long long *x = a->cpu[c].v, *y = b->cpu[c].v;
		double sw = ss_delta(x[SS_SCHED_COUNT], y[SS_SCHED_COUNT]);
		double tw = ss_delta(x[SS_TTWU], y[SS_TTWU]);
		double tl = ss_delta(x[SS_TTWU_LOCAL], y[SS_TTWU_LOCAL]);
		double rd = ss_delta(x[SS_RUN_DELAY], y[SS_RUN_DELAY]);
		if (sw < 0 || tw < 0 || tl < 0 || rd < 0 || tl > tw)
			return error_set(err, ERR_INVALID, 0,
					 "CPU %d's schedstat counters went down during the "
					 "workload (or more local wake-ups than wake-ups).",
					 c);
		snprintf(name, sizeof(name), "schedstat.cpu%d.run_delay_ms", c);
		ss_put(m, name, rd / 1e6);
		snprintf(name, sizeof(name), "schedstat.cpu%d.switches", c);
		ss_put(m, name, sw);
		snprintf(name, sizeof(name), "schedstat.cpu%d.ttwu", c);
		ss_put(m, name, tw);
		snprintf(name, sizeof(name), "schedstat.cpu%d.ttwu_local", c);
		ss_put(m, name, tl);
		snprintf(name, sizeof(name), "schedstat.cpu%d.ttwu_remote", c);
		ss_put(m, name, tw - tl);
		total_delay += rd / 1e6;
		total_remote += tw - tl;
	}
	for (int d = 0; d < n_dom; d++) {
		double lb[3][3] = {{0}}, wake_remote = 0, affine = 0, alb = 0;
		for (int c = 0; c < a->n_cpus; c++) {
			if (d >= a->cpu[c].n_dom)
				continue;
			const unsigned long long *x = a->cpu[c].dom[d], *y = b->cpu[c].dom[d];
			for (int f = 0; f < SS_DOM_FIELDS; f++)
				if (y[f] < x[f])
					return error_set(err, ERR_INVALID, 0,
							 "CPU %d's domain%d schedstat counters "
							 "went down during the workload.",
							 c, d);
			for (int t = 0; t < 3; t++) {
				int o = itypes[t].itype * 8;
				lb[t][0] += ss_delta(x[o + SS_LB_COUNT], y[o + SS_LB_COUNT]);
				lb[t][1] += ss_delta(x[o + SS_LB_FAILED], y[o + SS_LB_FAILED]);
				lb[t][2] += ss_delta(x[o + SS_LB_GAINED], y[o + SS_LB_GAINED]);
			}
			wake_remote += ss_delta(x[SS_TTWU_WAKE_REMOTE], y[SS_TTWU_WAKE_REMOTE]);
			affine += ss_delta(x[SS_TTWU_MOVE_AFFINE], y[SS_TTWU_MOVE_AFFINE]);
			alb += ss_delta(x[SS_ALB_PUSHED], y[SS_ALB_PUSHED]);
		}
		static const char *const what[] = {"lb_count", "lb_failed", "lb_gained"};
		for (int t = 0; t < 3; t++)
			for (int k = 0; k < 3; k++) {
				snprintf(name, sizeof(name), "schedstat.domain%d.%s.%s", d, what[k],
					 itypes[t].name);
				ss_put(m, name, lb[t][k]);
			}
		snprintf(name, sizeof(name), "schedstat.domain%d.ttwu_wake_remote", d);
		ss_put(m, name, wake_remote);
		snprintf(name, sizeof(name), "schedstat.domain%d.ttwu_move_affine", d);
		ss_put(m, name, affine);
		lb_migrations += lb[0][2] + lb[1][2] + lb[2][2] + alb;
	}
	ss_put(m, "schedstat.run_delay_ms", total_delay);
	ss_put(m, "schedstat.ttwu_remote", total_remote);
	ss_put(m, "schedstat.lb_migrations", lb_migrations);
	json_object_object_foreach(m, k, v)
	{
		json_object_object_add(metrics, k, json_object_get(v));
	}
	return 0;
}

int metrics_tasks_rusage(json_object *rusage, json_object *metrics, struct sl_error *err)
{
	static const char *const keys[] = {"utime_us", "stime_us", "nvcsw", "nivcsw"};
	int64_t v[4];
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		json_object *x = json_member(rusage, keys[i]);
		v[i] = json_object_is_type(x, json_type_int) ? json_object_get_int64(x) : -1;
		/* a counter that went down, or past a year of CPU or 2^40 switches */
		if (v[i] < 0 || v[i] > (INT64_C(1) << 45))
			return error_set(
			    err, ERR_INVALID, 0,
			    "The agent's tasks_rusage.%s is not a count from 0 to 2^45.", keys[i]);
	}
	json_object_object_add(metrics, "schedstat.tasks.cpu_ms",
			       metrics_number((double)(v[0] + v[1]) / 1000.0));
	json_object_object_add(metrics, "schedstat.tasks.switches_voluntary",
			       metrics_number((double)v[2]));
	json_object_object_add(metrics, "schedstat.tasks.switches_involuntary",
			       metrics_number((double)v[3]));
	return 0;
}

int metrics_tasks_delay(json_object *td, json_object *metrics, struct sl_error *err)
{
	static const char *const keys[] = {"tasks",	 "run_delay_ns", "run_delay_max_ns",
					   "timeslices", "run_ns",	 "dropped"};
	int64_t v[ELEMENTSOF(keys)];
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		json_object *x = json_member(td, keys[i]);
		v[i] = json_object_is_type(x, json_type_int) ? json_object_get_int64(x) : -1;
		/* past 2^24 tasks, or 2^62 ns (146 years) */
		int64_t max = i == 0 || i == 5 ? INT64_C(1) << 24 : INT64_C(1) << 62;
		if (v[i] < 0 || v[i] > max)
			return error_set(
			    err, ERR_INVALID, 0,
			    "The agent's tasks_delay.%s is not a count from 0 to %lld.", keys[i],
			    (long long)max);
	}
	json_object *lost = json_member(td, "lost");
	if (!json_object_is_type(lost, json_type_boolean))
		return error_set(err, ERR_INVALID, 0,
				 "The agent's tasks_delay.lost is not a boolean.");
	if (v[2] > v[1] || (v[0] == 0 && v[1] > 0))
		return error_set(err, ERR_INVALID, 0,
				 "The agent's tasks_delay does not add up: one task waited "
				 "longer than all of them, or no task waited.");
	/* Some exits did not reach the agent: sums over part of the tasks would
	 * read as less waiting, so none are given (docs/workloads.md). */
	if (json_object_get_boolean(lost) || v[5] > 0 || v[0] == 0)
		return 0;
	json_object_object_add(metrics, "schedstat.tasks.count", metrics_number((double)v[0]));
	json_object_object_add(metrics, "schedstat.tasks.run_delay_ms",
			       metrics_number((double)v[1] / 1e6));
	json_object_object_add(metrics, "schedstat.tasks.run_delay_max_ms",
			       metrics_number((double)v[2] / 1e6));
	json_object_object_add(metrics, "schedstat.tasks.timeslices", metrics_number((double)v[3]));
	if (v[3] > 0)
		json_object_object_add(metrics, "schedstat.tasks.wait_per_slice_us",
				       metrics_number((double)v[1] / 1e3 / (double)v[3]));
	return 0;
}
