/* SVG drawing: fixed-precision numbers, escaped and cut labels, markers,
 * and one function per element kind. */
#include <math.h>
#include <string.h>

#include "report/svg-internal.h"

#define LABEL_MAX 48 /* bytes of a legend or category name that are drawn */

static const char *const dashes[] = {NULL, "7 4", "2 3", "9 3 2 3"};

/* Writes " name=\"<v with 1 decimal>\"". */
void svg_attr_num(struct html_buf *o, const char *name, double v)
{
	char n[HTML_NUM_MAX];

	html_buf_printf(o, " %s=\"%s\"", name, html_fmt_fixed(v, 1, n));
}

void svg_put_num(struct html_buf *o, double v)
{
	char n[HTML_NUM_MAX];

	html_buf_puts(o, html_fmt_fixed(v, 1, n));
}

/* Escapes at most LABEL_MAX bytes of s, cut at a UTF-8 boundary, with an
 * ellipsis when cut. */
void svg_put_label(struct html_buf *o, const char *s)
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
double svg_text_width(const char *s)
{
	size_t n = 0;

	for (const unsigned char *c = (const unsigned char *)s; c && *c; c++)
		if ((*c & 0xc0) != 0x80)
			n++;
	if (n > LABEL_MAX)
		n = LABEL_MAX + 1;
	return 7.0 * (double)n;
}

const char *svg_series_color(const struct svg_plot *p, int s)
{
	return s < 0 ? svg_palette(-1) : svg_palette(p->series[s].color);
}

static const char *series_text_color(const struct svg_plot *p, int s)
{
	return s < 0 ? svg_palette_text(-1) : svg_palette_text(p->series[s].color);
}

void svg_put_dash(struct html_buf *o, const struct svg_plot *p, int s)
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

void svg_draw_marker(struct html_buf *o, double x, double y, int marker, const char *color,
		     const char *extra)
{
	switch (marker) {
	case SVG_MARK_SQUARE:
		html_buf_puts(o, "<rect");
		svg_attr_num(o, "x", x - 3.5);
		svg_attr_num(o, "y", y - 3.5);
		html_buf_printf(o, " width=\"7\" height=\"7\" fill=\"%s\"%s/>\n", color, extra);
		break;
	case SVG_MARK_TRIANGLE:
	case SVG_MARK_DIAMOND:
		html_buf_puts(o, "<path d=\"M");
		svg_put_num(o, x);
		html_buf_puts(o, " ");
		if (marker == SVG_MARK_TRIANGLE) {
			svg_put_num(o, y - 6);
			html_buf_puts(o, " l5.5 9.5 h-11 z\"");
		} else {
			svg_put_num(o, y - 5);
			html_buf_puts(o, " l5 5 l-5 5 l-5 -5 z\"");
		}
		html_buf_printf(o, " fill=\"%s\"%s/>\n", color, extra);
		break;
	default:
		html_buf_puts(o, "<circle");
		svg_attr_num(o, "cx", x);
		svg_attr_num(o, "cy", y);
		html_buf_printf(o, " r=\"3\" fill=\"%s\"%s/>\n", color, extra);
	}
}

void svg_draw_hist(struct html_buf *o, const struct svg_plot *p, const struct elem *e,
		   const struct scale *sx, const struct scale *sy)
{
	const char *c = svg_series_color(p, e->series);
	double base = sy->px0;

	if (e->n == 0)
		return;
	if (e->style == SVG_HIST_BARS) {
		html_buf_printf(o, "<g fill=\"%s\" fill-opacity=\"0.45\">\n", c);
		for (size_t j = 0; j < e->n; j++) {
			if (!(e->b[j] > 0) || !isfinite(e->b[j]))
				continue;
			double x0 = svg_scale_px(sx, e->a[j]), x1 = svg_scale_px(sx, e->a[j + 1]);
			double y = svg_scale_px(sy, e->b[j]);
			html_buf_puts(o, "<rect");
			svg_attr_num(o, "x", x0);
			svg_attr_num(o, "y", y);
			svg_attr_num(o, "width", x1 - x0 > 0.5 ? x1 - x0 : 0.5);
			svg_attr_num(o, "height", base - y);
			html_buf_puts(o, "/>\n");
		}
		html_buf_puts(o, "</g>\n");
		return;
	}
	/* The step outline: up and across each bin, back to the axis at the end. */
	struct html_buf *d = html_buf_new();
	html_buf_puts(d, "M");
	svg_put_num(d, svg_scale_px(sx, e->a[0]));
	html_buf_puts(d, " ");
	svg_put_num(d, base);
	for (size_t j = 0; j < e->n; j++) {
		double y = isfinite(e->b[j]) ? svg_scale_px(sy, e->b[j]) : base;
		html_buf_puts(d, " V");
		svg_put_num(d, y);
		html_buf_puts(d, " H");
		svg_put_num(d, svg_scale_px(sx, e->a[j + 1]));
	}
	html_buf_puts(d, " V");
	svg_put_num(d, base);
	html_buf_printf(o, "<path d=\"%s Z\" fill=\"%s\" fill-opacity=\"0.12\" stroke=\"none\"/>\n",
			html_buf_data(d), c);
	html_buf_printf(o, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"",
			html_buf_data(d), c);
	svg_put_dash(o, p, e->series);
	html_buf_puts(o, "/>\n");
	if (html_buf_failed(d)) /* the outline is missing: the plot is not whole */
		html_buf_fail(o);
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
		double x = svg_scale_px(sx, center + frac * width * 0.5);
		html_buf_puts(o, "<circle");
		svg_attr_num(o, "cx", x);
		svg_attr_num(o, "cy", svg_scale_px(sy, v[j]));
		html_buf_puts(o, " r=\"2.5\"/>\n");
	}
	html_buf_puts(o, "</g>\n");
}

