/* wakeup: how long a woken thread waits for a CPU, and how many requests a
 * pool of threads serves, in the manner of the wakeup-latency numbers
 * scheduler developers quote (message threads handing work to workers).
 *
 *   wakeup --message-threads 2 --workers 4 --seconds 5 --work-us 100
 *
 * Each message thread owns W worker threads, which sleep on a futex. In a
 * loop, the message thread stamps the time and wakes each of its workers;
 * a worker that gets a CPU records its wakeup latency (now - the stamp),
 * spins on the CPU for work-us (its "request"), records the request latency
 * (now - the stamp), and sleeps again; the last worker to finish wakes the
 * message thread, which may sleep sleep-us and starts the next round. The
 * first warmup-seconds are not recorded.
 *
 * Latencies go into log-linear histograms (exact to 25.6 us in 0.1 us steps,
 * then 128 steps per power of two: within 0.8 %), so memory is bounded
 * whatever the run length. Percentiles are nearest-rank, reported as the
 * lower edge of their bucket.
 *
 * Prints one JSON object: metrics wakeup_latency_us.{p50,p90,p99,p99.9},
 * request_latency_us.{p50,p99} (lower is better) and requests_per_s
 * (requests finished per second of the measured window; higher is better). */
#include <errno.h>
#include <getopt.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/wl.h"
#include "util/macro.h"

#define WAKEUP_MAX_MESSAGE  64
#define WAKEUP_MAX_WORKERS  64	/* per message thread */
#define WAKEUP_MAX_TOTAL    256 /* workers in all */
#define WAKEUP_MAX_SECONDS  3600
#define WAKEUP_MAX_WORK_US  100000
#define WAKEUP_MAX_SLEEP_US 1000000
#define HIST_LINEAR	    256 /* buckets of one unit (0.1 us) */
#define HIST_SUB	    128 /* buckets per power of two above that */
#define HIST_MAX_EXP	    40
#define HIST_BUCKETS	    (HIST_LINEAR + (HIST_MAX_EXP - 7) * HIST_SUB)

struct hist {
	uint64_t count[HIST_BUCKETS];
	uint64_t n;
	uint64_t max_units;
};

struct message;

struct worker {
	pthread_t thread;
	struct message *msg;
	_Atomic uint32_t go; /* futex: 1 = a request was posted */
	_Atomic long long posted_ns;
	struct hist wake, request;
	uint64_t requests; /* finished in the measured window */
};

struct message {
	pthread_t thread;
	struct worker *workers;
	size_t n_workers;
	_Atomic uint32_t pending; /* futex: workers still busy in this round */
	_Atomic bool stop;
	long long measure_from_ns, end_ns, work_ns, sleep_ns;
	int error;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wakeup [--message-threads M] [--workers W] [--seconds S]\n"
		"              [--warmup-seconds S] [--work-us U] [--sleep-us U]\n"
		"\n"
		"M message threads (default 2, at most %d) each wake W workers (default 4,\n"
		"at most %d; M x W at most %d) in rounds for S seconds (default 5); each\n"
		"worker spins U us (default 100) per request. The first warm-up seconds\n"
		"(default 1) are not recorded. Prints one JSON object with metrics\n"
		"wakeup_latency_us.{p50,p90,p99,p99.9}, request_latency_us.{p50,p99} and\n"
		"requests_per_s.\n",
		WAKEUP_MAX_MESSAGE, WAKEUP_MAX_WORKERS, WAKEUP_MAX_TOTAL);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Bucket of a value in units of 0.1 us. */
static size_t hist_bucket(uint64_t u)
{
	if (u < HIST_LINEAR)
		return (size_t)u;
	int e = 63 - __builtin_clzll(u); /* >= 8 */
	if (e >= HIST_MAX_EXP)
		return HIST_BUCKETS - 1;
	size_t sub = (size_t)((u >> (e - 7)) & (HIST_SUB - 1));
	return HIST_LINEAR + (size_t)(e - 8) * HIST_SUB + sub;
}

/* The lower edge of bucket b, in units of 0.1 us. */
static uint64_t hist_lower(size_t b)
{
	if (b < HIST_LINEAR)
		return b;
	size_t e = (b - HIST_LINEAR) / HIST_SUB + 8, sub = (b - HIST_LINEAR) % HIST_SUB;
	return (uint64_t)(HIST_SUB + sub) << (e - 7);
}

