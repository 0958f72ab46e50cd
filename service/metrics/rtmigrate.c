/* rt-migrate-test (rt-tests 2.4) output: per-iteration start delays from
 * stdout, cross-checked with the summary in its --json file.
 *
 * stdout looks like this (tests/data/rt-tests/rtmigrate-*.stdout):
 *
 *   Iter:      0       1       2
 *      0:    20068      60      41        start delay of each task, us
 *    len:    40068   20061   20041        when each task finished, us
 *    loops: 714339  707884  729447
 *   ...
 *   Parent pid: 31813
 *    Task 0 (prio 60) (pid 31814):
 *      Max: 20159 us
 *      Min: 28 us
 *
 * Task t runs at priority base + t, so a higher column is a higher priority
 * (with -e several middle tasks share one). */
#include <errno.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/parse.h"
#include "util/json_get.h"

#define RTM_MAX_TASKS 64
#define RTM_MAX_LINE  4096
#define RTM_MAX_VALUE 1000000000ULL /* us: 1000 s; anything above is garbage */
#define RTM_MAX_CELLS (1024 * 1024)

struct rtm {
	int ntasks;
	size_t niter, cap;
	uint64_t *start; /* niter x ntasks */
	int prio[RTM_MAX_TASKS];
	bool have_prio[RTM_MAX_TASKS];
	long long sum_max[RTM_MAX_TASKS], sum_min[RTM_MAX_TASKS]; /* -1: not printed */
	int cur_task;						  /* last "Task N" line */
};

static void rtm_done(struct rtm *p)
{
	free(p->start);
}

/* Parses up to max unsigned integers separated by blanks from s; all of s must
 * be consumed. Returns the count or -1. */
static int parse_uints(const char *s, uint64_t *out, int max)
{
	int n = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '\r')
			return n;
		if (n >= max || *s < '0' || *s > '9')
			return -1;
		uint64_t v = 0;
		int digits = 0;
		while (*s >= '0' && *s <= '9') {
			if (++digits > 12)
				return -1;
			v = v * 10 + (uint64_t)(*s++ - '0');
		}
		if (*s && *s != ' ' && *s != '\t' && *s != '\r')
			return -1;
		if (v > RTM_MAX_VALUE)
			return -1;
		out[n++] = v;
	}
}

