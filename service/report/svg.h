/* Small SVG charts for the reports: one plot per call chain, built from data
 * and rendered at the end, so axes can fit the data.
 *
 *   struct svg_plot *p = svg_plot_new(800, 320);
 *   svg_plot_title(p, "cyclictest latency");
 *   svg_plot_x_axis(p, SVG_LINEAR, "latency (µs)");
 *   svg_plot_y_axis(p, SVG_LOG10, "samples");
 *   int s = svg_plot_add_series(p, "baseline", 0);
 *   svg_plot_histogram(p, s, edges, counts, n, SVG_HIST_STEP);
 *   svg_plot_vline(p, s, 812.0, "p99 812");
 *   char *svg = svg_plot_render(p);
 *
 * Output is deterministic: the same calls give the same bytes (fixed number
 * formatting, no clocks, no randomness; strip-plot jitter is a fixed
 * sequence). Every text (titles, labels, series and category names) is
 * escaped. Colours are indices into the Okabe-Ito palette, which stays
 * distinguishable for the common kinds of colour blindness; line series also
 * differ by dash pattern. Sizes are bounded: adding past SVG_MAX_* fails with
 * -E2BIG and leaves the plot as it was. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "report/html.h"

#define SVG_MAX_SERIES	   16
#define SVG_MAX_ELEMENTS   512
#define SVG_MAX_CATEGORIES 64
#define SVG_MAX_POINTS	   100000 /* per element */
#define SVG_PALETTE_SIZE   8

enum svg_scale {
	SVG_LINEAR,
	SVG_LOG10, /* values <= 0 are drawn at the axis' lower end */
	SVG_TIME,  /* linear in seconds since the epoch, labelled as UTC dates */
};

enum svg_hist_style {
	SVG_HIST_STEP, /* an outline with a light fill: best for overlays */
	SVG_HIST_BARS, /* translucent bars */
};

enum svg_marker {
	SVG_MARK_CIRCLE,
	SVG_MARK_SQUARE,
	SVG_MARK_TRIANGLE,
	SVG_MARK_DIAMOND,
};

struct svg_plot;

/* The palette colour (e.g. "#0072B2") and a darker shade of it for text, for
 * index i modulo SVG_PALETTE_SIZE. Also used by the HTML around the charts. */
const char *svg_palette(int i);
const char *svg_palette_text(int i);

/* A plot of width x height pixels (clamped to 120..4000). Never NULL.
 * Out of memory (here or in any later call) fails the plot: later calls
 * do nothing (those returning int give -ENOMEM) and rendering it fails
 * the output buffer (html_buf_fail), so only the code that ends the text
 * checks (CODING-STYLE.md). */
struct svg_plot *svg_plot_new(int width, int height);
/* Frees p; NULL is fine. */
void svg_plot_free(struct svg_plot *p);
static inline void svg_plot_freep(struct svg_plot **p)
{
	svg_plot_free(*p);
}
#define _cleanup_svg_plot_ _cleanup_(svg_plot_freep)

/* Texts are copied. */
void svg_plot_title(struct svg_plot *p, const char *title);
void svg_plot_x_axis(struct svg_plot *p, enum svg_scale scale, const char *label);
void svg_plot_y_axis(struct svg_plot *p, enum svg_scale scale, const char *label);
/* Fixes an axis' range instead of fitting it to the data; data outside is
 * clamped to the edge. */
void svg_plot_x_range(struct svg_plot *p, double min, double max);
void svg_plot_y_range(struct svg_plot *p, double min, double max);
/* Makes the fitted y range include v (e.g. 0 for bars of counts). */
void svg_plot_y_include(struct svg_plot *p, double v);
/* Makes x categorical: names[i] is centred in slot [i, i+1]. Elements of
 * different series in one category are drawn side by side. */
int svg_plot_x_categories(struct svg_plot *p, const char *const *names, size_t n);
/* Prints each bar's value above it (so a bar of 0 is still visible). */
void svg_plot_bar_labels(struct svg_plot *p, bool on);
/* The label of target markers in the legend (default "target"). */
void svg_plot_target_label(struct svg_plot *p, const char *label);

/* Adds a legend entry with palette colour `color` and returns its index
 * (>= 0) for the element functions, or -E2BIG. A NULL or empty name keeps it
 * out of the legend. `dashed` draws its lines dashed. */
int svg_plot_add_series(struct svg_plot *p, const char *name, int color, bool dashed);

/* n bins: edges has n + 1 ascending values, counts n. */
int svg_plot_histogram(struct svg_plot *p, int series, const double *edges, const double *counts,
		       size_t n, enum svg_hist_style style);
/* A box (quartiles, median, whiskers to min and max) with the values as
 * points over it, in category `category`. Fewer than 4 values: points and a
 * median tick only. */
int svg_plot_box(struct svg_plot *p, int series, size_t category, const double *values, size_t n);
/* The values as points with a median tick. */
int svg_plot_strip(struct svg_plot *p, int series, size_t category, const double *values, size_t n);
/* One bar from the axis to value. */
int svg_plot_bar(struct svg_plot *p, int series, size_t category, double value);
/* A black target line across the slot of (series, category). */
int svg_plot_bar_target(struct svg_plot *p, int series, size_t category, double target);
/* A polyline through (x[i], y[i]) with a dot on each point. */
int svg_plot_line(struct svg_plot *p, int series, const double *x, const double *y, size_t n);
/* A shaded band between lo[i] and hi[i] at x[i]; drawn behind everything. */
int svg_plot_band(struct svg_plot *p, int series, const double *x, const double *lo,
		  const double *hi, size_t n);
/* Markers at (x[i], y[i]). */
int svg_plot_points(struct svg_plot *p, int series, const double *x, const double *y, size_t n,
		    enum svg_marker marker);
/* A dashed vertical (horizontal) line at x (y) with a label; series < 0
 * draws it in dark grey. */
int svg_plot_vline(struct svg_plot *p, int series, double x, const char *label);
int svg_plot_hline(struct svg_plot *p, int series, double y, const char *label);

/* Appends the <svg> element to out; fails out when p failed. */
void svg_plot_render_to(const struct svg_plot *p, struct html_buf *out);
/* The <svg> element as a malloc'd string (the caller frees it); NULL when
 * out of memory. */
char *svg_plot_render(const struct svg_plot *p);
