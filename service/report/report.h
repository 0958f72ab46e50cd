/* The per-job HTML report: one self-contained page (inline CSS and SVG, no
 * script, no fetches) rendered from a result document
 * (results-schema/result.schema.json). Every value shown comes from the
 * result and is HTML-escaped; job, variant and patch names are user input. */
#pragma once

#include <stdbool.h>

#include "compare/result_model.h"
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
 * NUL-terminated page owned by the caller. The result is parsed once
 * (model_result_parse()): one that is not an object or does not parse is
 * ERR_INVALID naming the field ("The result document: variants.base.runs[2]
 * .status is ..."); an optional member that is missing is shown as
 * missing. */
int report_html(json_object *result, char **ret_html, struct sl_error *err);
/* The same from a parsed result (borrowed). */
int report_html_model(const struct model_result *m, char **ret_html, struct sl_error *err);

/* Page scaffolding shared with the trend report: <!DOCTYPE> to <body> with
 * the house CSS and a Content-Security-Policy that forbids scripts and
 * fetches, and the closing tags. title is escaped. */
void report_page_begin(struct html_buf *o, const char *title);
void report_page_end(struct html_buf *o);
/* A verdict badge (<span class="badge v-..."> with a symbol and the word),
 * for run statuses, comparison and overall verdicts alike. */
void report_badge(struct html_buf *o, const char *verdict);