void svg_draw_hseg(struct html_buf *o, double x0, double x1, double y, const char *color,
		   double width)
{
	html_buf_puts(o, "<line");
	svg_attr_num(o, "x1", x0);
	svg_attr_num(o, "y1", y);
	svg_attr_num(o, "x2", x1);
	svg_attr_num(o, "y2", y);
	html_buf_printf(o, " stroke=\"%s\" stroke-width=\"%s\"/>\n", color,
			width >= 3   ? "3"
			: width >= 2 ? "2"
				     : "1.2");
}

void svg_draw_box(struct html_buf *o, const struct svg_plot *p, const struct layout *l,
		  const struct elem *e, const struct scale *sx, const struct scale *sy)
{
	const char *c = svg_series_color(p, e->series);
	double center, width;
	size_t n;
	_cleanup_free_ double *v = svg_sorted_finite(e, &n);

	if (!v) {
		html_buf_fail(o);
		return;
	}
	if (n == 0)
		return;
	slot_span(p, l, e, &center, &width);
	double cx = svg_scale_px(sx, center);
	double half = (svg_scale_px(sx, center + width * 0.35) - cx);
	double med = svg_scale_px(sy, svg_quantile(v, n, 0.5));

	if (e->kind == E_BOX && n >= 4) {
		double q1 = svg_scale_px(sy, svg_quantile(v, n, 0.25)),
		       q3 = svg_scale_px(sy, svg_quantile(v, n, 0.75));
		html_buf_puts(o, "<line");
		svg_attr_num(o, "x1", cx);
		svg_attr_num(o, "y1", svg_scale_px(sy, v[0]));
		svg_attr_num(o, "x2", cx);
		svg_attr_num(o, "y2", svg_scale_px(sy, v[n - 1]));
		html_buf_printf(o, " stroke=\"%s\" stroke-width=\"1.2\"/>\n", c);
		html_buf_puts(o, "<rect");
		svg_attr_num(o, "x", cx - half);
		svg_attr_num(o, "y", q3);
		svg_attr_num(o, "width", 2 * half);
		svg_attr_num(o, "height", q1 - q3 > 0.5 ? q1 - q3 : 0.5);
		html_buf_printf(o, " fill=\"%s\" fill-opacity=\"0.18\" stroke=\"%s\"/>\n", c, c);
	}
	draw_points_in_slot(o, sx, sy, v, n, center, width, c);
	svg_draw_hseg(o, cx - half, cx + half, med, c, 3);
}