static int rtm_line(struct rtm *p, const char *line, size_t lineno, struct sl_error *err)
{
	uint64_t vals[RTM_MAX_TASKS + 1];
	const char *s = line;
	while (*s == ' ' || *s == '\t')
		s++;

	if (strncmp(s, "Iter:", 5) == 0) {
		int n = parse_uints(s + 5, vals, RTM_MAX_TASKS + 1);
		if (n < 1 || n > RTM_MAX_TASKS)
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's output line %zu ('Iter:') does not "
					 "list 1 to %d tasks.",
					 lineno, RTM_MAX_TASKS);
		for (int i = 0; i < n; i++)
			if (vals[i] != (uint64_t)i)
				return error_set(err, ERR_INVALID, 0,
						 "rt-migrate-test's output line %zu ('Iter:') does "
						 "not number its tasks 0 to %d.",
						 lineno, n - 1);
		if (p->ntasks)
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's output has a second 'Iter:' header at "
					 "line %zu.",
					 lineno);
		p->ntasks = n;
		return 0;
	}
	if (strncmp(s, "len:", 4) == 0 || strncmp(s, "loops:", 6) == 0) {
		const char *rest = s + (s[1] == 'e' ? 4 : 6);
		if (!p->ntasks || parse_uints(rest, vals, RTM_MAX_TASKS) != p->ntasks)
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's output line %zu does not have one "
					 "value per task.",
					 lineno);
		return 0;
	}
	if (*s >= '0' && *s <= '9') {
		char *colon = strchr(s, ':');
		uint64_t iter[1];
		if (!colon || !p->ntasks)
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's output line %zu is not an iteration "
					 "line (or comes before the 'Iter:' header).",
					 lineno);
		char num[16];
		size_t nl = (size_t)(colon - s);
		if (nl == 0 || nl >= sizeof(num))
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's output line %zu has a bad iteration "
					 "number.",
					 lineno);
		memcpy(num, s, nl);
		num[nl] = '\0';
		if (parse_uints(num, iter, 1) != 1 || iter[0] != p->niter)
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's output line %zu should start iteration "
					 "%zu.",
					 lineno, p->niter);
		if (parse_uints(colon + 1, vals, RTM_MAX_TASKS) != p->ntasks)
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's output line %zu (iteration %zu) does "
					 "not have %d start delays.",
					 lineno, p->niter, p->ntasks);
		if (p->niter >= METRICS_MAX_ITERATIONS ||
		    (p->niter + 1) * (size_t)p->ntasks > RTM_MAX_CELLS)
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's output has more than %d iterations.",
					 METRICS_MAX_ITERATIONS);
		if (p->niter == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 64;
			uint64_t *n = reallocarray(p->start, cap * (size_t)p->ntasks, sizeof(*n));
			if (!n)
				return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			p->start = n;
			p->cap = cap;
		}
		memcpy(p->start + p->niter * (size_t)p->ntasks, vals,
		       sizeof(*vals) * (size_t)p->ntasks);
		p->niter++;
		return 0;
	}
	int task, prio, used = 0;
	if (sscanf(s, "Task %d (prio %d)%n", &task, &prio, &used) == 2 && used > 0) {
		if (task < 0 || task >= p->ntasks || prio < 0 || prio > 99)
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's output line %zu names task %d with "
					 "priority %d, which does not fit %d tasks.",
					 lineno, task, prio, p->ntasks);
		p->prio[task] = prio;
		p->have_prio[task] = true;
		p->cur_task = task;
		return 0;
	}
	if ((strncmp(s, "Max:", 4) == 0 || strncmp(s, "Min:", 4) == 0) && p->cur_task >= 0) {
		char *us = strstr(s, " us");
		if (us && us[3] == '\0') {
			char buf[32];
			size_t l = (size_t)(us - (s + 4));
			if (l < sizeof(buf)) {
				memcpy(buf, s + 4, l);
				buf[l] = '\0';
				if (parse_uints(buf, vals, 1) == 1) {
					if (s[1] == 'a')
						p->sum_max[p->cur_task] = (long long)vals[0];
					else
						p->sum_min[p->cur_task] = (long long)vals[0];
				}
			}
		}
		return 0;
	}
	/* "Parent pid", "Tot:", "Avg:", "Passed!", tool warnings: nothing to take. */
	return 0;
}

/* Checks the --json summary (when it parses) against what stdout said. The
 * JSON is hand-written by rt-tests (keys like "cmdline:"); json-c reads it. */