static void hist_add(struct hist *h, long long ns)
{
	uint64_t u = ns > 0 ? (uint64_t)ns / 100 : 0;
	h->count[hist_bucket(u)]++;
	h->n++;
	if (u > h->max_units)
		h->max_units = u;
}

static void hist_merge(struct hist *into, const struct hist *h)
{
	for (size_t i = 0; i < HIST_BUCKETS; i++)
		into->count[i] += h->count[i];
	into->n += h->n;
	if (h->max_units > into->max_units)
		into->max_units = h->max_units;
}

/* Nearest-rank percentile p (0..100) in us; NaN when empty. */
static double hist_percentile_us(const struct hist *h, double p)
{
	if (h->n == 0)
		return NAN;
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->n), seen = 0;
	if (rank < 1)
		rank = 1;
	for (size_t i = 0; i < HIST_BUCKETS; i++) {
		seen += h->count[i];
		if (seen >= rank)
			return (double)hist_lower(i) / 10.0;
	}
	return (double)h->max_units / 10.0;
}

static void spin_until(long long t)
{
	while (now_ns() < t)
		;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct message *m = w->msg;

	for (;;) {
		while (atomic_load(&w->go) == 0)
			futex_wait(&w->go, 0);
		long long t = now_ns();
		if (atomic_load(&m->stop))
			return NULL;
		long long posted = atomic_load(&w->posted_ns);
		bool measured = posted >= m->measure_from_ns;
		if (measured)
			hist_add(&w->wake, t - posted);
		spin_until(t + m->work_ns);
		long long done = now_ns();
		if (measured && done <= m->end_ns) {
			hist_add(&w->request, done - posted);
			w->requests++;
		}
		atomic_store(&w->go, 0);
		if (atomic_fetch_sub(&m->pending, 1) == 1)
			futex_wake(&m->pending);
	}
}

static void *message_main(void *arg)
{
	struct message *m = arg;

	while (now_ns() < m->end_ns) {
		atomic_store(&m->pending, (uint32_t)m->n_workers);
		for (size_t i = 0; i < m->n_workers; i++) {
			struct worker *w = &m->workers[i];
			atomic_store(&w->posted_ns, now_ns());
			atomic_store(&w->go, 1);
			futex_wake(&w->go);
		}
		uint32_t p;
		while ((p = atomic_load(&m->pending)) != 0)
			futex_wait(&m->pending, p);
		if (m->sleep_ns > 0) {
			struct timespec ts = {m->sleep_ns / 1000000000LL,
					      m->sleep_ns % 1000000000LL};
			nanosleep(&ts, NULL);
		}
	}
	atomic_store(&m->stop, true);
	for (size_t i = 0; i < m->n_workers; i++) {
		atomic_store(&m->workers[i].go, 1);
		futex_wake(&m->workers[i].go);
	}
	return NULL;
}

