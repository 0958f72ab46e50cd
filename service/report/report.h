/* The per-job HTML report: one self-contained page (inline CSS and SVG, no
 * script, no fetches) rendered from a result document
 * (results-schema/result.schema.json). Every value shown comes from the
 * result and is HTML-escaped; job, variant and patch names are user input. */
#pragma once

#include <stdbool.h>

#include "report/html.h"
#include "util/error.h"

/* Caps on what a (possibly hostile) result makes the report draw. */
#define REPORT_MAX_VARIANTS	12
#define REPORT_MAX_RUNS		200  /* per variant */
#define REPORT_MAX_ROWS		2000 /* comparison rows */
#define REPORT_MAX_EVENTS	50   /* kernel events shown per run */
#define REPORT_MAX_CONSOLE	(64 * 1024)
#define REPORT_MAX_HIST_BUCKETS 200000

/* Renders result (borrowed) as HTML. On success *ret_html is a malloc'd
 * NUL-terminated page owned by the caller. Fails with ERR_INVALID when
 * result is not a JSON object or lacks "variants"; anything else missing is
 * shown as missing rather than failing. */
int report_html(json_object *result, char **ret_html, struct sl_error *err);

/* Page scaffolding shared with the trend report: <!DOCTYPE> to <body> with
 * the house CSS and a Content-Security-Policy that forbids scripts and
 * fetches, and the closing tags. title is escaped. */
void report_page_begin(struct html_buf *o, const char *title);
void report_page_end(struct html_buf *o);
/* A verdict badge (<span class="badge v-..."> with a symbol and the word),
 * for run statuses, comparison and overall verdicts alike. */
void report_badge(struct html_buf *o, const char *verdict);

/* ---- shared by report*.c only; not an API ---- */

/* result["variants"] names in display order: the baseline first, then the
 * others as the job lists them (or as stored), at most REPORT_MAX_VARIANTS. */
struct report_ctx {
	json_object *result;
	json_object *variants; /* borrowed */
	const char *baseline;
	const char *names[REPORT_MAX_VARIANTS];
	size_t n_names;
	int chart_id;
};

/* A string member or NULL. */
const char *report_str(json_object *o, const char *key);
/* A finite number member (int or double) into *ret; false when absent. */
bool report_num(json_object *o, const char *key, double *ret);
/* The palette colour of variant i in every chart and table. */
int report_variant_color(const struct report_ctx *c, size_t i);
/* Charts of one workload (by its name in the job and its tool); appends a
 * <section> when there is anything to draw. Returns the charts drawn. */
int report_charts_workload(struct html_buf *o, struct report_ctx *c, const char *workload,
			   const char *tool);
