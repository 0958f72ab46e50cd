/* SVG charts: a retained list of elements, fitted axes with nice ticks, and a
 * renderer that writes fixed-precision numbers so output is byte-stable. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/svg.h"

#define FONT_FAMILY "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"
#define LABEL_MAX   48 /* bytes of a legend or category name that are drawn */
#define MAX_TICKS   24

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
};

/* Okabe & Ito (2008): distinguishable with protanopia, deuteranopia and
 * tritanopia. Yellow comes last: it is weak on white. */
static const char *const palette[SVG_PALETTE_SIZE] = {
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442",
};
/* The same hues dark enough for text on white (contrast >= 4.5:1). */
static const char *const palette_text[SVG_PALETTE_SIZE] = {
    "#005A8C", "#8A5A00", "#00694D", "#8E4A75", "#1F6A96", "#A33F00", "#000000", "#6B6500",
};
static const char *const dashes[] = {NULL, "7 4", "2 3", "9 3 2 3"};

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

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		abort();
	return d;
}

struct svg_plot *svg_plot_new(int width, int height)
{
	struct svg_plot *p = calloc(1, sizeof(*p));

	if (!p)
		abort();
	p->width = width < 120 ? 120 : width > 4000 ? 4000 : width;
	p->height = height < 120 ? 120 : height > 4000 ? 4000 : height;
	p->elems = calloc(SVG_MAX_ELEMENTS, sizeof(*p->elems));
	if (!p->elems)
		abort();
	return p;
}

void svg_plot_free(struct svg_plot *p)
{
	if (!p)
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
	free(p->title);
	p->title = xstrdup(title);
}

void svg_plot_x_axis(struct svg_plot *p, enum svg_scale scale, const char *label)
{
	p->x.scale = scale;
	free(p->x.label);
	p->x.label = xstrdup(label);
}

void svg_plot_y_axis(struct svg_plot *p, enum svg_scale scale, const char *label)
{
	/* Dates on y are not needed by any chart; keep y numeric. */
	p->y.scale = scale == SVG_TIME ? SVG_LINEAR : scale;
	free(p->y.label);
	p->y.label = xstrdup(label);
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
	axis_set_range(&p->x, min, max);
}

void svg_plot_y_range(struct svg_plot *p, double min, double max)
{
	axis_set_range(&p->y, min, max);
}

void svg_plot_y_include(struct svg_plot *p, double v)
{
	if (!isfinite(v))
		return;
	p->y.has_include = true;
	p->y.include = v;
}

int svg_plot_x_categories(struct svg_plot *p, const char *const *names, size_t n)
{
	if (n > SVG_MAX_CATEGORIES)
		return -E2BIG;
	for (size_t i = 0; i < p->n_categories; i++)
		free(p->categories[i]);
	free(p->categories);
	p->categories = calloc(n ? n : 1, sizeof(char *));
	if (!p->categories)
		abort();
	for (size_t i = 0; i < n; i++)
		p->categories[i] = xstrdup(names[i]);
	p->n_categories = n;
	return 0;
}

void svg_plot_bar_labels(struct svg_plot *p, bool on)
{
	p->bar_labels = on;
}

void svg_plot_target_label(struct svg_plot *p, const char *label)
{
	free(p->target_label);
	p->target_label = xstrdup(label);
}

int svg_plot_add_series(struct svg_plot *p, const char *name, int color, bool dashed)
{
	if (p->n_series >= SVG_MAX_SERIES)
		return -E2BIG;
	struct series *s = &p->series[p->n_series];
	s->name = xstrdup(name);
	s->color = color < 0 ? 0 : color;
	s->dashed = dashed;
	s->slot = -1;
	return (int)p->n_series++;
}

static double *dup_array(const double *v, size_t n)
{
	double *d;

	if (!v || n == 0)
		return NULL;
	d = malloc(n * sizeof(double));
	if (!d)
		abort();
	memcpy(d, v, n * sizeof(double));
	return d;
}

static struct elem *elem_add(struct svg_plot *p, enum elem_kind kind, int series, size_t n,
			     int *ret)
{
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
	e->a = dup_array(values, n);
	e->value = value;
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
	e->a = dup_array(edges, n ? n + 1 : 0);
	e->b = dup_array(counts, n);
	e->style = style;
	return 0;
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
	e->a = dup_array(x, n);
	e->b = dup_array(y, n);
	e->c = dup_array(y2, n);
	e->style = style;
	return 0;
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
	e->label = xstrdup(label);
	return 0;
}

int svg_plot_vline(struct svg_plot *p, int series, double x, const char *label)
{
	return rule_add(p, E_VLINE, series, x, label);
}

int svg_plot_hline(struct svg_plot *p, int series, double y, const char *label)
{
	return rule_add(p, E_HLINE, series, y, label);
}

/* ---- rendering ---- */

struct extent {
	double lo, hi;
	bool any;
};

