/* What the svg_*.c family shares; not an API (that is svg.h).
 *
 *   svg_plot.c    the model: the svg_plot_* builder calls fill struct svg_plot
 *   svg_scale.c   fitting axes to the data, ticks, data to pixels, quantiles
 *   svg_draw.c    numbers, labels, markers and one drawer per element kind
 *   svg_render.c  layout, legend, grid, axes: svg_plot_render_to() */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "report/html.h"
#include "report/svg.h"

#define MAX_TICKS 24

enum elem_kind {
	E_HIST,
	E_BOX,
	E_STRIP,
	E_BAR,
	E_TARGET,
	E_LINE,
	E_BAND,
	E_POINTS,
	E_VLINE,
	E_HLINE,
};

struct elem {
	enum elem_kind kind;
	int series;
	size_t category;
	int style; /* enum svg_hist_style or enum svg_marker */
	size_t n;
	double *a, *b, *c; /* per kind: edges/counts, x/y, x/lo/hi, values */
	double value;
	char *label;
};

struct series {
	char *name;
	int color;
	bool dashed;
	int slot; /* side-by-side position in a category, -1 when unused */
};

struct axis {
	enum svg_scale scale;
	char *label;
	bool fixed;
	double min, max;
	bool has_include;
	double include;
};

struct svg_plot {
	int width, height;
	char *title;
	char *target_label;
	bool bar_labels;
	struct axis x, y;
	char **categories;
	size_t n_categories;
	struct series series[SVG_MAX_SERIES];
	size_t n_series;
	struct elem *elems;
	size_t n_elems;
	/* An allocation failed: later calls do nothing and rendering fails
	 * the output buffer (CODING-STYLE.md "Out of memory"). */
	bool failed;
};

/* A fitted axis: the range and its ticks. */
struct scale {
	enum svg_scale kind;
	double lo, hi;
	double ticks[MAX_TICKS];
	size_t n_ticks;
	double step;	 /* linear and time: tick spacing */
	double px0, px1; /* pixel positions of lo and hi */
};

struct layout {
	double left, right, top, bottom;
	size_t n_slots;
	bool has_target;
};

/* ---- svg_scale.c ---- */

/* Fits sx and sy to p's elements (or its fixed ranges) inside layout l. */
void svg_fit_axes(const struct svg_plot *p, const struct layout *l, struct scale *sx,
		  struct scale *sy);
/* The pixel position of v on s, clamped to the axis; v <= 0 on a log scale
 * is drawn at its lower end. */
double svg_scale_px(const struct scale *s, double v);
/* Whether v lies within s's range. */
bool svg_scale_contains(const struct scale *s, double v);
/* The label of tick v of s into out. */
void svg_tick_label(const struct scale *s, double v, char out[HTML_NUM_MAX]);
/* Type-7 quantile of n >= 1 sorted finite values. */
double svg_quantile(const double *v, size_t n, double q);
/* The finite values of e->a, sorted, in a new array the caller frees;
 * *ret_n their count. */
/* NULL when out of memory (the caller fails its html_buf). */
double *svg_sorted_finite(const struct elem *e, size_t *ret_n);

/* ---- svg_draw.c ---- */

/* Writes " name=\"<v with 1 decimal>\"". */
void svg_attr_num(struct html_buf *o, const char *name, double v);
/* Writes v with 1 decimal. */
void svg_put_num(struct html_buf *o, double v);
/* Escapes a label, cut at a UTF-8 boundary with an ellipsis when long. */
void svg_put_label(struct html_buf *o, const char *s);
/* A rough width in pixels of s drawn as a label. */
double svg_text_width(const char *s);
/* The palette colour of series s (< 0: dark grey). */
const char *svg_series_color(const struct svg_plot *p, int s);
/* Writes the stroke-dasharray attribute of a dashed series s. */
void svg_put_dash(struct html_buf *o, const struct svg_plot *p, int s);
/* A marker (enum svg_marker) centred at (x, y); extra is appended to its
 * attributes. */
void svg_draw_marker(struct html_buf *o, double x, double y, int marker, const char *color,
		     const char *extra);
/* A horizontal segment; width picks the stroke (>= 3, >= 2, else thin). */
void svg_draw_hseg(struct html_buf *o, double x0, double x1, double y, const char *color,
		   double width);
/* One element of each kind: histograms, boxes and strips, bars and
 * targets, lines, bands and points, and rules (index staggers labels). */
void svg_draw_hist(struct html_buf *o, const struct svg_plot *p, const struct elem *e,
		   const struct scale *sx, const struct scale *sy);
void svg_draw_box(struct html_buf *o, const struct svg_plot *p, const struct layout *l,
		  const struct elem *e, const struct scale *sx, const struct scale *sy);
void svg_draw_bar(struct html_buf *o, const struct svg_plot *p, const struct layout *l,
		  const struct elem *e, const struct scale *sx, const struct scale *sy);
void svg_draw_xy(struct html_buf *o, const struct svg_plot *p, const struct elem *e,
		 const struct scale *sx, const struct scale *sy);
void svg_draw_rule(struct html_buf *o, const struct svg_plot *p, const struct layout *l,
		   const struct elem *e, const struct scale *sx, const struct scale *sy,
		   size_t index);
