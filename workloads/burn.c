/* burn: a CPU-bound load with optional file I/O, to keep CPUs busy beside a
 * measured workload (docs/workloads.md "Loads"), in the manner of rteval's
 * kernel build: the guest has no compiler and no disk, so each operation
 * hashes a 64 KiB buffer and, with --io-kib, writes and reads that much of
 * a file on /tmp (tmpfs: syscalls and page-cache copies, no device).
 *
 *   burn --threads 0 --seconds 0 [--io-kib 64]
 *
 * --threads 0 runs one thread per CPU the process may use (its affinity);
 * --seconds 0 runs until SIGTERM or SIGINT. Either way it then prints one
 * JSON object and exits 0: {"tool":"burn","metrics":{"ops_per_s":..,
 * "cpu_fraction":..},"details":{..}}. ops_per_s is the load's throughput;
 * cpu_fraction its CPU time over threads x wall time (how much of the
 * CPUs it was given). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/wl.h"
#include "util/macro.h"

#define BURN_MAX_THREADS 256
#define BURN_MAX_SECONDS 86400
#define BURN_MAX_IO_KIB	 1024
#define BURN_BUF	 (64 * 1024)

struct worker {
	pthread_t thread;
	unsigned index;
	unsigned long io_kib;
	atomic_ullong ops;
	char error[160];
};

static atomic_bool stop;

static void usage(FILE *f)
{
	fprintf(
	    f, "Usage: burn [--threads N] [--seconds S] [--io-kib K]\n"
	       "\n"
	       "A CPU-bound load: each thread hashes a 64 KiB buffer in a loop and, with\n"
	       "--io-kib K, writes and reads back K KiB of a file in /tmp per operation.\n"
	       "\n"
	       "  --threads N   threads, 1..256; 0 (default): one per CPU it may run on\n"
	       "  --seconds S   run S seconds, 1..86400; 0 (default): until SIGTERM/SIGINT\n"
	       "  --io-kib K    file I/O per operation, 0..1024 KiB (default 0)\n"
	       "\n"
	       "Prints {\"tool\":\"burn\",\"metrics\":{\"ops_per_s\":..,\"cpu_fraction\":..},...}\n"
	       "when it stops, and exits 0.\n");
}

static double now_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* FNV-1a over the buffer, folded back in so no pass can be optimized out. */
static uint64_t hash_pass(unsigned char *buf, uint64_t seed)
{
	uint64_t h = seed ^ 1469598103934665603ULL;
	for (size_t i = 0; i < BURN_BUF; i++) {
		h ^= buf[i];
		h *= 1099511628211ULL;
		buf[i] = (unsigned char)(h >> 29);
	}
	return h;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned char *buf = malloc(BURN_BUF);
	char path[64];
	int fd = -1;
	uint64_t h = w->index;

	if (!buf) {
		snprintf(w->error, sizeof(w->error), "thread %u: out of memory", w->index);
		return NULL;
	}
	memset(buf, (int)w->index, BURN_BUF);
	if (w->io_kib) {
		snprintf(path, sizeof(path), "/tmp/burn-%d-%u", (int)getpid(), w->index);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			snprintf(w->error, sizeof(w->error), "thread %u: '%s': %s", w->index, path,
				 strerror(errno));
			free(buf);
			return NULL;
		}
		(void)unlink(path); /* gone when the load is killed */
	}
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		h = hash_pass(buf, h);
		for (unsigned long k = 0; fd >= 0 && k < w->io_kib; k += BURN_BUF / 1024) {
			size_t n =
			    (w->io_kib - k) * 1024 < BURN_BUF ? (w->io_kib - k) * 1024 : BURN_BUF;
			if (pwrite(fd, buf, n, (off_t)k * 1024) != (ssize_t)n ||
			    pread(fd, buf, n, (off_t)k * 1024) != (ssize_t)n) {
				snprintf(w->error, sizeof(w->error), "thread %u: file I/O: %s",
					 w->index, strerror(errno));
				atomic_store(&stop, true);
				break;
			}
		}
		atomic_fetch_add_explicit(&w->ops, 1, memory_order_relaxed);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int parse_args(int argc, char **argv, unsigned long *threads, unsigned long *seconds,
		      unsigned long *io_kib)
{
	static const struct option opts[] = {
	    {"threads", required_argument, NULL, 't'},
	    {"seconds", required_argument, NULL, 's'},
	    {"io-kib", required_argument, NULL, 'i'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
		switch (c) {
		case 't':
			if (wl_parse_uint(optarg, BURN_MAX_THREADS, threads) < 0)
				return fprintf(stderr, "burn: --threads must be 0..%d.\n",
					       BURN_MAX_THREADS),
				       -1;
			break;
		case 's':
			if (wl_parse_uint(optarg, BURN_MAX_SECONDS, seconds) < 0)
				return fprintf(stderr, "burn: --seconds must be 0..%d.\n",
					       BURN_MAX_SECONDS),
				       -1;
			break;
		case 'i':
			if (wl_parse_uint(optarg, BURN_MAX_IO_KIB, io_kib) < 0)
				return fprintf(stderr, "burn: --io-kib must be 0..%d.\n",
					       BURN_MAX_IO_KIB),
				       -1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "burn: unexpected argument '%s'.\n", argv[optind]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long threads = 0, seconds = 0, io_kib = 0;
	struct worker *w;
	sigset_t set;
	cpu_set_t cpus;

	if (parse_args(argc, argv, &threads, &seconds, &io_kib) < 0)
		return 2;
	if (threads == 0) {
		threads = sched_getaffinity(0, sizeof(cpus), &cpus) == 0
			      ? (unsigned long)CPU_COUNT(&cpus)
			      : 1;
		if (threads > BURN_MAX_THREADS)
			threads = BURN_MAX_THREADS;
	}
	/* the workers never see the stop signals: the main thread waits for them */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	w = calloc(threads, sizeof(*w));
	if (!w)
		return fprintf(stderr, "burn: out of memory.\n"), 1;
	double t0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	for (unsigned long i = 0; i < threads; i++) {
		w[i].index = (unsigned)i;
		w[i].io_kib = io_kib;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
			return fprintf(stderr, "burn: thread %lu could not start.\n", i), 1;
	}
	if (seconds)
		alarm((unsigned)seconds);
	int sig = 0;
	sigwait(&set, &sig);
	atomic_store(&stop, true);
	unsigned long long ops = 0;
	for (unsigned long i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		ops += atomic_load(&w[i].ops);
		if (w[i].error[0]) {
			fprintf(stderr, "burn: %s\n", w[i].error);
			return 1;
		}
	}
	double wall = now_s(CLOCK_MONOTONIC) - t0, cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	json_object *m = json_object_new_object(), *d = json_object_new_object();
	json_object_object_add(m, "ops_per_s",
			       wl_json_double(wall > 0 ? (double)ops / wall : 0, 6));
	json_object_object_add(m, "cpu_fraction",
			       wl_json_double(wall > 0 ? cpu / (wall * (double)threads) : 0, 4));
	json_object_object_add(d, "threads", json_object_new_int64((int64_t)threads));
	json_object_object_add(d, "ops", json_object_new_int64((int64_t)ops));
	json_object_object_add(d, "seconds", wl_json_double(wall, 6));
	json_object_object_add(d, "io_kib_per_op", json_object_new_int64((int64_t)io_kib));
	json_object_object_add(d, "stopped_by",
			       json_object_new_string(sig == SIGALRM ? "timer" : "signal"));
	wl_print_result("burn", m, d);
	free(w);
	return 0;
}
