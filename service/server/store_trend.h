/* The store's query API for the nightly trend: the comparisons and the
 * change points' bisections read from <state_dir>/schedlab.db, opened
 * read-only (the CLI reads it while the service writes), handed on as the
 * plain rows of report/trend.h.
 *
 * Why here: the trend's page, JSON and change-point analysis are report/
 * (below server/ in service/LAYERS) and must not know a table name,
 * because a dependency that goes through SQL is one the layer checker
 * cannot see. So every query of the `comparisons`, `jobs` and
 * `change_point_bisections` tables lives in the store, next to the
 * migrations that make them, and store_trend_html / store_trend_change_points
 * join the two for the callers in server/ and cli/ (docs/architecture.md
 * "Who reads the store"). */
#pragma once

#include <time.h>

#include "report/trend.h"
#include "util/error.h"
#include "util/json.h"

/* What store_trend_read hands each row to; a callback's negative return
 * (with err set) stops the read and is returned. */
struct store_trend_visitor {
	int (*row)(const struct trend_row *row, void *userdata, struct sl_error *err);
	int (*bisection)(const struct trend_bisection_row *b, void *userdata, struct sl_error *err);
	void *userdata;
};

/* Reads the comparisons that finished at or after `since`, at most
 * TREND_MAX_ROWS of them, ordered by owner, job name, workload, metric,
 * finished_at and variant; job_name (NULL: all) keeps one job name's. Then
 * the bisections, newest first, at most TREND_MAX_BISECTIONS; a store from
 * before schema 4 has none. A store from before schema 3 reads every commit
 * as unknown, one from before schema 5 every owner as NULL. The rows'
 * pointers are borrowed for the callback's call. Errors: ERR_NOT_FOUND
 * (-ENOENT) when the store does not exist, ERR_INVALID when it has no
 * readable comparisons table, ERR_INTERNAL for SQLite failures. */
int store_trend_read(const char *state_dir, time_t since, const char *job_name,
		     const struct store_trend_visitor *v, struct sl_error *err);

/* The trend page of the comparisons that finished within since_seconds
 * before now (seconds since the epoch; trend_render_html). *ret_html is
 * malloc'd, owned by the caller. Errors: as store_trend_read, ERR_INVALID
 * when state_dir is NULL or since_seconds <= 0. */
int store_trend_html_at(const char *state_dir, long since_seconds, time_t now, char **ret_html,
			struct sl_error *err);
/* The same, now being the current time. */
int store_trend_html(const char *state_dir, long since_seconds, char **ret_html,
		     struct sl_error *err);
/* The change points of one series (trend_series_id; NULL: every series)
 * over the window, as trend_change_points gives them: a new reference
 * (caller puts it). Errors as store_trend_html_at. */
int store_trend_change_points(const char *state_dir, const char *series, long since_seconds,
			      time_t now, json_object **ret, struct sl_error *err);
