/* SVG plots: the retained model (series, elements, axes) that the svg_plot_*
 * calls build, and the palette. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg-internal.h"

/* Okabe & Ito (2008): distinguishable with protanopia, deuteranopia and
 * tritanopia. Yellow comes last: it is weak on white. */
static const char *const palette[SVG_PALETTE_SIZE] = {
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442",
};
/* The same hues dark enough for text on white (contrast >= 4.5:1). */
static const char *const palette_text[SVG_PALETTE_SIZE] = {
    "#005A8C", "#8A5A00", "#00694D", "#8E4A75", "#1F6A96", "#A33F00", "#000000", "#6B6500",
};

const char *svg_palette(int i)
{
	if (i < 0)
		return "#555555";
	return palette[i % SVG_PALETTE_SIZE];
}

const char *svg_palette_text(int i)
{
	if (i < 0)
		return "#333333";
	return palette_text[i % SVG_PALETTE_SIZE];
}

/* What svg_plot_new() returns when it cannot allocate a plot: failed from
 * the start, never written, never freed. */
static struct svg_plot oom_plot = {.width = 120, .height = 120, .failed = true};

/* A copy of s owned by p; NULL (and p failed) when out of memory. */
static char *plot_strdup(struct svg_plot *p, const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		p->failed = true;
	return d;
}

struct svg_plot *svg_plot_new(int width, int height)
{
	struct svg_plot *p = calloc(1, sizeof(*p));

	if (!p)
		return &oom_plot;
	p->width = width < 120 ? 120 : width > 4000 ? 4000 : width;
	p->height = height < 120 ? 120 : height > 4000 ? 4000 : height;
	p->elems = calloc(SVG_MAX_ELEMENTS, sizeof(*p->elems));
	if (!p->elems) {
		free(p);
		return &oom_plot;
	}
	return p;
}

void svg_plot_free(struct svg_plot *p)
{
	if (!p || p == &oom_plot)
		return;
	free(p->title);
	free(p->target_label);
	free(p->x.label);
	free(p->y.label);
	for (size_t i = 0; i < p->n_categories; i++)
		free(p->categories[i]);
	free(p->categories);
	for (size_t i = 0; i < p->n_series; i++)
		free(p->series[i].name);
	for (size_t i = 0; i < p->n_elems; i++) {
		free(p->elems[i].a);
		free(p->elems[i].b);
		free(p->elems[i].c);
		free(p->elems[i].label);
	}
	free(p->elems);
	free(p);
}

void svg_plot_title(struct svg_plot *p, const char *title)
{
	if (p->failed)
		return;
	free(p->title);
	p->title = plot_strdup(p, title);
}

void svg_plot_x_axis(struct svg_plot *p, enum svg_scale scale, const char *label)
{
	if (p->failed)
		return;
	p->x.scale = scale;
	free(p->x.label);
	p->x.label = plot_strdup(p, label);
}

void svg_plot_y_axis(struct svg_plot *p, enum svg_scale scale, const char *label)
{
	if (p->failed)
		return;
	/* Dates on y are not needed by any chart; keep y numeric. */
	p->y.scale = scale == SVG_TIME ? SVG_LINEAR : scale;
	free(p->y.label);
	p->y.label = plot_strdup(p, label);
}

static void axis_set_range(struct axis *a, double min, double max)
{
	if (!isfinite(min) || !isfinite(max) || !(min < max))
		return;
	a->fixed = true;
	a->min = min;
	a->max = max;
}

void svg_plot_x_range(struct svg_plot *p, double min, double max)
{
	if (!p->failed)
		axis_set_range(&p->x, min, max);
}

void svg_plot_y_range(struct svg_plot *p, double min, double max)
{
	if (!p->failed)
		axis_set_range(&p->y, min, max);
}

void svg_plot_y_include(struct svg_plot *p, double v)
{
	if (p->failed || !isfinite(v))
		return;
	p->y.has_include = true;
	p->y.include = v;
}

