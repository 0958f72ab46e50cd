/* cyclictest (rt-tests 2.4) --json output: per-thread cycles, min, avg, max
 * and, with -h N, a latency histogram of 1 us buckets 0..N-1 (only non-zero
 * buckets are listed). Samples of N us or more are not in the histogram; they
 * are the thread's overflows, counted here as cycles minus the histogram's sum.
 * Percentiles use the nearest rank over all cycles, overflows included; a
 * percentile that falls among the overflows is reported as the thread's max
 * (an upper bound; docs/statistics.md). See tests/data/rt-tests/cyclictest-*. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"
#include "util/json_get.h"
#include "util/parse.h"

#define CT_MAX_CYCLES 10000000000LL	/* a day at 10 us: more is garbage */
#define CT_MAX_US     100000000.0	/* 100 s */
#define CT_MAX_CELLS  (4 * 1024 * 1024) /* histogram buckets over all threads */

struct ct_thread {
	int64_t cycles, in_hist;
	size_t len; /* buckets in hist */
	double min, max, avg;
	int64_t *hist; /* hist_len buckets, or NULL without -h */
};

static const struct {
	const char *suffix;
	double q;
} ct_quantiles[] = {{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}, {"p99.9", 0.999}};

/* Nearest-rank quantile q of a histogram with total samples; samples beyond
 * the histogram (total - sum(hist)) sort above it and take the value max. */
static double hist_quantile(const int64_t *hist, size_t len, int64_t total, double max, double q)
{
	int64_t rank = (int64_t)ceill((long double)q * (long double)total);
	if (rank < 1)
		rank = 1;
	int64_t cum = 0;
	for (size_t i = 0; i < len; i++) {
		cum += hist[i];
		if (cum >= rank)
			return (double)i;
	}
	return max;
}

static void add_set(json_object *m, const char *prefix, double min, double avg, double max,
		    const int64_t *hist, size_t len, int64_t total)
{
	char name[64];
	snprintf(name, sizeof(name), "%s.min", prefix);
	json_object_object_add(m, name, metrics_number(min));
	snprintf(name, sizeof(name), "%s.avg", prefix);
	json_object_object_add(m, name, metrics_number(avg));
	snprintf(name, sizeof(name), "%s.max", prefix);
	json_object_object_add(m, name, metrics_number(max));
	if (!hist)
		return;
	for (size_t k = 0; k < ELEMENTSOF(ct_quantiles); k++) {
		snprintf(name, sizeof(name), "%s.%s", prefix, ct_quantiles[k].suffix);
		json_object_object_add(
		    m, name,
		    metrics_number(hist_quantile(hist, len, total, max, ct_quantiles[k].q)));
	}
}

/* Reads thread t's histogram into th->hist (buckets 0..max key). */
static int ct_read_hist(json_object *h, int t, struct ct_thread *th, size_t *hist_len,
			struct sl_error *err)
{
	/* The bucket count is the largest key + 1; -h bounds it on the guest side,
	 * METRICS_MAX_HIST_US here. */
	size_t len = 0;
	json_object_object_foreach(h, key, val)
	{
		unsigned long long b;
		if (parse_uint64(key, METRICS_MAX_HIST_US - 1, &b) < 0)
			return error_set(err, ERR_INVALID, 0,
					 "cyclictest's histogram for thread %d has a bucket "
					 "'%.32s', which is not a number below %d.",
					 t, key, METRICS_MAX_HIST_US);
		if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) < 0 ||
		    json_object_get_int64(val) > CT_MAX_CYCLES)
			return error_set(err, ERR_INVALID, 0,
					 "cyclictest's histogram for thread %d has a bad count in "
					 "bucket %llu.",
					 t, b);
		if (b + 1 > len)
			len = b + 1;
	}
	th->hist = calloc(len ? len : 1, sizeof(*th->hist));
	if (!th->hist)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	json_object_object_foreach(h, key2, val2)
	{
		unsigned long long b = 0;
		(void)parse_uint64(key2, METRICS_MAX_HIST_US - 1, &b); /* checked above */
		th->hist[b] += json_object_get_int64(val2);
		th->in_hist += json_object_get_int64(val2);
		if (th->in_hist > CT_MAX_CYCLES)
			return error_set(err, ERR_INVALID, 0,
					 "cyclictest's histogram for thread %d counts too many "
					 "samples.",
					 t);
	}
	th->len = len;
	if (len > *hist_len)
		*hist_len = len;
	return 0;
}

