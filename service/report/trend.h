/* The nightly trend report: for each job name and metric, how the
 * candidate's median and its confidence band moved against the baseline
 * over time, with regressions flagged on the day they first appeared.
 *
 * It reads only the store's `comparisons` table (docs/contracts.md section
 * 7) from <state_dir>/schedlab.db, opened read-only; it never rescans result
 * files. */
#pragma once

#include <time.h>

#include "util/error.h"

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
