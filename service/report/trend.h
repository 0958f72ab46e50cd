/* The nightly trend report: for each job name and metric, how the
 * candidate's median and its confidence band moved against the baseline
 * over time, with regressions flagged on the day they first appeared.
 *
 * This module knows no SQL and opens no file: it takes the comparisons
 * and bisections as plain rows (struct trend_row, struct trend_bisection)
 * from whoever read them. The store reads them (server/store_trend.h),
 * because report/ sits below server/ in service/LAYERS and a dependency
 * that goes through a table name is one the layer checker cannot see
 * (docs/architecture.md "Who reads the store"). Files of the family:
 * trend.c (rows into series, keys, times), trend_changepoint.c (the
 * analysis), trend_html.c (the page), trend_json.c (the API's JSON). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "util/error.h"
#include "util/json.h"
#include "util/macro.h"

#define TREND_MAX_ROWS	     200000 /* comparison rows read from the store */
#define TREND_MAX_CHARTS     80
#define TREND_MAX_BISECTIONS 4096 /* bisection rows read from the store, newest first */

/* One stored comparison (every pointer borrowed for the call it is passed
 * to; NULL reads as ""). Names longer than the trend keeps are cut at a
 * UTF-8 boundary. */
struct trend_row {
	const char *job_id, *job_name, *variant, *workload, *metric, *verdict;
	const char *owner;  /* NULL: a store from before owners (schema 5) */
	const char *commit; /* the candidate kernel's git commit; NULL: unknown */
	time_t t;	    /* when the job finished */
	double base, cand, change, ci_lo, ci_hi, p; /* NAN when not stored */
};

/* A change point's bisection as the store holds it (pointers borrowed;
 * NULL reads as ""): the job, and its answer once it ended. */
struct trend_bisection_row {
	const char *key, *job_id;
	const char *state; /* the answer's state, else the job's status */
	const char *first_bad_commit, *first_bad_subject;
	int certain; /* -1: not known */
	int steps;
};

struct trend;

/* A new, empty trend; NULL when out of memory. */
struct trend *trend_new(void);
/* Frees t and what it holds; NULL is a no-op. */
void trend_free(struct trend *t);
static inline void trend_freep(struct trend **t)
{
	trend_free(*t);
}
#define _cleanup_trend_ _cleanup_(trend_freep)

/* Adds one comparison. Rows must arrive ordered by owner, job name,
 * workload and metric (each chart's rows together); only_series (NULL:
 * all) keeps one series' rows (trend_series_id). Returns 1 when kept, 0
 * when only_series skipped it, -ENOMEM (err set) when out of memory. */
int trend_add_row(struct trend *t, const struct trend_row *row, const char *only_series,
		  struct sl_error *err);
/* Adds one bisection (copied; rows newest first, the first of a key
 * counts). Returns 0, or -ENOMEM with err set. */
int trend_add_bisection(struct trend *t, const struct trend_bisection_row *b, struct sl_error *err);

/* Renders the page of what t holds, the window being since_seconds before
 * now (seconds since the epoch). On success *ret_html is a malloc'd
 * self-contained page owned by the caller. Errors: ERR_INVALID when
 * since_seconds <= 0, ERR_INTERNAL (-ENOMEM) when out of memory. */
int trend_render_html(struct trend *t, long since_seconds, time_t now, char **ret_html,
		      struct sl_error *err);
/* The change points of what t holds, as JSON: a new reference (caller
 * puts it) to an array of {series, name (the jobs' name), owner (null in
 * a store from before owners), variant (null for the baseline's),
 * baseline, workload, metric, direction ("up" or "down": the level rose
 * or fell), magnitude {before, after, change, relative_change, ci_lo,
 * ci_hi, p}, baseline_too, last_night_before and first_night_after {time,
 * job_id, commit}, commit_range {from, to} or null, key
 * (trend_change_point_key), bisection {job_id, state, first_bad_commit,
 * first_bad_subject, certain, steps, report} or null}. The same detection
 * as the page (docs/statistics.md). Errors: -ENOMEM. */
int trend_change_points(struct trend *t, json_object **ret, struct sl_error *err);

/* Parses an RFC 3339 UTC time ("2026-12-03T08:00:00Z", fraction and
 * "+00:00" allowed; a space for the 'T' too) into seconds since the epoch.
 * Returns 0 or -EINVAL. */
int trend_parse_time(const char *s, time_t *ret);

/* The series a job's comparisons join (docs/service.md "Tenancy"): a
 * (owner, job name). The nightly series of a schedule (owner
 * "schedule:NAME", job name NAME) is known by NAME alone; any other is
 * "NAME@OWNER" ('-' for no owner), so a token's job named after a schedule
 * is a series of its own. Job names hold no '@', so the two never meet. */
void trend_series_id(const char *owner, const char *job_name, char *ret, size_t len);
/* The key a change point is known by (GET /v1/change-points' "key", the
 * store's change_points and change_point_bisections): sha256 of its series,
 * variant ("" for the baseline's), workload, metric and first night's job
 * id, 64 hex digits. Returns 0, or -ENOMEM when the hash cannot start. */
int trend_change_point_key(const char *series, const char *variant, const char *workload,
			   const char *metric, const char *after_job_id, char ret[65]);
/* 1 when s is a full git commit id (40 or 64 lowercase hex digits). */
bool trend_commit_valid(const char *s);