int metrics_cyclictest(const char *stdout_text, size_t stdout_len, const char *json_text,
		       json_object **ret_metrics, json_object **ret_details, struct sl_error *err)
{
	(void)stdout_text;
	(void)stdout_len;
	_cleanup_json_ json_object *doc = NULL, *metrics = NULL, *details = NULL;
	struct ct_thread *th = NULL;
	int nthreads = 0, r;
	size_t hist_len = 0;

	if (!json_text)
		return error_set(err, ERR_INVALID, 0,
				 "cyclictest wrote no JSON file (schedlab passes --json).");
	r = metrics_parse_json(json_text, strlen(json_text), "cyclictest JSON file", &doc, err);
	if (r < 0)
		return r;
	json_object *threads = NULL;
	if (!json_object_object_get_ex(doc, "thread", &threads) ||
	    !json_object_is_type(threads, json_type_object))
		return error_set(err, ERR_INVALID, 0,
				 "cyclictest's JSON file has no \"thread\" object.");
	nthreads = json_object_object_length(threads);
	if (nthreads < 1 || nthreads > METRICS_MAX_THREADS)
		return error_set(err, ERR_INVALID, 0,
				 "cyclictest's JSON file lists %d threads; 1 to %d are accepted.",
				 nthreads, METRICS_MAX_THREADS);
	th = calloc((size_t)nthreads, sizeof(*th));
	if (!th)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");

	bool all_hist = true;
	for (int t = 0; t < nthreads; t++) {
		char key[16];
		json_object *o, *h;
		snprintf(key, sizeof(key), "%d", t);
		if (!json_object_object_get_ex(threads, key, &o) ||
		    !json_object_is_type(o, json_type_object)) {
			r = error_set(err, ERR_INVALID, 0,
				      "cyclictest's JSON file has no thread \"%d\".", t);
			goto out;
		}
		double cycles = 0;
		/* one message for every way a thread's numbers are wrong */
		struct json_reader rd = JSON_READER("cyclictest's JSON file", NULL);
		json_get_number(&rd, o, key, "cycles", true, 1, (double)CT_MAX_CYCLES, &cycles);
		json_get_number(&rd, o, key, "min", true, 0, CT_MAX_US, &th[t].min);
		json_get_number(&rd, o, key, "max", true, 0, CT_MAX_US, &th[t].max);
		json_get_number(&rd, o, key, "avg", true, 0, CT_MAX_US, &th[t].avg);
		if (rd.failed || cycles != floor(cycles) || th[t].min > th[t].max ||
		    th[t].avg < th[t].min || th[t].avg > th[t].max) {
			r = error_set(err, ERR_INVALID, 0,
				      "cyclictest's thread %d lacks cycles, min, avg or max, or "
				      "they are out of range (at least one cycle, min <= avg <= "
				      "max <= 100 s).",
				      t);
			goto out;
		}
		th[t].cycles = (int64_t)cycles;
		if (json_object_object_get_ex(o, "histogram", &h) &&
		    json_object_is_type(h, json_type_object)) {
			if ((r = ct_read_hist(h, t, &th[t], &hist_len, err)) < 0)
				goto out;
			if (th[t].in_hist > th[t].cycles) {
				r = error_set(err, ERR_INVALID, 0,
					      "cyclictest's histogram for thread %d counts %lld "
					      "samples, more than its %lld cycles.",
					      t, (long long)th[t].in_hist, (long long)th[t].cycles);
				goto out;
			}
		} else
			all_hist = false;
		if (hist_len * (size_t)nthreads > CT_MAX_CELLS) {
			r = error_set(err, ERR_INVALID, 0,
				      "cyclictest's histograms are too large (%d threads of %zu "
				      "buckets).",
				      nthreads, hist_len);
			goto out;
		}
	}

	metrics = json_object_new_object();
	details = json_object_new_object();
	json_object *jcycles = json_object_new_array(), *jover = json_object_new_array();
	double gmin = INFINITY, gmax = 0;
	long double wsum = 0;
	int64_t total = 0;
	for (int t = 0; t < nthreads; t++) {
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "latency_us.t%d", t);
		/* Thread histograms may differ in length; pad to the longest. */
		if (th[t].hist && th[t].len < hist_len) {
			int64_t *grown = reallocarray(th[t].hist, hist_len, sizeof(*grown));
			if (!grown) {
				r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
				goto out;
			}
			memset(grown + th[t].len, 0, (hist_len - th[t].len) * sizeof(*grown));
			th[t].hist = grown;
			th[t].len = hist_len;
		}
		add_set(metrics, prefix, th[t].min, th[t].avg, th[t].max, th[t].hist,
			th[t].hist ? hist_len : 0, th[t].cycles);
		gmin = fmin(gmin, th[t].min);
		gmax = fmax(gmax, th[t].max);
		wsum += (long double)th[t].avg * th[t].cycles;
		total += th[t].cycles;
		json_object_array_add(jcycles, json_object_new_int64(th[t].cycles));
		json_object_array_add(
		    jover, th[t].hist ? json_object_new_int64(th[t].cycles - th[t].in_hist) : NULL);
	}
	int64_t *merged = NULL;
	if (all_hist) {
		merged = calloc(hist_len ? hist_len : 1, sizeof(*merged));
		if (!merged) {
			r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			goto out;
		}
		for (int t = 0; t < nthreads; t++)
			for (size_t i = 0; i < hist_len; i++)
				merged[i] += th[t].hist[i];
	}
	add_set(metrics, "latency_us", gmin, (double)(wsum / total), gmax, merged, hist_len, total);

	json_object_object_add(details, "threads", json_object_new_int(nthreads));
	json_object_object_add(details, "cycles", jcycles);
	json_object_object_add(details, "overflows", jover);
	if (merged) {
		json_object *jh = json_object_new_array();
		for (size_t i = 0; i < hist_len; i++)
			if (merged[i]) {
				json_object *pair = json_object_new_array_ext(2);
				json_object_array_add(pair, json_object_new_int64((int64_t)i));
				json_object_array_add(pair, json_object_new_int64(merged[i]));
				json_object_array_add(jh, pair);
			}
		json_object_object_add(details, "histogram_buckets_us",
				       json_object_new_int64((int64_t)hist_len));
		json_object_object_add(details, "histogram", jh);
		free(merged);
	}
	*ret_metrics = TAKE_PTR(metrics);
	*ret_details = TAKE_PTR(details);
	r = 0;