static void extent_add(struct extent *x, double v, enum svg_scale scale)
{
	if (!isfinite(v) || (scale == SVG_LOG10 && v <= 0))
		return;
	if (!x->any) {
		x->lo = x->hi = v;
		x->any = true;
		return;
	}
	if (v < x->lo)
		x->lo = v;
	if (v > x->hi)
		x->hi = v;
}

/* A fitted axis: the range and its ticks. */
struct scale {
	enum svg_scale kind;
	double lo, hi;
	double ticks[MAX_TICKS];
	size_t n_ticks;
	double step;	 /* linear and time: tick spacing */
	double px0, px1; /* pixel positions of lo and hi */
};

static double nice_step(double raw)
{
	double mag = pow(10, floor(log10(raw)));
	double f = raw / mag;

	if (f <= 1)
		return mag;
	if (f <= 2)
		return 2 * mag;
	if (f <= 2.5)
		return 2.5 * mag;
	if (f <= 5)
		return 5 * mag;
	return 10 * mag;
}

static void fit_linear(struct scale *s, double lo, double hi, int target, bool fixed)
{
	if (!(hi > lo)) {
		double pad = lo == 0 ? 1 : fabs(lo) * 0.1;
		lo -= pad;
		hi += pad;
	}
	s->step = nice_step((hi - lo) / target);
	if (!fixed) {
		lo = floor(lo / s->step + 1e-9) * s->step;
		hi = ceil(hi / s->step - 1e-9) * s->step;
	}
	s->lo = lo;
	s->hi = hi;
	s->n_ticks = 0;
	for (double t = ceil(lo / s->step - 1e-9); s->n_ticks < MAX_TICKS; t += 1) {
		double v = t * s->step;
		if (v > hi + s->step * 1e-9)
			break;
		s->ticks[s->n_ticks++] = fabs(v) < s->step * 1e-9 ? 0 : v;
	}
}

static void fit_log(struct scale *s, double lo, double hi, bool fixed)
{
	if (!(lo > 0))
		lo = hi > 0 ? hi / 10 : 1;
	if (!(hi > lo))
		hi = lo * 10;
	double elo = floor(log10(lo) + 1e-9), ehi = ceil(log10(hi) - 1e-9);
	if (ehi <= elo)
		ehi = elo + 1;
	if (!fixed) {
		lo = pow(10, elo);
		hi = pow(10, ehi);
	}
	s->lo = lo;
	s->hi = hi;
	int every = (int)ceil((ehi - elo) / 8);
	if (every < 1)
		every = 1;
	s->n_ticks = 0;
	for (double e = elo; e <= ehi && s->n_ticks < MAX_TICKS; e += every) {
		double v = pow(10, e);
		if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9))
			s->ticks[s->n_ticks++] = v;
	}
}

static void fit_time(struct scale *s, double lo, double hi, int target, bool fixed)
{
	static const double steps[] = {
	    3600,      2 * 3600,  3 * 3600,   6 * 3600,	  12 * 3600,  86400,
	    2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400, 91 * 86400, 364 * 86400,
	};

	if (!(hi > lo)) {
		lo -= 43200;
		hi += 43200;
	}
	s->step = steps[ELEMENTSOF(steps) - 1];
	for (size_t i = 0; i < ELEMENTSOF(steps); i++)
		if ((hi - lo) / steps[i] <= target) {
			s->step = steps[i];
			break;
		}
	if (!fixed) {
		lo = floor(lo / s->step) * s->step;
		hi = ceil(hi / s->step) * s->step;
	}
	s->lo = lo;
	s->hi = hi;
	s->n_ticks = 0;
	for (double v = ceil(lo / s->step) * s->step; v <= hi && s->n_ticks < MAX_TICKS;
	     v += s->step)
		s->ticks[s->n_ticks++] = v;
}

static double scale_px(const struct scale *s, double v)
{
	double f;

	if (s->kind == SVG_LOG10) {
		if (!(v > 0))
			return s->px0;
		f = (log10(v) - log10(s->lo)) / (log10(s->hi) - log10(s->lo));
	} else {
		f = (v - s->lo) / (s->hi - s->lo);
	}
	if (!isfinite(f))
		f = 0;
	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	return s->px0 + f * (s->px1 - s->px0);
}

static bool scale_contains(const struct scale *s, double v)
{
	if (!isfinite(v) || (s->kind == SVG_LOG10 && v <= 0))
		return false;
	return v >= s->lo - (s->hi - s->lo) * 1e-9 && v <= s->hi + (s->hi - s->lo) * 1e-9;
}

