/* SVG scales: fitting axes to the data, nice ticks and their labels, data to
 * pixels, and the quantiles the box plots draw. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/svg-internal.h"

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

double svg_scale_px(const struct scale *s, double v)
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

bool svg_scale_contains(const struct scale *s, double v)
{
	if (!isfinite(v) || (s->kind == SVG_LOG10 && v <= 0))
		return false;
	return v >= s->lo - (s->hi - s->lo) * 1e-9 && v <= s->hi + (s->hi - s->lo) * 1e-9;
}

void svg_tick_label(const struct scale *s, double v, char out[HTML_NUM_MAX])
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Type-7 quantile of sorted finite values. */
double svg_quantile(const double *v, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t i = (size_t)floor(h);

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (h - (double)i) * (v[i + 1] - v[i]);
}

/* The finite values of e->a, sorted, in a new array; *ret_n their count.
 * NULL when out of memory. */
double *svg_sorted_finite(const struct elem *e, size_t *ret_n)
{
	double *v = malloc((e->n ? e->n : 1) * sizeof(double));
	size_t n = 0;

	*ret_n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < e->n; i++)
		if (isfinite(e->a[i]))
			v[n++] = e->a[i];
	qsort(v, n, sizeof(double), cmp_double);
	*ret_n = n;
	return v;
}

void svg_fit_axes(const struct svg_plot *p, const struct layout *l, struct scale *sx,
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
