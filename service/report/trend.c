/* The trend's rows (report/trend.h): comparisons grouped into one chart
 * per series (owner and job name), workload and metric, the bisections
 * beside them, and the keys, series ids and times the store and the API
 * share. No SQL here: the rows come from the store (server/store_trend.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/trend-internal.h"
#include "report/trend.h"
#include "util/hash.h"
#include "util/macro.h"

static int oom(struct sl_error *err, const char *what)
{
	return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory while reading %s of the trend.",
			 what);
}

struct trend *trend_new(void)
{
	return calloc(1, sizeof(struct trend));
}

void trend_free(struct trend *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->g[i].pts);
	free(t->g);
	free(t->bis);
	free(t);
}

int trend_change_point_key(const char *series, const char *variant, const char *workload,
			   const char *metric, const char *after_job_id, char ret[65])
{
	struct hash_ctx *h = hash_new();
	const char *parts[] = {series, variant ? variant : "", workload, metric, after_job_id};

	if (!h) {
		ret[0] = '\0';
		return -ENOMEM;
	}
	for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
		hash_update_str(h, parts[i]);
		hash_update_str(h, "\x1f"); /* a separator no name holds */
	}
	hash_final_hex(h, ret);
	return 0;
}

void trend_series_id(const char *owner, const char *job_name, char *ret, size_t len)
{
	/* the schedule of the same name: the nightly series, known by its
	 * name alone (its keys, alerts and bisections from before owners
	 * were kept stay valid) */
	if (owner && strncmp(owner, "schedule:", 9) == 0 && strcmp(owner + 9, job_name) == 0)
		snprintf(ret, len, "%s", job_name);
	else
		snprintf(ret, len, "%s@%s", job_name, owner && *owner ? owner : "-");
}

int trend_parse_time(const char *s, time_t *ret)
{
	struct tm tm = {0};
	int n = 0;

	if (!s || sscanf(s, "%4d-%2d-%2d%*1[T ]%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return -EINVAL;
	s += n;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	if (strcmp(s, "Z") != 0 && strcmp(s, "+00:00") != 0 && *s)
		return -EINVAL;
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*ret = timegm(&tm);
	return 0;
}

bool trend_commit_valid(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return (n == 40 || n == 64) && s[n] == '\0';
}

static void copy_text(char *dst, size_t size, const char *src)
{
	size_t n = src ? strnlen(src, size - 1) : 0;

	/* Do not cut a UTF-8 sequence in half. */
	while (n > 0 && n == size - 1 && ((unsigned char)src[n] & 0xc0) == 0x80)
		n--;
	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

static struct series_group *group_for(struct trend *t, const char *job, const char *wl,
				      const char *metric, const char *name, const char *owner)
{
	/* Rows arrive ordered by these keys, so the last group is the only
	 * candidate. */
	if (t->n > 0) {
		struct series_group *g = &t->g[t->n - 1];
		if (strcmp(g->job_name, job) == 0 && strcmp(g->workload, wl) == 0 &&
		    strcmp(g->metric, metric) == 0)
			return g;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct series_group *g = reallocarray(t->g, cap, sizeof(*g));
		if (!g)
			return NULL;
		t->g = g;
		t->cap = cap;
	}
	struct series_group *g = &t->g[t->n++];
	memset(g, 0, sizeof(*g));
	snprintf(g->job_name, sizeof(g->job_name), "%s", job);
	snprintf(g->name, sizeof(g->name), "%s", name);
	snprintf(g->owner, sizeof(g->owner), "%s", owner ? owner : "");
	g->legacy = !owner;
	snprintf(g->workload, sizeof(g->workload), "%s", wl);
	snprintf(g->metric, sizeof(g->metric), "%s", metric);
	return g;
}

int trend_add_row(struct trend *t, const struct trend_row *row, const char *only_series,
		  struct sl_error *err)
{
	char job[TEXT_MAX], wl[TEXT_MAX], metric[TEXT_MAX], owner[TEXT_MAX], series[TEXT_MAX];
	struct point p = {
	    .t = row->t,
	    .base = row->base,
	    .cand = row->cand,
	    .change = row->change,
	    .ci_lo = row->ci_lo,
	    .ci_hi = row->ci_hi,
	    .p = row->p,
	};
	bool legacy = !row->owner;

	copy_text(p.job_id, sizeof(p.job_id), row->job_id);
	copy_text(job, sizeof(job), row->job_name);
	copy_text(p.variant, sizeof(p.variant), row->variant);
	copy_text(wl, sizeof(wl), row->workload);
	copy_text(metric, sizeof(metric), row->metric);
	copy_text(p.verdict, sizeof(p.verdict), row->verdict);
	copy_text(p.commit, sizeof(p.commit), row->commit);
	copy_text(owner, sizeof(owner), row->owner);
	if (legacy)
		memcpy(series, job, sizeof(series));
	else
		trend_series_id(owner, job, series, sizeof(series));
	if (only_series && strcmp(series, only_series) != 0)
		return 0;

	struct series_group *g = group_for(t, series, wl, metric, job, legacy ? NULL : owner);
	if (!g)
		return oom(err, "the series");
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct point *pts = reallocarray(g->pts, cap, sizeof(*pts));
		if (!pts)
			return oom(err, "the comparisons");
		g->pts = pts;
		g->cap = cap;
	}
	g->pts[g->n++] = p;
	t->rows++;
	return 1;
}

int trend_add_bisection(struct trend *t, const struct trend_bisection_row *row,
			struct sl_error *err)
{
	if (t->n_bis % 64 == 0) {
		struct trend_bisection *bis = reallocarray(t->bis, t->n_bis + 64, sizeof(*t->bis));
		if (!bis)
			return oom(err, "the bisections");
		t->bis = bis;
	}
	struct trend_bisection *b = &t->bis[t->n_bis++];
	copy_text(b->key, sizeof(b->key), row->key);
	copy_text(b->job_id, sizeof(b->job_id), row->job_id);
	copy_text(b->state, sizeof(b->state), row->state);
	copy_text(b->first_bad_commit, sizeof(b->first_bad_commit), row->first_bad_commit);
	copy_text(b->first_bad_subject, sizeof(b->first_bad_subject), row->first_bad_subject);
	b->certain = row->certain;
	b->steps = row->steps;
	return 0;
}
