/* What the trend's files share (trend.c groups the rows into series,
 * trend_changepoint.c analyses them, trend_html.c and trend_json.c render
 * them): a series' points, its change points and the bisections. Not for
 * use outside service/report/trend*.c. */
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

/* A change point's bisection (struct trend_bisection_row, kept). */
struct trend_bisection {
	char key[65];
	char job_id[80];
	char state[16];
	char first_bad_commit[72];
	char first_bad_subject[TEXT_MAX];
	int certain; /* -1: not known */
	int steps;
};

struct trend {
	struct series_group *g;
	size_t n, cap;
	size_t rows;
	struct trend_bisection *bis;
	size_t n_bis;
	bool analysed; /* trend_analyse ran */
};

/* trend_changepoint.c: sorts each series' points by time, counts its
 * regressions and undecided points and finds its change points (once;
 * a second call does nothing). Returns 0 or -ENOMEM with err set. */
int trend_analyse(struct trend *t, struct sl_error *err);
/* A regression "appears" at point i when its verdict is regressed and the
 * same variant's previous point (in time) was not. */
bool trend_first_regressed(const struct series_group *g, size_t i);
/* The bisection the store links to change point c of g, or NULL. */
const struct trend_bisection *trend_bisection_of(const struct trend *t,
						 const struct series_group *g,
						 const struct trend_cp *c, char ret_key[65]);
