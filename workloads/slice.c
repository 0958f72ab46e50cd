/* slice: how long the scheduler lets a CPU-bound task run before it
 * preempts it, against what its tunables predict (HRTICK matters here).
 *
 *   slice --threads 3 --seconds 5 --cpu 0 --gap-us 50
 *
 * N busy threads share one CPU. Each reads CLOCK_MONOTONIC in a tight loop; a
 * jump of more than gap-us between two reads means the thread was not running
 * (preempted), so the readings split into run segments (slices) and waits.
 * The first and last segment of each thread are cut by the start and end of
 * the window and are dropped.
 *
 * The predicted slice comes from the tunables in /sys/kernel/debug/sched:
 * max(latency_ns / threads, min_granularity_ns) (Linux 6.1 CFS), or
 * base_slice_ns (EEVDF kernels) when those are missing.
 *
 * Prints one JSON object: metrics slice_us.{mean,p99,max}, wait_us.p99,
 * segments and slice_overrun_us.{p50,mean,p99} (of max(0, slice - predicted)).
 * The median and mean overrun are the robust ones: under TCG a vCPU stalled by
 * the host stretches a few slices by tens of ms, which moves p99 and max but
 * not the median (docs/agent.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/wl.h"
#include "util/macro.h"

#define SLICE_MAX_THREADS  64
#define SLICE_MAX_SEGMENTS (1u << 20) /* in all threads: bounds memory to 16 MiB */
#define SLICE_MAX_SECONDS  3600
#define SLICE_SCHED_DIR	   "/sys/kernel/debug/sched"

struct worker {
	pthread_t thread;
	int cpu;
	long long gap_ns, end_ns;
	pthread_barrier_t *start;
	/* durations in ns; owned; at most cap entries each */
	long long *slices, *waits;
	size_t nslices, nwaits, cap;
	bool overflow;
	int error;
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: slice [--threads N] [--seconds S] [--cpu C] [--gap-us G] [--sched-dir DIR]\n"
	    "\n"
	    "Runs N (default 3) busy threads pinned to CPU C (default 0) for S seconds\n"
	    "(default 5) and records their run segments: a gap of more than G us\n"
	    "(default 50) between two clock readings ends a segment. The predicted slice\n"
	    "comes from DIR (default %s). Prints one JSON object with metrics\n"
	    "slice_us.{mean,p99,max}, wait_us.p99, segments and\n"
	    "slice_overrun_us.{p50,mean,p99}.\n",
	    SLICE_SCHED_DIR);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;
	long long seg_start, last, t;
	bool first = true;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	w->error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(w->start);
	if (w->error)
		return NULL;

	seg_start = last = now_ns();
	while ((t = now_ns()) < w->end_ns) {
		if (t - last > w->gap_ns) {
			/* the segment that just ended; the first one started
			 * before the window and is not a whole slice */
			if (!first && w->nslices < w->cap)
				w->slices[w->nslices++] = last - seg_start;
			else if (!first)
				w->overflow = true;
			if (w->nwaits < w->cap)
				w->waits[w->nwaits++] = t - last;
			else
				w->overflow = true;
			first = false;
			seg_start = t;
		}
		last = t;
	}
	/* the segment running at the end is cut by the window: dropped */
	return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array, in us. */
static double percentile_us(const long long *v, size_t n, double p)
{
	if (n == 0)
		return NAN;
	size_t rank = (size_t)ceil(p / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)v[rank - 1] / 1000.0;
}

static int read_ll(const char *dir, const char *name, long long *ret)
{
	char path[512];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	n = fscanf(f, "%lld", ret);
	fclose(f);
	return n == 1 ? 0 : -ENOENT;
}

/* Starts threads workers pinned to cpu that run for seconds with gaps of
 * gap_us between their slices, all released at once by start, and waits
 * for them; -1 (said on stderr) when one could not start. */