int svg_plot_x_categories(struct svg_plot *p, const char *const *names, size_t n)
{
	if (p->failed)
		return -ENOMEM;
	if (n > SVG_MAX_CATEGORIES)
		return -E2BIG;
	for (size_t i = 0; i < p->n_categories; i++)
		free(p->categories[i]);
	free(p->categories);
	p->n_categories = 0;
	p->categories = calloc(n ? n : 1, sizeof(char *));
	if (!p->categories) {
		p->failed = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		p->categories[i] = plot_strdup(p, names[i]);
	p->n_categories = n;
	return p->failed ? -ENOMEM : 0;
}

void svg_plot_bar_labels(struct svg_plot *p, bool on)
{
	if (!p->failed)
		p->bar_labels = on;
}

void svg_plot_target_label(struct svg_plot *p, const char *label)
{
	if (p->failed)
		return;
	free(p->target_label);
	p->target_label = plot_strdup(p, label);
}

int svg_plot_add_series(struct svg_plot *p, const char *name, int color, bool dashed)
{
	if (p->failed)
		return -ENOMEM;
	if (p->n_series >= SVG_MAX_SERIES)
		return -E2BIG;
	struct series *s = &p->series[p->n_series];
	s->name = plot_strdup(p, name);
	s->color = color < 0 ? 0 : color;
	s->dashed = dashed;
	s->slot = -1;
	return (int)p->n_series++;
}

/* A copy of v owned by p; NULL for none, and (p failed) when out of
 * memory. */
static double *dup_array(struct svg_plot *p, const double *v, size_t n)
{
	double *d;

	if (!v || n == 0)
		return NULL;
	d = malloc(n * sizeof(double));
	if (!d) {
		p->failed = true;
		return NULL;
	}
	memcpy(d, v, n * sizeof(double));
	return d;
}

static struct elem *elem_add(struct svg_plot *p, enum elem_kind kind, int series, size_t n,
			     int *ret)
{
	if (p->failed) {
		*ret = -ENOMEM;
		return NULL;
	}
	if (series >= (int)p->n_series || (series < 0 && kind != E_VLINE && kind != E_HLINE)) {
		*ret = -EINVAL;
		return NULL;
	}
	if (p->n_elems >= SVG_MAX_ELEMENTS || n > SVG_MAX_POINTS) {
		*ret = -E2BIG;
		return NULL;
	}
	struct elem *e = &p->elems[p->n_elems++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->series = series;
	e->n = n;
	*ret = 0;
	return e;
}

static int categorical_add(struct svg_plot *p, enum elem_kind kind, int series, size_t category,
			   const double *values, size_t n, double value)
{
	int r;

	if (category >= p->n_categories)
		return -EINVAL;
	struct elem *e = elem_add(p, kind, series, n, &r);
	if (!e)
		return r;
	e->category = category;
	e->a = dup_array(p, values, n);
	e->value = value;
	if (p->failed)
		return -ENOMEM;
	if (p->series[series].slot < 0) {
		int slots = 0;
		for (size_t i = 0; i < p->n_series; i++)
			if (p->series[i].slot >= 0)
				slots++;
		p->series[series].slot = slots;
	}
	return 0;
}

int svg_plot_histogram(struct svg_plot *p, int series, const double *edges, const double *counts,
		       size_t n, enum svg_hist_style style)
{
	int r;
	struct elem *e = elem_add(p, E_HIST, series, n, &r);

	if (!e)
		return r;
	e->a = dup_array(p, edges, n ? n + 1 : 0);
	e->b = dup_array(p, counts, n);
	e->style = style;
	return p->failed ? -ENOMEM : 0;
}

int svg_plot_box(struct svg_plot *p, int series, size_t category, const double *values, size_t n)
{
	return categorical_add(p, E_BOX, series, category, values, n, 0);
}

int svg_plot_strip(struct svg_plot *p, int series, size_t category, const double *values, size_t n)
{
	return categorical_add(p, E_STRIP, series, category, values, n, 0);
}

int svg_plot_bar(struct svg_plot *p, int series, size_t category, double value)
{
	return categorical_add(p, E_BAR, series, category, NULL, 0, value);
}

int svg_plot_bar_target(struct svg_plot *p, int series, size_t category, double target)
{
	return categorical_add(p, E_TARGET, series, category, NULL, 0, target);
}

static int xy_add(struct svg_plot *p, enum elem_kind kind, int series, const double *x,
		  const double *y, const double *y2, size_t n, int style)
{
	int r;
	struct elem *e = elem_add(p, kind, series, n, &r);

	if (!e)
		return r;
	e->a = dup_array(p, x, n);
	e->b = dup_array(p, y, n);
	e->c = dup_array(p, y2, n);
	e->style = style;
	return p->failed ? -ENOMEM : 0;
}

int svg_plot_line(struct svg_plot *p, int series, const double *x, const double *y, size_t n)
{
	return xy_add(p, E_LINE, series, x, y, NULL, n, 0);
}

int svg_plot_band(struct svg_plot *p, int series, const double *x, const double *lo,
		  const double *hi, size_t n)
{
	return xy_add(p, E_BAND, series, x, lo, hi, n, 0);
}

int svg_plot_points(struct svg_plot *p, int series, const double *x, const double *y, size_t n,
		    enum svg_marker marker)
{
	return xy_add(p, E_POINTS, series, x, y, NULL, n, marker);
}

static int rule_add(struct svg_plot *p, enum elem_kind kind, int series, double v,
		    const char *label)
{
	int r;
	struct elem *e = elem_add(p, kind, series, 0, &r);

	if (!e)
		return r;
	e->value = v;
	e->label = plot_strdup(p, label);
	return p->failed ? -ENOMEM : 0;
}

int svg_plot_vline(struct svg_plot *p, int series, double x, const char *label)
{
	return rule_add(p, E_VLINE, series, x, label);
}

int svg_plot_hline(struct svg_plot *p, int series, double y, const char *label)
{
	return rule_add(p, E_HLINE, series, y, label);
}