static int rtm_check_json(struct rtm *p, const char *json_text, json_object *details,
			  struct sl_error *err)
{
	_cleanup_json_ json_object *doc = NULL;
	struct sl_error jerr = {0};
	if (metrics_parse_json(json_text, strlen(json_text), "rt-migrate-test JSON file", &doc,
			       &jerr) < 0) {
		/* The per-iteration stdout is what counts; note and go on. */
		json_object_object_add(details, "json_ignored",
				       json_object_new_string(jerr.message));
		return 0;
	}
	json_object *threads = NULL;
	if (!json_object_object_get_ex(doc, "thread", &threads) ||
	    !json_object_is_type(threads, json_type_object))
		return error_set(err, ERR_INVALID, 0,
				 "rt-migrate-test's JSON file has no \"thread\" object.");
	if (json_object_object_length(threads) != p->ntasks)
		return error_set(err, ERR_INVALID, 0,
				 "rt-migrate-test's JSON file lists %d threads, its output %d.",
				 json_object_object_length(threads), p->ntasks);
	for (int t = 0; t < p->ntasks; t++) {
		char key[16];
		json_object *th, *v;
		snprintf(key, sizeof(key), "%d", t);
		if (!json_object_object_get_ex(threads, key, &th) ||
		    !json_object_object_get_ex(th, "prio", &v) ||
		    !json_object_is_type(v, json_type_int))
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's JSON file has no priority for thread "
					 "%d.",
					 t);
		int prio = (int)json_object_get_int64(v);
		if (!p->have_prio[t]) {
			if (prio < 0 || prio > 99)
				return error_set(err, ERR_INVALID, 0,
						 "rt-migrate-test's JSON file gives thread %d the "
						 "priority %d.",
						 t, prio);
			p->prio[t] = prio;
			p->have_prio[t] = true;
		} else if (p->prio[t] != prio)
			return error_set(err, ERR_INVALID, 0,
					 "rt-migrate-test's JSON file gives thread %d priority %d, "
					 "its output %d.",
					 t, prio, p->prio[t]);
		uint64_t mn = UINT64_MAX, mx = 0;
		for (size_t i = 0; i < p->niter; i++) {
			uint64_t d = p->start[i * (size_t)p->ntasks + (size_t)t];
			mn = d < mn ? d : mn;
			mx = d > mx ? d : mx;
		}
		json_object *jmin, *jmax;
		if (json_object_object_get_ex(th, "min", &jmin) &&
		    json_object_object_get_ex(th, "max", &jmax) &&
		    (json_object_get_int64(jmin) != (int64_t)mn ||
		     json_object_get_int64(jmax) != (int64_t)mx))
			return error_set(
			    err, ERR_INVALID, 0,
			    "rt-migrate-test's JSON file and output disagree on thread "
			    "%d: min/max %lld/%lld us against %llu/%llu us.",
			    t, (long long)json_object_get_int64(jmin),
			    (long long)json_object_get_int64(jmax), (unsigned long long)mn,
			    (unsigned long long)mx);
	}
	return 0;
}

static void add_num(json_object *m, const char *name, double v)
{
	json_object_object_add(m, name, metrics_number(v));
}

int metrics_rtmigrate(const char *stdout_text, size_t stdout_len, const char *json_text,
		      long maxerr_us, json_object **ret_metrics, json_object **ret_details,
		      struct sl_error *err)
{
	struct rtm p = {.cur_task = -1};
	_cleanup_json_ json_object *metrics = NULL, *details = NULL;
	int r = 0;
	for (int t = 0; t < RTM_MAX_TASKS; t++)
		p.sum_max[t] = p.sum_min[t] = -1;

	if (strnlen(stdout_text, stdout_len) != stdout_len) {
		r = error_set(err, ERR_INVALID, 0, "rt-migrate-test's output contains a NUL byte.");
		goto out;
	}
	size_t lineno = 0;
	for (size_t pos = 0; pos < stdout_len;) {
		const char *nl = memchr(stdout_text + pos, '\n', stdout_len - pos);
		size_t l = nl ? (size_t)(nl - (stdout_text + pos)) : stdout_len - pos;
		char line[RTM_MAX_LINE];
		lineno++;
		if (l >= sizeof(line)) {
			r = error_set(err, ERR_INVALID, 0,
				      "rt-migrate-test's output line %zu is longer than %d bytes.",
				      lineno, RTM_MAX_LINE);
			goto out;
		}
		memcpy(line, stdout_text + pos, l);
		line[l] = '\0';
		if (l && line[l - 1] == '\r')
			line[l - 1] = '\0';
		if ((r = rtm_line(&p, line, lineno, err)) < 0)
			goto out;
		pos += l + 1;
	}
	if (p.niter == 0) {
		r = error_set(err, ERR_INVALID, 0,
			      "rt-migrate-test's output has no iterations (was it cut off?).");
		goto out;
	}

