/* The nightly trend report: for each job name and metric, how the
 * candidate's median and its confidence band moved against the baseline
 * over time, with regressions flagged on the day they first appeared.
 *
 * It reads only the store's `comparisons` table (docs/contracts.md section
 * 7) from <state_dir>/schedlab.db, opened read-only; it never rescans result
 * files. */
#pragma once

#include <stdbool.h>
#include <time.h>

#include "util/error.h"
#include "util/json.h"

#define TREND_MAX_ROWS	 200000 /* rows read from the store */
#define TREND_MAX_CHARTS 80

/* Renders the trend page for comparisons that finished within
 * since_seconds before now. On success *ret_html is a malloc'd
 * self-contained page owned by the caller. Errors: ERR_NOT_FOUND when the
 * store does not exist, ERR_INVALID when it has no comparisons table or
 * since_seconds <= 0, ERR_INTERNAL for SQLite failures. */
int trend_html(const char *state_dir, long since_seconds, char **ret_html, struct sl_error *err);
/* The same with an explicit "now" (seconds since the epoch), for tests. */
int trend_html_at(const char *state_dir, long since_seconds, time_t now, char **ret_html,
		  struct sl_error *err);
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

/* The change points of one series (trend_series_id; NULL: every series)
 * over the window, as JSON: a new reference to an array of {series, name
 * (the jobs' name), owner (null in a store from before owners), variant
 * (null for the baseline's), baseline, workload, metric, direction ("up"
 * or "down": the level rose or fell), magnitude {before, after, change,
 * relative_change, ci_lo, ci_hi, p}, baseline_too, last_night_before and
 * first_night_after {time, job_id, commit}, commit_range {from, to} or
 * null, key (trend_change_point_key), bisection {job_id, state,
 * first_bad_commit, first_bad_subject, certain, steps, report} or null}. The same detection as the
 * page (docs/statistics.md). Errors as trend_html_at. */
int trend_change_points_json(const char *state_dir, const char *series, long since_seconds,
			     time_t now, json_object **ret, struct sl_error *err);
/* The key a change point is known by (GET /v1/change-points' "key", the
 * store's change_points and change_point_bisections): sha256 of its series,
 * variant ("" for the baseline's), workload, metric and first night's job
 * id, 64 hex digits. */
void trend_change_point_key(const char *series, const char *variant, const char *workload,
			    const char *metric, const char *after_job_id, char ret[65]);
/* 1 when s is a full git commit id (40 or 64 lowercase hex digits). */
bool trend_commit_valid(const char *s);