static json_object *num(double v)
{
	return wl_json_double(v, 6);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"message-threads", required_argument, NULL, 'm'},
	    {"workers", required_argument, NULL, 'w'},
	    {"seconds", required_argument, NULL, 's'},
	    {"warmup-seconds", required_argument, NULL, 'W'},
	    {"work-us", required_argument, NULL, 'u'},
	    {"sleep-us", required_argument, NULL, 'z'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	unsigned long n_msg = 2, n_wk = 4, work_us = 100, sleep_us = 0;
	double seconds = 5, warmup = 1;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
		int r = 0;
		switch (c) {
		case 'm':
			r = wl_parse_uint(optarg, WAKEUP_MAX_MESSAGE, &n_msg);
			r = r == 0 && n_msg == 0 ? -EINVAL : r;
			break;
		case 'w':
			r = wl_parse_uint(optarg, WAKEUP_MAX_WORKERS, &n_wk);
			r = r == 0 && n_wk == 0 ? -EINVAL : r;
			break;
		case 's':
			r = wl_parse_double(optarg, 0.1, WAKEUP_MAX_SECONDS, &seconds);
			break;
		case 'W':
			r = wl_parse_double(optarg, 0, 60, &warmup);
			break;
		case 'u':
			r = wl_parse_uint(optarg, WAKEUP_MAX_WORK_US, &work_us);
			break;
		case 'z':
			r = wl_parse_uint(optarg, WAKEUP_MAX_SLEEP_US, &sleep_us);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (r < 0) {
			fprintf(stderr, "wakeup: bad value '%s' for an option; see --help.\n",
				optarg);
			return 2;
		}
	}
	if (optind < argc || n_msg * n_wk > WAKEUP_MAX_TOTAL) {
		fprintf(stderr, "wakeup: %s; see --help.\n",
			optind < argc ? "unexpected arguments"
				      : "too many workers in all (message threads x workers)");
		return 2;
	}

	struct message *msgs = calloc(n_msg, sizeof(*msgs));
	struct worker *wks = calloc(n_msg * n_wk, sizeof(*wks));
	if (!msgs || !wks) {
		fprintf(stderr, "wakeup: out of memory.\n");
		return 1;
	}
	long long start = now_ns();
	long long from = start + (long long)(warmup * 1e9);
	long long end = from + (long long)(seconds * 1e9);
	for (size_t i = 0; i < n_msg; i++) {
		struct message *m = &msgs[i];
		m->workers = &wks[i * n_wk];
		m->n_workers = n_wk;
		m->measure_from_ns = from;
		m->end_ns = end;
		m->work_ns = (long long)work_us * 1000;
		m->sleep_ns = (long long)sleep_us * 1000;
		for (size_t j = 0; j < n_wk; j++) {
			m->workers[j].msg = m;
			if (pthread_create(&m->workers[j].thread, NULL, worker_main,
					   &m->workers[j]) != 0) {
				fprintf(stderr, "wakeup: cannot start a worker thread.\n");
				return 1;
			}
		}
	}
	for (size_t i = 0; i < n_msg; i++)
		if (pthread_create(&msgs[i].thread, NULL, message_main, &msgs[i]) != 0) {
			fprintf(stderr, "wakeup: cannot start a message thread.\n");
			return 1;
		}
	for (size_t i = 0; i < n_msg; i++)
		pthread_join(msgs[i].thread, NULL);
	for (size_t i = 0; i < n_msg * n_wk; i++)
		pthread_join(wks[i].thread, NULL);

	struct hist *wake = calloc(1, sizeof(*wake)), *req = calloc(1, sizeof(*req));
	if (!wake || !req) {
		fprintf(stderr, "wakeup: out of memory.\n");
		return 1;
	}
	uint64_t requests = 0;
	for (size_t i = 0; i < n_msg * n_wk; i++) {
		hist_merge(wake, &wks[i].wake);
		hist_merge(req, &wks[i].request);
		requests += wks[i].requests;
	}
	if (wake->n == 0 || req->n == 0) {
		fprintf(stderr, "wakeup: no request finished in the measured window.\n");
		return 1;
	}
	json_object *metrics = json_object_new_object();
	json_object_object_add(metrics, "wakeup_latency_us.p50", num(hist_percentile_us(wake, 50)));
	json_object_object_add(metrics, "wakeup_latency_us.p90", num(hist_percentile_us(wake, 90)));
	json_object_object_add(metrics, "wakeup_latency_us.p99", num(hist_percentile_us(wake, 99)));
	json_object_object_add(metrics, "wakeup_latency_us.p99.9",
			       num(hist_percentile_us(wake, 99.9)));
	json_object_object_add(metrics, "request_latency_us.p50", num(hist_percentile_us(req, 50)));
	json_object_object_add(metrics, "request_latency_us.p99", num(hist_percentile_us(req, 99)));
	json_object_object_add(metrics, "requests_per_s", num((double)requests / seconds));

	json_object *details = json_object_new_object();
	json_object_object_add(details, "message_threads", json_object_new_int64((int64_t)n_msg));
	json_object_object_add(details, "workers", json_object_new_int64((int64_t)n_wk));
	json_object_object_add(details, "work_us", json_object_new_int64((int64_t)work_us));
	json_object_object_add(details, "sleep_us", json_object_new_int64((int64_t)sleep_us));
	json_object_object_add(details, "seconds", num(seconds));
	json_object_object_add(details, "warmup_seconds", num(warmup));
	json_object_object_add(details, "wakeups", json_object_new_int64((int64_t)wake->n));
	json_object_object_add(details, "requests", json_object_new_int64((int64_t)requests));
	json_object_object_add(details, "wakeup_latency_us.max",
			       num((double)wake->max_units / 10.0));
	json_object_object_add(details, "request_latency_us.max",
			       num((double)req->max_units / 10.0));
	wl_print_result("wakeup", metrics, details);
	free(wake);
	free(req);
	free(msgs);
	free(wks);
	return 0;
}