void svg_draw_bar(struct html_buf *o, const struct svg_plot *p, const struct layout *l,
		  const struct elem *e, const struct scale *sx, const struct scale *sy)
{
	double center, width;

	if (!isfinite(e->value))
		return;
	slot_span(p, l, e, &center, &width);
	double x0 = svg_scale_px(sx, center - width * 0.42),
	       x1 = svg_scale_px(sx, center + width * 0.42);
	double y = svg_scale_px(sy, e->value);
	if (e->kind == E_TARGET) {
		double pad = (x1 - x0) * 0.12;
		svg_draw_hseg(o, x0 - pad, x1 + pad, y, "#000000", 3);
		return;
	}
	double base =
	    svg_scale_px(sy, sy->kind == SVG_LINEAR && svg_scale_contains(sy, 0) ? 0 : sy->lo);
	html_buf_puts(o, "<rect");
	svg_attr_num(o, "x", x0);
	svg_attr_num(o, "y", y < base ? y : base);
	svg_attr_num(o, "width", x1 - x0);
	svg_attr_num(o, "height", fabs(base - y));
	html_buf_printf(o, " fill=\"%s\" fill-opacity=\"0.85\"/>\n",
			svg_series_color(p, e->series));
	if (p->bar_labels) {
		char n[HTML_NUM_MAX];
		/* Above the target line too, when the slot has one. */
		for (size_t i = 0; i < p->n_elems; i++) {
			const struct elem *t = &p->elems[i];
			if (t->kind == E_TARGET && t->series == e->series &&
			    t->category == e->category && isfinite(t->value))
				y = fmin(y, svg_scale_px(sy, t->value) - 2);
		}
		html_buf_puts(o, "<text");
		svg_attr_num(o, "x", (x0 + x1) / 2);
		svg_attr_num(o, "y", (y < base ? y : base) - 4);
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
		svg_put_num(o, svg_scale_px(sx, x[j]));
		html_buf_puts(o, ",");
		svg_put_num(o, svg_scale_px(sy, y[j]));
		html_buf_puts(o, " ");
	}
}

void svg_draw_xy(struct html_buf *o, const struct svg_plot *p, const struct elem *e,
		 const struct scale *sx, const struct scale *sy)
{
	const char *c = svg_series_color(p, e->series);

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
		svg_put_dash(o, p, e->series);
		html_buf_puts(o, "/>\n");
	}
	html_buf_printf(o, "<g fill=\"%s\">\n", c);
	for (size_t j = 0; j < e->n; j++) {
		if (!isfinite(e->a[j]) || !isfinite(e->b[j]))
			continue;
		svg_draw_marker(o, svg_scale_px(sx, e->a[j]), svg_scale_px(sy, e->b[j]),
				e->kind == E_LINE ? SVG_MARK_CIRCLE : e->style, c,
				e->kind == E_POINTS ? " stroke=\"#000000\" stroke-width=\"0.8\""
						    : "");
	}
	html_buf_puts(o, "</g>\n");
}

void svg_draw_rule(struct html_buf *o, const struct svg_plot *p, const struct layout *l,
		   const struct elem *e, const struct scale *sx, const struct scale *sy,
		   size_t index)
{
	const char *c = svg_series_color(p, e->series);
	const char *tc = series_text_color(p, e->series);

	if (e->kind == E_VLINE) {
		if (!svg_scale_contains(sx, e->value))
			return;
		double x = svg_scale_px(sx, e->value);
		/* Stagger labels so that close lines stay readable. */
		double ty = l->top + 12 + (double)(index % 4) * 13;
		bool right = x > l->right - 90;
		html_buf_puts(o, "<line");
		svg_attr_num(o, "x1", x);
		svg_attr_num(o, "y1", l->top);
		svg_attr_num(o, "x2", x);
		svg_attr_num(o, "y2", l->bottom);
		html_buf_printf(
		    o, " stroke=\"%s\" stroke-width=\"1.4\" stroke-dasharray=\"4 3\"/>\n", c);
		html_buf_puts(o, "<text");
		svg_attr_num(o, "x", right ? x - 4 : x + 4);
		svg_attr_num(o, "y", ty);
		html_buf_printf(o, " fill=\"%s\" font-size=\"11\"%s>", tc,
				right ? " text-anchor=\"end\"" : "");
		svg_put_label(o, e->label);
		html_buf_puts(o, "</text>\n");
		return;
	}
	if (!svg_scale_contains(sy, e->value))
		return;
	double y = svg_scale_px(sy, e->value);
	html_buf_puts(o, "<line");
	svg_attr_num(o, "x1", l->left);
	svg_attr_num(o, "y1", y);
	svg_attr_num(o, "x2", l->right);
	svg_attr_num(o, "y2", y);
	html_buf_printf(o, " stroke=\"%s\" stroke-width=\"1.4\" stroke-dasharray=\"4 3\"/>\n", c);
	html_buf_puts(o, "<text");
	svg_attr_num(o, "x", l->right - 4);
	svg_attr_num(o, "y", y - 4);
	html_buf_printf(o, " fill=\"%s\" font-size=\"11\" text-anchor=\"end\">", tc);
	svg_put_label(o, e->label);
	html_buf_puts(o, "</text>\n");
}