	details = json_object_new_object();
	if (json_text && (r = rtm_check_json(&p, json_text, details, err)) < 0)
		goto out;
	for (int t = 0; t < p.ntasks; t++) {
		if (!p.have_prio[t]) {
			r = error_set(err, ERR_INVALID, 0,
				      "Neither rt-migrate-test's output nor its JSON file gives "
				      "the priority of task %d.",
				      t);
			goto out;
		}
		if (p.sum_max[t] >= 0 || p.sum_min[t] >= 0) {
			uint64_t mn = UINT64_MAX, mx = 0;
			for (size_t i = 0; i < p.niter; i++) {
				uint64_t d = p.start[i * (size_t)p.ntasks + (size_t)t];
				mn = d < mn ? d : mn;
				mx = d > mx ? d : mx;
			}
			if ((p.sum_max[t] >= 0 && (uint64_t)p.sum_max[t] != mx) ||
			    (p.sum_min[t] >= 0 && (uint64_t)p.sum_min[t] != mn)) {
				r = error_set(err, ERR_INVALID, 0,
					      "rt-migrate-test's summary for task %d does not "
					      "match its iterations (was the output cut off?).",
					      t);
				goto out;
			}
		}
	}

	metrics = json_object_new_object();
	/* Per priority: tasks sharing a priority (-e) are pooled. */
	bool done[RTM_MAX_TASKS] = {false};
	json_object *prios = json_object_new_array();
	json_object_object_add(details, "priorities", prios);
	for (int t = 0; t < p.ntasks; t++) {
		json_object_array_add(prios, json_object_new_int(p.prio[t]));
		if (done[t])
			continue;
		uint64_t mn = UINT64_MAX, mx = 0;
		long double sum = 0;
		size_t cnt = 0;
		for (int u = t; u < p.ntasks; u++) {
			if (p.prio[u] != p.prio[t])
				continue;
			done[u] = true;
			for (size_t i = 0; i < p.niter; i++) {
				uint64_t d = p.start[i * (size_t)p.ntasks + (size_t)u];
				mn = d < mn ? d : mn;
				mx = d > mx ? d : mx;
				sum += d;
				cnt++;
			}
		}
		char name[64];
		snprintf(name, sizeof(name), "start_delay_us.prio%d.min", p.prio[t]);
		add_num(metrics, name, (double)mn);
		snprintf(name, sizeof(name), "start_delay_us.prio%d.avg", p.prio[t]);
		add_num(metrics, name, (double)(sum / cnt));
		snprintf(name, sizeof(name), "start_delay_us.prio%d.max", p.prio[t]);
		add_num(metrics, name, (double)mx);
	}

	/* An inversion: in one iteration a task started more than maxerr after a
	 * task of lower priority had started. Lateness is measured against the
	 * earliest-starting lower-priority task. */
	long inversions = 0;
	uint64_t inv_max = 0;
	json_object *iters = json_object_new_array_ext((int)p.niter);
	json_object *lateness = json_object_new_array_ext((int)p.niter);
	json_object *inverted = json_object_new_array();
	for (size_t i = 0; i < p.niter; i++) {
		const uint64_t *row = p.start + i * (size_t)p.ntasks;
		uint64_t late = 0;
		json_object *jrow = json_object_new_array_ext(p.ntasks);
		for (int t = 0; t < p.ntasks; t++) {
			json_object_array_add(jrow, json_object_new_int64((int64_t)row[t]));
			for (int u = 0; u < p.ntasks; u++)
				if (p.prio[u] < p.prio[t] && row[t] > row[u] &&
				    row[t] - row[u] > late)
					late = row[t] - row[u];
		}
		json_object_array_add(iters, jrow);
		json_object_array_add(lateness, json_object_new_int64((int64_t)late));
		if (late > (uint64_t)maxerr_us) {
			inversions++;
			inv_max = late > inv_max ? late : inv_max;
			json_object_array_add(inverted, json_object_new_int64((int64_t)i));
		}
	}
	json_object_object_add(metrics, "inversions", json_object_new_int64(inversions));
	add_num(metrics, "inversion_max_us", (double)inv_max);