static void tick_label(const struct scale *s, double v, char out[HTML_NUM_MAX])
{
	if (s->kind == SVG_TIME) {
		time_t t = (time_t)v;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(out, HTML_NUM_MAX, s->step < 86400 ? "%m-%d %H:%M" : "%Y-%m-%d", &tm);
		return;
	}
	double a = fabs(v);
	int decimals = 0;
	/* Enough decimals to tell ticks apart: those of the step (0.25 -> 2). */
	double unit = s->kind == SVG_LOG10 ? a : s->step;
	while (decimals < 9 && unit > 0 &&
	       fabs(unit * pow(10, decimals) - round(unit * pow(10, decimals))) > 1e-6)
		decimals++;
	if (a >= 1e6 && fmod(a, 1e5) == 0) {
		html_fmt_fixed(v / 1e6, 1, out);
		strcat(out, "M");
	} else if (a >= 1e4 && fmod(a, 100) == 0) {
		html_fmt_fixed(v / 1e3, 1, out);
		strcat(out, "k");
	} else {
		html_fmt_fixed(v, decimals, out);
	}
}

/* Writes " name=\"<v with 1 decimal>\"". */
static void attr_num(struct html_buf *o, const char *name, double v)
{
	char n[HTML_NUM_MAX];

	html_buf_printf(o, " %s=\"%s\"", name, html_fmt_fixed(v, 1, n));
}

static void put_num(struct html_buf *o, double v)
{
	char n[HTML_NUM_MAX];

	html_buf_puts(o, html_fmt_fixed(v, 1, n));
}

/* Escapes at most LABEL_MAX bytes of s, cut at a UTF-8 boundary, with an
 * ellipsis when cut. */
static void put_label(struct html_buf *o, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n <= LABEL_MAX) {
		html_buf_escape(o, s);
		return;
	}
	n = LABEL_MAX;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	html_buf_escape_n(o, s, n);
	html_buf_puts(o, "\xe2\x80\xa6");
}

