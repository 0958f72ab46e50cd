/* SVG rendering: the layout, the legend, grid, ticks and labels, the elements
 * back to front, and the axes, into one <svg> element. */
#include <math.h>

#include "report/svg-internal.h"

#define FONT_FAMILY "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"

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
		double w = 24 + svg_text_width(name) + 16;
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
				svg_draw_hseg(o, x, x + 18, y - 4, "#000000", 3);
			} else if (marker >= 0 && !line) {
				svg_draw_marker(o, x + 9, y - 4, marker, svg_series_color(p, s),
						" stroke=\"#000000\" stroke-width=\"0.8\"");
			} else if (line) {
				if (band) {
					html_buf_puts(o, "<rect");
					svg_attr_num(o, "x", x);
					svg_attr_num(o, "y", y - 10);
					html_buf_printf(o,
							" width=\"18\" height=\"12\" fill=\"%s\" "
							"fill-opacity=\"0.18\"/>\n",
							svg_series_color(p, s));
				}
				html_buf_puts(o, "<line");
				svg_attr_num(o, "x1", x);
				svg_attr_num(o, "y1", y - 4);
				svg_attr_num(o, "x2", x + 18);
				svg_attr_num(o, "y2", y - 4);
				html_buf_printf(o, " stroke=\"%s\" stroke-width=\"2.5\"",
						svg_series_color(p, s));
				svg_put_dash(o, p, s);
				html_buf_puts(o, "/>\n");
			} else {
				html_buf_puts(o, "<rect");
				svg_attr_num(o, "x", x + 3);
				svg_attr_num(o, "y", y - 10);
				html_buf_printf(o, " width=\"12\" height=\"12\" fill=\"%s\"/>\n",
						svg_series_color(p, s));
			}
			html_buf_puts(o, "<text");
			svg_attr_num(o, "x", x + 24);
			svg_attr_num(o, "y", y);
			html_buf_puts(o, ">");
			svg_put_label(o, name);
			html_buf_puts(o, "</text>\n");
		}
		x += w;
	}
	return rows;
}

static void render_plot(const struct svg_plot *p, struct html_buf *o)
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
	svg_fit_axes(p, &l, &sx, &sy);

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
		double y = svg_scale_px(&sy, sy.ticks[i]);
		html_buf_puts(o, "<line");
		svg_attr_num(o, "x1", l.left);
		svg_attr_num(o, "y1", y);
		svg_attr_num(o, "x2", l.right);
		svg_attr_num(o, "y2", y);
		html_buf_puts(o, "/>\n");
	}
	for (size_t i = 0; i < sx.n_ticks; i++) {
		double x = svg_scale_px(&sx, sx.ticks[i]);
		html_buf_puts(o, "<line");
		svg_attr_num(o, "x1", x);
		svg_attr_num(o, "y1", l.top);
		svg_attr_num(o, "x2", x);
		svg_attr_num(o, "y2", l.bottom);
		html_buf_puts(o, "/>\n");
	}
	html_buf_puts(o, "</g>\n<g fill=\"#333333\" font-size=\"11\">\n");
	for (size_t i = 0; i < sy.n_ticks; i++) {
		char t[HTML_NUM_MAX];
		svg_tick_label(&sy, sy.ticks[i], t);
		html_buf_puts(o, "<text");
		svg_attr_num(o, "x", l.left - 6);
		svg_attr_num(o, "y", svg_scale_px(&sy, sy.ticks[i]) + 4);
		html_buf_printf(o, " text-anchor=\"end\">%s</text>\n", t);
	}
	for (size_t i = 0; i < sx.n_ticks; i++) {
		char t[HTML_NUM_MAX];
		double x = svg_scale_px(&sx, sx.ticks[i]);
		svg_tick_label(&sx, sx.ticks[i], t);
		/* A label that would run off the right edge ends at the tick. */
		bool end = x + svg_text_width(t) * 0.85 / 2 > p->width - 2;
		html_buf_puts(o, "<text");
		svg_attr_num(o, "x", end ? fmin(x, p->width - 2) : x);
		svg_attr_num(o, "y", l.bottom + 16);
		html_buf_printf(o, " text-anchor=\"%s\">%s</text>\n", end ? "end" : "middle", t);
	}
	for (size_t i = 0; i < p->n_categories; i++) {
		html_buf_puts(o, "<text");
		svg_attr_num(o, "x", svg_scale_px(&sx, (double)i + 0.5));
		svg_attr_num(o, "y", l.bottom + 16);
		html_buf_puts(o, " text-anchor=\"middle\">");
		svg_put_label(o, p->categories[i]);
		html_buf_puts(o, "</text>\n");
	}
	html_buf_puts(o, "</g>\n");
	if (p->x.label && *p->x.label) {
		html_buf_puts(o, "<text");
		svg_attr_num(o, "x", (l.left + l.right) / 2);
		svg_attr_num(o, "y", p->height - 10);
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
				svg_draw_hist(o, p, e, &sx, &sy);
				break;
			case E_BOX:
			case E_STRIP:
				svg_draw_box(o, p, &l, e, &sx, &sy);
				break;
			case E_BAR:
			case E_TARGET:
				svg_draw_bar(o, p, &l, e, &sx, &sy);
				break;
			case E_LINE:
			case E_BAND:
			case E_POINTS:
				svg_draw_xy(o, p, e, &sx, &sy);
				break;
			case E_VLINE:
			case E_HLINE:
				svg_draw_rule(o, p, &l, e, &sx, &sy, rules++);
				break;
			}
		}
	}

	/* Axes last, over the data's edges. */
	html_buf_puts(o, "<path d=\"M");
	svg_put_num(o, l.left);
	html_buf_puts(o, " ");
	svg_put_num(o, l.top);
	html_buf_puts(o, " V");
	svg_put_num(o, l.bottom);
	html_buf_puts(o, " H");
	svg_put_num(o, l.right);
	html_buf_puts(o, "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n</svg>\n");
}

void svg_plot_render_to(const struct svg_plot *p, struct html_buf *o)
{
	if (p->failed) /* a plot short of an element is not drawn at all */
		html_buf_fail(o);
	else
		render_plot(p, o);
}

char *svg_plot_render(const struct svg_plot *p)
{
	struct html_buf *o = html_buf_new();

	svg_plot_render_to(p, o);
	return html_buf_steal(o);
}