out:
	for (int t = 0; th && t < nthreads; t++)
		free(th[t].hist);
	free(th);
	return r;
}

static int cyclictest_parse(const struct metrics_output *out, json_object *workload_spec,
			    json_object **ret_metrics, json_object **ret_details,
			    struct sl_error *err)
{
	(void)workload_spec;
	return metrics_cyclictest(out->stdout_text, out->stdout_len, out->json_text, ret_metrics,
				  ret_details, err);
}

/* Every latency, of all threads (latency_us.*) and of thread N
 * (latency_us.tN.*), is better lower; the maximum and the tail percentiles
 * (p99, p99.9) are tails. p90 is not: its default threshold stayed 25 %. */
static const struct metrics_name cyclictest_names[] = {
    {"latency_us.min", "lower", false},	   {"latency_us.avg", "lower", false},
    {"latency_us.max", "lower", true},	   {"latency_us.p50", "lower", false},
    {"latency_us.p90", "lower", false},	   {"latency_us.p99", "lower", true},
    {"latency_us.p99.9", "lower", true},   {"latency_us.t*.min", "lower", false},
    {"latency_us.t*.avg", "lower", false}, {"latency_us.t*.max", "lower", true},
    {"latency_us.t*.p50", "lower", false}, {"latency_us.t*.p90", "lower", false},
    {"latency_us.t*.p99", "lower", true},  {"latency_us.t*.p99.9", "lower", true},
};

/* Its average and p99 are the default gates' latency metrics. */
static void cyclictest_threshold(const char *metric, struct metric_threshold *t)
{
	metrics_latency_gate(metric, "latency_us.avg", "latency_us.p99", t);
}

const struct metrics_plugin metrics_plugin_cyclictest = {
    .tool = "cyclictest",
    METRICS_NAMES(cyclictest_names),
    .parse = cyclictest_parse,
    .threshold = cyclictest_threshold,
};