/* A rough text width for layout: 12 px DejaVu Sans averages ~7 px. */
static double text_width(const char *s)
{
	size_t n = 0;

	for (const unsigned char *c = (const unsigned char *)s; c && *c; c++)
		if ((*c & 0xc0) != 0x80)
			n++;
	if (n > LABEL_MAX)
		n = LABEL_MAX + 1;
	return 7.0 * (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Type-7 quantile of sorted finite values. */
static double quantile(const double *v, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t i = (size_t)floor(h);

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (h - (double)i) * (v[i + 1] - v[i]);
}

/* The finite values of e->a, sorted, in a new array; *ret_n their count. */
static double *sorted_finite(const struct elem *e, size_t *ret_n)
{
	double *v = malloc((e->n ? e->n : 1) * sizeof(double));
	size_t n = 0;

	if (!v)
		abort();
	for (size_t i = 0; i < e->n; i++)
		if (isfinite(e->a[i]))
			v[n++] = e->a[i];
	qsort(v, n, sizeof(double), cmp_double);
	*ret_n = n;
	return v;
}

struct layout {
	double left, right, top, bottom;
	size_t n_slots;
	bool has_target;
};

static void fit_axes(const struct svg_plot *p, const struct layout *l, struct scale *sx,
		     struct scale *sy)
{
	struct extent ex = {0}, ey = {0};

	for (size_t i = 0; i < p->n_elems; i++) {
		const struct elem *e = &p->elems[i];
		switch (e->kind) {
		case E_HIST:
			for (size_t j = 0; j < e->n; j++) {
				extent_add(&ex, e->a[j], p->x.scale);
				extent_add(&ex, e->a[j + 1], p->x.scale);
				extent_add(&ey, e->b[j], p->y.scale);
			}
			if (p->y.scale == SVG_LINEAR)
				extent_add(&ey, 0, SVG_LINEAR);
			break;
		case E_BOX:
		case E_STRIP:
			for (size_t j = 0; j < e->n; j++)
				extent_add(&ey, e->a[j], p->y.scale);
			break;
		case E_BAR:
			if (p->y.scale == SVG_LINEAR)
				extent_add(&ey, 0, SVG_LINEAR);
			/* fall through */
		case E_TARGET:
		case E_HLINE:
			extent_add(&ey, e->value, p->y.scale);
			break;
		case E_LINE:
		case E_POINTS:
		case E_BAND:
			for (size_t j = 0; j < e->n; j++) {
				extent_add(&ex, e->a[j], p->x.scale);
				extent_add(&ey, e->b[j], p->y.scale);
				if (e->c)
					extent_add(&ey, e->c[j], p->y.scale);
			}
			break;
		case E_VLINE:
			extent_add(&ex, e->value, p->x.scale);
			break;
		}
	}
	if (p->y.has_include)
		extent_add(&ey, p->y.include, p->y.scale);

	sx->kind = p->n_categories ? SVG_LINEAR : p->x.scale;
	sy->kind = p->y.scale;
	sx->px0 = l->left;
	sx->px1 = l->right;
	sy->px0 = l->bottom;
	sy->px1 = l->top;

	int xt = (int)((l->right - l->left) / (sx->kind == SVG_TIME ? 110 : 80));
	int yt = (int)((l->bottom - l->top) / 45);
	if (xt < 2)
		xt = 2;
	if (yt < 2)
		yt = 2;

	if (p->n_categories) {
		sx->lo = 0;
		sx->hi = (double)p->n_categories;
		sx->n_ticks = 0;
	} else {
		double lo = p->x.fixed ? p->x.min : ex.any ? ex.lo : 0;
		double hi = p->x.fixed ? p->x.max : ex.any ? ex.hi : 1;
		if (sx->kind == SVG_LOG10)
			fit_log(sx, lo, hi, p->x.fixed);
		else if (sx->kind == SVG_TIME)
			fit_time(sx, lo, hi, xt, p->x.fixed);
		else
			fit_linear(sx, lo, hi, xt, p->x.fixed);
	}
	double lo = p->y.fixed ? p->y.min : ey.any ? ey.lo : 0;
	double hi = p->y.fixed ? p->y.max : ey.any ? ey.hi : 1;
	if (sy->kind == SVG_LOG10)
		fit_log(sy, lo, hi, p->y.fixed);
	else
		fit_linear(sy, lo, hi, yt, p->y.fixed);
}

static const char *series_color(const struct svg_plot *p, int s)
{
	return s < 0 ? svg_palette(-1) : svg_palette(p->series[s].color);
}

static const char *series_text_color(const struct svg_plot *p, int s)
{
	return s < 0 ? svg_palette_text(-1) : svg_palette_text(p->series[s].color);
}

static void put_dash(struct html_buf *o, const struct svg_plot *p, int s)
{
	if (s < 0 || !p->series[s].dashed)
		return;
	/* Dashed series differ among themselves by pattern, not only colour. */
	int k = 0;
	for (int i = 0; i <= s; i++)
		if (p->series[i].dashed)
			k++;
	html_buf_printf(o, " stroke-dasharray=\"%s\"", dashes[1 + (k - 1) % 3]);
}

/* The centre and width, in data units, of a series' slot in a category. */
static void slot_span(const struct svg_plot *p, const struct layout *l, const struct elem *e,
		      double *ret_center, double *ret_width)
{
	double w = 0.8 / (double)(l->n_slots ? l->n_slots : 1);
	int slot = p->series[e->series].slot;

	*ret_width = w;
	*ret_center = (double)e->category + 0.1 + w * ((double)slot + 0.5);
}

static void draw_marker(struct html_buf *o, double x, double y, int marker, const char *color,
			const char *extra)
{
	switch (marker) {
	case SVG_MARK_SQUARE:
		html_buf_puts(o, "<rect");
		attr_num(o, "x", x - 3.5);
		attr_num(o, "y", y - 3.5);
		html_buf_printf(o, " width=\"7\" height=\"7\" fill=\"%s\"%s/>\n", color, extra);
		break;
	case SVG_MARK_TRIANGLE:
	case SVG_MARK_DIAMOND:
		html_buf_puts(o, "<path d=\"M");
		put_num(o, x);
		html_buf_puts(o, " ");
		if (marker == SVG_MARK_TRIANGLE) {
			put_num(o, y - 6);
			html_buf_puts(o, " l5.5 9.5 h-11 z\"");
		} else {
			put_num(o, y - 5);
			html_buf_puts(o, " l5 5 l-5 5 l-5 -5 z\"");
		}
		html_buf_printf(o, " fill=\"%s\"%s/>\n", color, extra);
		break;
	default:
		html_buf_puts(o, "<circle");
		attr_num(o, "cx", x);
		attr_num(o, "cy", y);
		html_buf_printf(o, " r=\"3\" fill=\"%s\"%s/>\n", color, extra);
	}
}

static void draw_hist(struct html_buf *o, const struct svg_plot *p, const struct elem *e,
		      const struct scale *sx, const struct scale *sy)
{
	const char *c = series_color(p, e->series);
	double base = sy->px0;

	if (e->n == 0)
		return;
	if (e->style == SVG_HIST_BARS) {
		html_buf_printf(o, "<g fill=\"%s\" fill-opacity=\"0.45\">\n", c);
		for (size_t j = 0; j < e->n; j++) {
			if (!(e->b[j] > 0) || !isfinite(e->b[j]))
				continue;
			double x0 = scale_px(sx, e->a[j]), x1 = scale_px(sx, e->a[j + 1]);
			double y = scale_px(sy, e->b[j]);
			html_buf_puts(o, "<rect");
			attr_num(o, "x", x0);
			attr_num(o, "y", y);
			attr_num(o, "width", x1 - x0 > 0.5 ? x1 - x0 : 0.5);
			attr_num(o, "height", base - y);
			html_buf_puts(o, "/>\n");
		}
		html_buf_puts(o, "</g>\n");
		return;
	}
	/* The step outline: up and across each bin, back to the axis at the end. */
	struct html_buf *d = html_buf_new();
	html_buf_puts(d, "M");
	put_num(d, scale_px(sx, e->a[0]));
	html_buf_puts(d, " ");
	put_num(d, base);
	for (size_t j = 0; j < e->n; j++) {
		double y = isfinite(e->b[j]) ? scale_px(sy, e->b[j]) : base;
		html_buf_puts(d, " V");
		put_num(d, y);
		html_buf_puts(d, " H");
		put_num(d, scale_px(sx, e->a[j + 1]));
	}
	html_buf_puts(d, " V");
	put_num(d, base);
	html_buf_printf(o, "<path d=\"%s Z\" fill=\"%s\" fill-opacity=\"0.12\" stroke=\"none\"/>\n",
			html_buf_data(d), c);
	html_buf_printf(o, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"",
			html_buf_data(d), c);
	put_dash(o, p, e->series);
	html_buf_puts(o, "/>\n");
	html_buf_free(d);
}

static void draw_points_in_slot(struct html_buf *o, const struct scale *sx, const struct scale *sy,
				const double *v, size_t n, double center, double width,
				const char *color)
{
	/* At most 2000 dots per element: beyond that they only add bytes. */
	size_t stride = n > 2000 ? (n + 1999) / 2000 : 1;

	html_buf_printf(o, "<g fill=\"%s\" fill-opacity=\"0.55\">\n", color);
	for (size_t j = 0; j < n; j += stride) {
		/* A fixed golden-ratio sequence spreads the dots without randomness. */
		double frac = fmod((double)j * 0.6180339887, 1.0) - 0.5;
		double x = scale_px(sx, center + frac * width * 0.5);
		html_buf_puts(o, "<circle");
		attr_num(o, "cx", x);
		attr_num(o, "cy", scale_px(sy, v[j]));
		html_buf_puts(o, " r=\"2.5\"/>\n");
	}
	html_buf_puts(o, "</g>\n");
}

static void draw_hseg(struct html_buf *o, double x0, double x1, double y, const char *color,
		      double width)
{
	html_buf_puts(o, "<line");
	attr_num(o, "x1", x0);
	attr_num(o, "y1", y);
	attr_num(o, "x2", x1);
	attr_num(o, "y2", y);
	html_buf_printf(o, " stroke=\"%s\" stroke-width=\"%s\"/>\n", color,
			width >= 3   ? "3"
			: width >= 2 ? "2"
				     : "1.2");
}

static void draw_box(struct html_buf *o, const struct svg_plot *p, const struct layout *l,
		     const struct elem *e, const struct scale *sx, const struct scale *sy)
{
	const char *c = series_color(p, e->series);
	double center, width;
	size_t n;
	_cleanup_free_ double *v = sorted_finite(e, &n);

	if (n == 0)
		return;
	slot_span(p, l, e, &center, &width);
	double cx = scale_px(sx, center);
	double half = (scale_px(sx, center + width * 0.35) - cx);
	double med = scale_px(sy, quantile(v, n, 0.5));

	if (e->kind == E_BOX && n >= 4) {
		double q1 = scale_px(sy, quantile(v, n, 0.25)),
		       q3 = scale_px(sy, quantile(v, n, 0.75));
		html_buf_puts(o, "<line");
		attr_num(o, "x1", cx);
		attr_num(o, "y1", scale_px(sy, v[0]));
		attr_num(o, "x2", cx);
		attr_num(o, "y2", scale_px(sy, v[n - 1]));
		html_buf_printf(o, " stroke=\"%s\" stroke-width=\"1.2\"/>\n", c);
		html_buf_puts(o, "<rect");
		attr_num(o, "x", cx - half);
		attr_num(o, "y", q3);
		attr_num(o, "width", 2 * half);
		attr_num(o, "height", q1 - q3 > 0.5 ? q1 - q3 : 0.5);
		html_buf_printf(o, " fill=\"%s\" fill-opacity=\"0.18\" stroke=\"%s\"/>\n", c, c);
	}
	draw_points_in_slot(o, sx, sy, v, n, center, width, c);
	draw_hseg(o, cx - half, cx + half, med, c, 3);
}

static void draw_bar(struct html_buf *o, const struct svg_plot *p, const struct layout *l,
		     const struct elem *e, const struct scale *sx, const struct scale *sy)
{
	double center, width;

	if (!isfinite(e->value))
		return;
	slot_span(p, l, e, &center, &width);
	double x0 = scale_px(sx, center - width * 0.42), x1 = scale_px(sx, center + width * 0.42);
	double y = scale_px(sy, e->value);
	if (e->kind == E_TARGET) {
		double pad = (x1 - x0) * 0.12;
		draw_hseg(o, x0 - pad, x1 + pad, y, "#000000", 3);
		return;
	}
	double base = scale_px(sy, sy->kind == SVG_LINEAR && scale_contains(sy, 0) ? 0 : sy->lo);
	html_buf_puts(o, "<rect");
	attr_num(o, "x", x0);
	attr_num(o, "y", y < base ? y : base);
	attr_num(o, "width", x1 - x0);
	attr_num(o, "height", fabs(base - y));
	html_buf_printf(o, " fill=\"%s\" fill-opacity=\"0.85\"/>\n", series_color(p, e->series));
	if (p->bar_labels) {
		char n[HTML_NUM_MAX];
		/* Above the target line too, when the slot has one. */
		for (size_t i = 0; i < p->n_elems; i++) {
			const struct elem *t = &p->elems[i];
			if (t->kind == E_TARGET && t->series == e->series &&
			    t->category == e->category && isfinite(t->value))
				y = fmin(y, scale_px(sy, t->value) - 2);
		}
		html_buf_puts(o, "<text");
		attr_num(o, "x", (x0 + x1) / 2);
		attr_num(o, "y", (y < base ? y : base) - 4);
		html_buf_printf(o,
				" text-anchor=\"middle\" font-size=\"11\" fill=\"%s\">%s</text>\n",
				series_text_color(p, e->series), html_fmt_value(e->value, n));
	}
}

static void put_xy_list(struct html_buf *o, const struct scale *sx, const struct scale *sy,
			const double *x, const double *y, size_t n, bool reverse)
{
	for (size_t k = 0; k < n; k++) {
		size_t j = reverse ? n - 1 - k : k;
		if (!isfinite(x[j]) || !isfinite(y[j]))
			continue;
		put_num(o, scale_px(sx, x[j]));
		html_buf_puts(o, ",");
		put_num(o, scale_px(sy, y[j]));
		html_buf_puts(o, " ");
	}
}

static void draw_xy(struct html_buf *o, const struct svg_plot *p, const struct elem *e,
		    const struct scale *sx, const struct scale *sy)
{
	const char *c = series_color(p, e->series);

	if (e->n == 0)
		return;
	if (e->kind == E_BAND) {
		html_buf_puts(o, "<polygon points=\"");
		put_xy_list(o, sx, sy, e->a, e->b, e->n, false);
		put_xy_list(o, sx, sy, e->a, e->c, e->n, true);
		html_buf_printf(o, "\" fill=\"%s\" fill-opacity=\"0.18\" stroke=\"none\"/>\n", c);
		return;
	}
	if (e->kind == E_LINE) {
		html_buf_puts(o, "<polyline points=\"");
		put_xy_list(o, sx, sy, e->a, e->b, e->n, false);
		html_buf_printf(o, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"", c);
		put_dash(o, p, e->series);
		html_buf_puts(o, "/>\n");
	}
	html_buf_printf(o, "<g fill=\"%s\">\n", c);
	for (size_t j = 0; j < e->n; j++) {
		if (!isfinite(e->a[j]) || !isfinite(e->b[j]))
			continue;
		draw_marker(o, scale_px(sx, e->a[j]), scale_px(sy, e->b[j]),
			    e->kind == E_LINE ? SVG_MARK_CIRCLE : e->style, c,
			    e->kind == E_POINTS ? " stroke=\"#000000\" stroke-width=\"0.8\"" : "");
	}
	html_buf_puts(o, "</g>\n");
}

static void draw_rule(struct html_buf *o, const struct svg_plot *p, const struct layout *l,
		      const struct elem *e, const struct scale *sx, const struct scale *sy,
		      size_t index)
{
	const char *c = series_color(p, e->series);
	const char *tc = series_text_color(p, e->series);

	if (e->kind == E_VLINE) {
		if (!scale_contains(sx, e->value))
			return;
		double x = scale_px(sx, e->value);
		/* Stagger labels so that close lines stay readable. */
		double ty = l->top + 12 + (double)(index % 4) * 13;
		bool right = x > l->right - 90;
		html_buf_puts(o, "<line");
		attr_num(o, "x1", x);
		attr_num(o, "y1", l->top);
		attr_num(o, "x2", x);
		attr_num(o, "y2", l->bottom);
		html_buf_printf(
		    o, " stroke=\"%s\" stroke-width=\"1.4\" stroke-dasharray=\"4 3\"/>\n", c);
		html_buf_puts(o, "<text");
		attr_num(o, "x", right ? x - 4 : x + 4);
		attr_num(o, "y", ty);
		html_buf_printf(o, " fill=\"%s\" font-size=\"11\"%s>", tc,
				right ? " text-anchor=\"end\"" : "");
		put_label(o, e->label);
		html_buf_puts(o, "</text>\n");
		return;
	}
	if (!scale_contains(sy, e->value))
		return;
	double y = scale_px(sy, e->value);
	html_buf_puts(o, "<line");
	attr_num(o, "x1", l->left);
	attr_num(o, "y1", y);
	attr_num(o, "x2", l->right);
	attr_num(o, "y2", y);
	html_buf_printf(o, " stroke=\"%s\" stroke-width=\"1.4\" stroke-dasharray=\"4 3\"/>\n", c);
	html_buf_puts(o, "<text");
	attr_num(o, "x", l->right - 4);
	attr_num(o, "y", y - 4);
	html_buf_printf(o, " fill=\"%s\" font-size=\"11\" text-anchor=\"end\">", tc);
	put_label(o, e->label);
	html_buf_puts(o, "</text>\n");
}

/* The legend: one row of entries, wrapped to the plot's width. Returns the
 * rows used; draws only when o is not NULL. */
static int legend(struct html_buf *o, const struct svg_plot *p, const struct layout *l, double y0)
{
	double x = l->left, y = y0;
	int rows = 0;
	bool row_open = false;

	for (size_t i = 0; i <= p->n_series; i++) {
		const char *name;
		bool line = false, band = false, target = false;
		int marker = -1;
		int s = (int)i;

		if (i == p->n_series) {
			if (!l->has_target)
				break;
			name = p->target_label ? p->target_label : "target";
			target = true;
		} else {
			name = p->series[i].name;
			if (!name || !*name)
				continue;
			/* The swatch follows what the series draws: a line for
			 * lines and step outlines, a square for boxes and bars,
			 * its marker for points; rules count only when alone. */
			bool rule = false, fill = false;
			for (size_t j = 0; j < p->n_elems; j++)
				if (p->elems[j].series == s) {
					enum elem_kind k = p->elems[j].kind;
					line = line || k == E_LINE ||
					       (k == E_HIST && p->elems[j].style == SVG_HIST_STEP);
					rule = rule || k == E_VLINE || k == E_HLINE;
					fill = fill || k == E_BOX || k == E_STRIP || k == E_BAR ||
					       k == E_HIST;
					band = band || k == E_BAND;
					if (k == E_POINTS && marker < 0)
						marker = p->elems[j].style;
				}
			line = line || (rule && !fill && marker < 0);
		}
		double w = 24 + text_width(name) + 16;
		if (row_open && x + w > l->right) {
			x = l->left;
			y += 18;
			row_open = false;
		}
		if (!row_open) {
			rows++;
			row_open = true;
		}
		if (o) {
			if (target) {
				draw_hseg(o, x, x + 18, y - 4, "#000000", 3);
			} else if (marker >= 0 && !line) {
				draw_marker(o, x + 9, y - 4, marker, series_color(p, s),
					    " stroke=\"#000000\" stroke-width=\"0.8\"");
			} else if (line) {
				if (band) {
					html_buf_puts(o, "<rect");
					attr_num(o, "x", x);
					attr_num(o, "y", y - 10);
					html_buf_printf(o,
							" width=\"18\" height=\"12\" fill=\"%s\" "
							"fill-opacity=\"0.18\"/>\n",
							series_color(p, s));
				}
				html_buf_puts(o, "<line");
				attr_num(o, "x1", x);
				attr_num(o, "y1", y - 4);
				attr_num(o, "x2", x + 18);
				attr_num(o, "y2", y - 4);
				html_buf_printf(o, " stroke=\"%s\" stroke-width=\"2.5\"",
						series_color(p, s));
				put_dash(o, p, s);
				html_buf_puts(o, "/>\n");
			} else {
				html_buf_puts(o, "<rect");
				attr_num(o, "x", x + 3);
				attr_num(o, "y", y - 10);
				html_buf_printf(o, " width=\"12\" height=\"12\" fill=\"%s\"/>\n",
						series_color(p, s));
			}
			html_buf_puts(o, "<text");
			attr_num(o, "x", x + 24);
			attr_num(o, "y", y);
			html_buf_puts(o, ">");
			put_label(o, name);
			html_buf_puts(o, "</text>\n");
		}
		x += w;
	}
	return rows;
}

void svg_plot_render_to(const struct svg_plot *p, struct html_buf *o)
{
	struct layout l = {0};
	struct scale sx = {0}, sy = {0};
	char n1[HTML_NUM_MAX];

	for (size_t i = 0; i < p->n_series; i++)
		if (p->series[i].slot >= 0)
			l.n_slots++;
	for (size_t i = 0; i < p->n_elems; i++)
		if (p->elems[i].kind == E_TARGET)
			l.has_target = true;
	l.left = 64;
	l.right = p->width - 16;
	int rows = legend(NULL, p, &l, 0);
	l.top = (p->title && *p->title ? 30 : 8) + rows * 18 + 14;
	l.bottom = p->height - (p->x.label && *p->x.label ? 46 : 28);
	if (l.bottom < l.top + 20)
		l.bottom = l.top + 20;
	fit_axes(p, &l, &sx, &sy);

	html_buf_printf(o,
			"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			"viewBox=\"0 0 %d %d\" role=\"img\" font-family=\"%s\" font-size=\"12\" "
			"aria-label=\"",
			p->width, p->height, p->width, p->height, FONT_FAMILY);
	html_buf_escape(o, p->title);
	html_buf_puts(o, "\">\n<title>");
	html_buf_escape(o, p->title);
	html_buf_printf(o, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
			p->width, p->height);
	if (p->title && *p->title) {
		html_buf_puts(o, "<text x=\"64\" y=\"20\" font-size=\"14\" font-weight=\"bold\" "
				 "fill=\"#222222\">");
		html_buf_escape(o, p->title);
		html_buf_puts(o, "</text>\n");
	}
	legend(o, p, &l, (p->title && *p->title ? 30 : 8) + 12);

	/* Grid and tick labels. */
	html_buf_puts(o, "<g stroke=\"#e3e3e3\" stroke-width=\"1\">\n");
	for (size_t i = 0; i < sy.n_ticks; i++) {
		double y = scale_px(&sy, sy.ticks[i]);
		html_buf_puts(o, "<line");
		attr_num(o, "x1", l.left);
		attr_num(o, "y1", y);
		attr_num(o, "x2", l.right);
		attr_num(o, "y2", y);
		html_buf_puts(o, "/>\n");
	}
	for (size_t i = 0; i < sx.n_ticks; i++) {
		double x = scale_px(&sx, sx.ticks[i]);
		html_buf_puts(o, "<line");
		attr_num(o, "x1", x);
		attr_num(o, "y1", l.top);
		attr_num(o, "x2", x);
		attr_num(o, "y2", l.bottom);
		html_buf_puts(o, "/>\n");
	}
	html_buf_puts(o, "</g>\n<g fill=\"#333333\" font-size=\"11\">\n");
	for (size_t i = 0; i < sy.n_ticks; i++) {
		char t[HTML_NUM_MAX];
		tick_label(&sy, sy.ticks[i], t);
		html_buf_puts(o, "<text");
		attr_num(o, "x", l.left - 6);
		attr_num(o, "y", scale_px(&sy, sy.ticks[i]) + 4);
		html_buf_printf(o, " text-anchor=\"end\">%s</text>\n", t);
	}
	for (size_t i = 0; i < sx.n_ticks; i++) {
		char t[HTML_NUM_MAX];
		double x = scale_px(&sx, sx.ticks[i]);
		tick_label(&sx, sx.ticks[i], t);
		/* A label that would run off the right edge ends at the tick. */
		bool end = x + text_width(t) * 0.85 / 2 > p->width - 2;
		html_buf_puts(o, "<text");
		attr_num(o, "x", end ? fmin(x, p->width - 2) : x);
		attr_num(o, "y", l.bottom + 16);
		html_buf_printf(o, " text-anchor=\"%s\">%s</text>\n", end ? "end" : "middle", t);
	}
	for (size_t i = 0; i < p->n_categories; i++) {
		html_buf_puts(o, "<text");
		attr_num(o, "x", scale_px(&sx, (double)i + 0.5));
		attr_num(o, "y", l.bottom + 16);
		html_buf_puts(o, " text-anchor=\"middle\">");
		put_label(o, p->categories[i]);
		html_buf_puts(o, "</text>\n");
	}
	html_buf_puts(o, "</g>\n");
	if (p->x.label && *p->x.label) {
		html_buf_puts(o, "<text");
		attr_num(o, "x", (l.left + l.right) / 2);
		attr_num(o, "y", p->height - 10);
		html_buf_puts(o, " text-anchor=\"middle\" fill=\"#222222\">");
		html_buf_escape(o, p->x.label);
		html_buf_puts(o, "</text>\n");
	}
	if (p->y.label && *p->y.label) {
		html_fmt_fixed((l.top + l.bottom) / 2, 1, n1);
		html_buf_printf(o,
				"<text x=\"16\" y=\"%s\" transform=\"rotate(-90 16 %s)\" "
				"text-anchor=\"middle\" fill=\"#222222\">",
				n1, n1);
		html_buf_escape(o, p->y.label);
		html_buf_puts(o, "</text>\n");
	}

	/* Bands and histogram fills first, so lines and dots stay on top. */
	for (int pass = 0; pass < 2; pass++) {
		size_t rules = 0;
		for (size_t i = 0; i < p->n_elems; i++) {
			const struct elem *e = &p->elems[i];
			bool back = e->kind == E_BAND || e->kind == E_HIST;
			if (back != (pass == 0))
				continue;
			switch (e->kind) {
			case E_HIST:
				draw_hist(o, p, e, &sx, &sy);
				break;
			case E_BOX:
			case E_STRIP:
				draw_box(o, p, &l, e, &sx, &sy);
				break;
			case E_BAR:
			case E_TARGET:
				draw_bar(o, p, &l, e, &sx, &sy);
				break;
			case E_LINE:
			case E_BAND:
			case E_POINTS:
				draw_xy(o, p, e, &sx, &sy);
				break;
			case E_VLINE:
			case E_HLINE:
				draw_rule(o, p, &l, e, &sx, &sy, rules++);
				break;
			}
		}
	}

	/* Axes last, over the data's edges. */
	html_buf_puts(o, "<path d=\"M");
	put_num(o, l.left);
	html_buf_puts(o, " ");
	put_num(o, l.top);
	html_buf_puts(o, " V");
	put_num(o, l.bottom);
	html_buf_puts(o, " H");
	put_num(o, l.right);
	html_buf_puts(o, "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n</svg>\n");
}

char *svg_plot_render(const struct svg_plot *p)
{
	struct html_buf *o = html_buf_new();

	svg_plot_render_to(p, o);
	return html_buf_steal(o);
}