static int run_workers(struct worker *workers, size_t threads, int cpu, double gap_us,
		       double seconds, pthread_barrier_t *start)
{
	size_t cap = SLICE_MAX_SEGMENTS / threads;
	pthread_barrier_init(start, NULL, (unsigned)threads + 1);
	/* all threads stop at the same instant, shortly after they all started */
	long long end_ns = now_ns() + (long long)(seconds * 1e9) + 100000000LL;
	for (size_t i = 0; i < threads; i++) {
		struct worker *w = &workers[i];
		*w = (struct worker){.cpu = cpu,
				     .gap_ns = (long long)(gap_us * 1000),
				     .end_ns = end_ns,
				     .start = start,
				     .cap = cap};
		w->slices = malloc(cap * sizeof(long long));
		w->waits = malloc(cap * sizeof(long long));
		if (!w->slices || !w->waits || pthread_create(&w->thread, NULL, worker_main, w)) {
			fprintf(stderr, "slice: could not start thread %zu.\n", i);
			return -1;
		}
	}
	pthread_barrier_wait(start);
	for (size_t i = 0; i < threads; i++)
		pthread_join(workers[i].thread, NULL);
	return 0;
}

/* The metrics of the sorted slices (sum: their total), waits and overruns
 * past predicted_us (the overruns only when there is a prediction). */