	json_object_object_add(details, "maxerr_us", json_object_new_int64(maxerr_us));
	json_object_object_add(details, "tasks", json_object_new_int(p.ntasks));
	json_object_object_add(details, "loops", json_object_new_int64((int64_t)p.niter));
	json_object_object_add(details, "iterations", iters);
	json_object_object_add(details, "lateness_us", lateness);
	json_object_object_add(details, "inverted_iterations", inverted);

	*ret_metrics = TAKE_PTR(metrics);
	*ret_details = TAKE_PTR(details);
	r = 0;
out:
	rtm_done(&p);
	return r;
}

/* The maxerr rt-migrate-test itself used: the spec's maxerr_us, else a -m/--maxerr in
 * args, else the tool's default. */
static long rtmigrate_maxerr(json_object *spec)
{
	json_object *v = json_member(spec, "maxerr_us");
	if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0 &&
	    json_object_get_int64(v) <= 10000000)
		return (long)json_object_get_int64(v);
	json_object *args = json_member(spec, "args");
	long found = RTMIGRATE_DEFAULT_MAXERR_US;
	for (size_t i = 0;
	     json_object_is_type(args, json_type_array) && i < json_object_array_length(args);
	     i++) {
		const char *a = json_object_get_string(json_object_array_get_idx(args, i));
		const char *val = NULL;
		if (!a)
			continue;
		if (strcmp(a, "-m") == 0 || strcmp(a, "--maxerr") == 0)
			val = json_object_get_string(json_object_array_get_idx(args, i + 1));
		else if (strncmp(a, "--maxerr=", 9) == 0)
			val = a + 9;
		else if (strncmp(a, "-m", 2) == 0)
			val = a + 2;
		if (val) {
			long l;
			if (parse_int(val, 0, 10000000, &l) == 0)
				found = l;
		}
	}
	return found;
}

static int rtmigrate_parse(const struct metrics_output *out, json_object *workload_spec,
			   json_object **ret_metrics, json_object **ret_details,
			   struct sl_error *err)
{
	return metrics_rtmigrate(out->stdout_text, out->stdout_len, out->json_text,
				 rtmigrate_maxerr(workload_spec), ret_metrics, ret_details, err);
}

/* Every metric is a delay or a count of late starts: better lower.
 * inversion_max_us is a maximum too, but its threshold has always been the
 * 25 % of a centre (on top of the 1 ms floor below), and the verdicts the
 * benches measured rest on it. */
static const struct metrics_name rtmigrate_names[] = {
    {"inversions", "lower", false},
    {"inversion_max_us", "lower", false},
    {"start_delay_us.prio*.min", "lower", false},
    {"start_delay_us.prio*.avg", "lower", false},
    {"start_delay_us.prio*.max", "lower", true},
};

static void rtmigrate_threshold(const char *metric, struct metric_threshold *t)
{
	if (strcmp(metric, "inversions") == 0) {
		/* One inversion: a gate on counts with a margin of 0 could never
		 * pass a noisy A/A ([0,0,0,0] against [0,0,0,1] allows +1). */
		*t = (struct metric_threshold){.floor_abs = 1, .rel = 0};
	} else if (strcmp(metric, "inversion_max_us") == 0 ||
		   strncmp(metric, "start_delay_us.", 15) == 0) {
		/* rt-migrate-test's own maxerr: below 1 ms a start delay is not news. */
		t->floor_abs = RTMIGRATE_DEFAULT_MAXERR_US;
	}
}

const struct metrics_plugin metrics_plugin_rtmigrate = {
    .tool = "rt-migrate-test",
    METRICS_NAMES(rtmigrate_names),
    .parse = rtmigrate_parse,
    .threshold = rtmigrate_threshold,
};
