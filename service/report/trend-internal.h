/* What the trend's files share (report/trend.c detects and renders,
 * report/trend_store.c reads the store): a series' points, its change
 * points and the bisections the store links to them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "compare/changepoint.h"
#include "util/error.h"

#define TREND_MAX_VARIANTS 6
#define TEXT_MAX	   256 /* bytes kept of each name read from the store */

struct point {
	time_t t;
	double base, cand, change, ci_lo, ci_hi, p;
	char verdict[16];
	char job_id[80];
	char variant[TEXT_MAX];
	char commit[72]; /* the candidate kernel's git commit, "" when unknown */
};

/* A change point of one variant's candidate medians (or, with variant
 * NULL, of the baseline's): between nights `before` and `after`. */
struct trend_cp {
	const struct point *before, *after;
	const char *variant;
	struct changepoint cp;
	bool baseline_too; /* the baseline moved between the same nights */
};

#define TREND_MAX_CPS 16 /* per chart */

/* One chart: all points of one (series, workload, metric); job_name is the
 * series (trend_series_id: the job name, or "NAME@OWNER"). */
struct series_group {
	char job_name[TEXT_MAX], workload[TEXT_MAX], metric[TEXT_MAX];
	char name[TEXT_MAX], owner[TEXT_MAX]; /* the jobs' name and owner */
	bool legacy;			      /* a store without owners */
	struct point *pts;
	size_t n, cap;
	size_t regressions, undecided; /* points first regressed; undecided or inconclusive */
	struct trend_cp cps[TREND_MAX_CPS];
	size_t n_cps;
};

/* A change point's bisection as the store's change_point_bisections
 * holds it: the job, and its answer once it ended. */
struct trend_bisection {
	char key[65];
	char job_id[80];
	char state[16]; /* the answer's state, else the job's status */
	char first_bad_commit[72];
	char first_bad_subject[TEXT_MAX];
	int certain; /* -1: not known */
	int steps;
};

#define TREND_MAX_BISECTIONS 4096 /* rows read from the store, newest first */

struct trend {
	struct series_group *g;
	size_t n, cap;
	size_t rows;
	struct trend_bisection *bis;
	size_t n_bis;
};

/* Frees what t holds (not t). */
void trend_free(struct trend *t);
/* Loads the comparisons of db_path finished since `since` into t, grouped
 * by (series, workload, metric) in that order, and the bisections;
 * only_series (NULL: all) keeps one series' (trend_series_id). Errors:
 * ERR_INTERNAL when the store cannot be opened, ERR_INVALID when it has no
 * readable comparisons table. */
int trend_load(struct trend *t, const char *db_path, time_t since, const char *only_series,
	       struct sl_error *err);