static json_object *slice_metrics(const long long *slices, size_t ns, double sum,
				  const long long *waits, size_t nw, double predicted_us,
				  const long long *over, double over_sum)
{
	json_object *metrics = json_object_new_object();
	json_object_object_add(metrics, "slice_us.mean",
			       wl_json_double(ns ? sum / (double)ns / 1000.0 : NAN, 6));
	json_object_object_add(metrics, "slice_us.p99",
			       wl_json_double(percentile_us(slices, ns, 99), 6));
	json_object_object_add(metrics, "slice_us.max",
			       wl_json_double(ns ? (double)slices[ns - 1] / 1000.0 : NAN, 6));
	json_object_object_add(metrics, "wait_us.p99",
			       wl_json_double(percentile_us(waits, nw, 99), 6));
	json_object_object_add(metrics, "segments", json_object_new_int64((int64_t)ns));
	if (!isnan(predicted_us)) {
		json_object_object_add(metrics, "slice_overrun_us.p50",
				       wl_json_double(percentile_us(over, ns, 50), 6));
		json_object_object_add(
		    metrics, "slice_overrun_us.mean",
		    wl_json_double(ns ? over_sum / (double)ns / 1000.0 : NAN, 6));
		json_object_object_add(metrics, "slice_overrun_us.p99",
				       wl_json_double(percentile_us(over, ns, 99), 6));
	}
	return metrics;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"threads", required_argument, NULL, 't'},
	    {"seconds", required_argument, NULL, 's'},
	    {"cpu", required_argument, NULL, 'c'},
	    {"gap-us", required_argument, NULL, 'g'},
	    {"sched-dir", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct worker workers[SLICE_MAX_THREADS];
	const char *sched_dir = SLICE_SCHED_DIR;
	unsigned long threads = 3, cpu = 0;
	double seconds = 5, gap_us = 50;
	pthread_barrier_t start;
	long long latency = 0, min_gran = 0, base_slice = 0;
	double predicted_us = NAN;
	const char *source = "none";
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
		int r = 0;
		switch (c) {
		case 't':
			r = wl_parse_uint(optarg, SLICE_MAX_THREADS, &threads);
			if (r == 0 && threads == 0)
				r = -EINVAL;
			break;
		case 's':
			r = wl_parse_double(optarg, 0.1, SLICE_MAX_SECONDS, &seconds);
			break;
		case 'c':
			r = wl_parse_uint(optarg, CPU_SETSIZE - 1, &cpu);
			break;
		case 'g':
			r = wl_parse_double(optarg, 1, 1e6, &gap_us);
			break;
		case 'd':
			sched_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (r < 0) {
			fprintf(stderr, "slice: invalid value '%s' for --%s.\n", optarg,
				opts[c == 't'	? 0
				     : c == 's' ? 1
				     : c == 'c' ? 2
						: 3]
				    .name);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	if (read_ll(sched_dir, "latency_ns", &latency) == 0 &&
	    read_ll(sched_dir, "min_granularity_ns", &min_gran) == 0) {
		double per = (double)latency / (double)threads;
		predicted_us = (per > (double)min_gran ? per : (double)min_gran) / 1000.0;
		source = "max(latency_ns / threads, min_granularity_ns)";
	} else if (read_ll(sched_dir, "base_slice_ns", &base_slice) == 0) {
		predicted_us = (double)base_slice / 1000.0;
		source = "base_slice_ns";
	}

	if (run_workers(workers, threads, (int)cpu, gap_us, seconds, &start) < 0)
		return 1;

	size_t ns = 0, nw = 0;
	bool overflow = false;
	for (size_t i = 0; i < threads; i++) {
		if (workers[i].error) {
			fprintf(stderr, "slice: thread %zu could not be pinned to CPU %lu: %s.\n",
				i, cpu, strerror(workers[i].error));
			rc = 1;
		}
		ns += workers[i].nslices;
		nw += workers[i].nwaits;
		overflow |= workers[i].overflow;
	}
	if (rc)
		return rc;
	_cleanup_free_ long long *slices = malloc((ns + 1) * sizeof(long long));
	_cleanup_free_ long long *waits = malloc((nw + 1) * sizeof(long long));
	_cleanup_free_ long long *over = malloc((ns + 1) * sizeof(long long));
	if (!slices || !waits || !over)
		return 1;
	json_object *per_thread = json_object_new_array();
	ns = nw = 0;
	for (size_t i = 0; i < threads; i++) {
		struct worker *w = &workers[i];
		memcpy(slices + ns, w->slices, w->nslices * sizeof(long long));
		memcpy(waits + nw, w->waits, w->nwaits * sizeof(long long));
		ns += w->nslices;
		nw += w->nwaits;
		json_object_array_add(per_thread, json_object_new_int64((int64_t)w->nslices));
		free(w->slices);
		free(w->waits);
	}
	qsort(slices, ns, sizeof(long long), cmp_ll);
	qsort(waits, nw, sizeof(long long), cmp_ll);
	double sum = 0, over_sum = 0;
	for (size_t i = 0; i < ns; i++) {
		sum += (double)slices[i];
		long long o =
		    isnan(predicted_us) ? 0 : slices[i] - (long long)(predicted_us * 1000);
		over[i] = o > 0 ? o : 0;
		over_sum += (double)over[i];
	}
	qsort(over, ns, sizeof(long long), cmp_ll);

	json_object *metrics =
	    slice_metrics(slices, ns, sum, waits, nw, predicted_us, over, over_sum);
	json_object *details = json_object_new_object();
	json_object_object_add(details, "predicted_slice_us", wl_json_double(predicted_us, 6));
	json_object_object_add(details, "predicted_from", json_object_new_string(source));
	json_object_object_add(details, "latency_ns",
			       latency ? json_object_new_int64(latency) : NULL);
	json_object_object_add(details, "min_granularity_ns",
			       min_gran ? json_object_new_int64(min_gran) : NULL);
	json_object_object_add(details, "base_slice_ns",
			       base_slice ? json_object_new_int64(base_slice) : NULL);
	json_object_object_add(details, "threads", json_object_new_int((int)threads));
	json_object_object_add(details, "cpu", json_object_new_int((int)cpu));
	json_object_object_add(details, "seconds", wl_json_double(seconds, 6));
	json_object_object_add(details, "gap_us", wl_json_double(gap_us, 6));
	json_object_object_add(details, "slice_us.p50",
			       wl_json_double(percentile_us(slices, ns, 50), 6));
	json_object_object_add(details, "slice_us.min",
			       wl_json_double(ns ? (double)slices[0] / 1000.0 : NAN, 6));
	json_object_object_add(details, "wait_us.p50",
			       wl_json_double(percentile_us(waits, nw, 50), 6));
	json_object_object_add(details, "waits", json_object_new_int64((int64_t)nw));
	json_object_object_add(details, "segments_per_thread", per_thread);
	json_object_object_add(details, "segments_capped", json_object_new_boolean(overflow));
	wl_print_result("slice", metrics, details);
	return 0;
}
