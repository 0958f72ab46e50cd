/* schedlab serve: the HTTP service over the job store and queue. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "guest/guest.h"
#include "run/series_runner.h"
#include "server/http.h"
#include "server/queue.h"
#include "server/nightly_clock.h"
#include "server/retention_timer.h"
#include "server/webhook.h"
#include "server/config.h"
#include "server/store.h"
#include "util/fs.h"
#include "util/parse.h"
#include "util/time.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* One timestamped line per event on stderr, serialized across threads. */
static void serve_log(const char *line)
{
	char ts[TIME_ISO8601_MAX];
	time_now_iso8601(ts);
	pthread_mutex_lock(&log_lock);
	fprintf(stderr, "%s schedlab: %s\n", ts, line);
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: schedlab serve --state DIR [--listen HOST:PORT] [--config FILE]\n"
		   "                      [--workers N] [--port-file FILE]\n\n"
		   "Runs the REST API (see docs/service.md and results-schema/openapi.yaml).\n\n"
		   "  --listen HOST:PORT  address to bind (default from the config, else\n"
		   "                      127.0.0.1:8080; port 0 picks a free port)\n"
		   "  --state DIR         job store (SQLite) and per-job files\n"
		   "  --config FILE       JSON config: tokens, limits, workers, slots, ...\n"
		   "  --workers N         job workers (overrides the config)\n"
		   "  --port-file FILE    write the bound port here once listening\n"
		   "  --cleanup-domains   destroy every running 'schedlab-' domain at start\n"
		   "                      (only where this service is libvirt's sole schedlab\n"
		   "                      user, e.g. its container)\n\n"
		   "Without tokens in the config only loopback addresses are allowed.\n"
		   "SIGTERM or SIGINT stops it; running jobs are re-queued for the next start.\n");
}

/* Destroys schedlab- domains a previous instance left behind. Opt-in: guests
 * are started with VIR_DOMAIN_START_AUTODESTROY, so libvirt already ends the
 * domains of a service that died; run ids do not say which process started a
 * domain, so a blanket cleanup would also end the guests of a concurrent
 * `schedlab run` or a second service on the same host. */
static void cleanup_leftover_domains(const struct service_config *cfg)
{
	struct sl_error err = {0};
	struct guest_host *h = guest_host_open(cfg->libvirt_uri, &err);
	if (!h) {
		char line[1200];
		snprintf(line, sizeof(line), "cannot clean up leftover domains: %s", err.message);
		serve_log(line);
		return;
	}
	int n = guest_cleanup_leftovers(h, GUEST_DOMAIN_PREFIX, &err);
	char line[1200];
	if (n < 0)
		snprintf(line, sizeof(line), "cannot clean up leftover domains: %s", err.message);
	else
		snprintf(line, sizeof(line), "destroyed %d leftover schedlab- domain(s)", n);
	serve_log(line);
	guest_host_free(h);
}

/* The kernel cache is made private (0700) when the service makes it, and
 * made at start, so /v1/health watches its filesystem from the first. */
static int cache_prepare(const struct service_config *cfg, struct sl_error *err)
{
	_cleanup_free_ char *cache =
	    cfg->cache_dir ? strdup(cfg->cache_dir) : fs_default_cache_dir();
	if (!cache)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	return fs_mkdir_private(cache, err);
}

/* What every worker's runner gets from the config (strings borrowed). */
static struct runner_config runner_config_of(const struct service_config *cfg)
{
	return (struct runner_config){
	    .cache_dir = cfg->cache_dir,
	    .libvirt_uri = cfg->libvirt_uri,
	    .accel = cfg->accelerator,
	    .build_slots = cfg->build_slots,
	    .build_no_sandbox = !cfg->build_sandbox,
	    .build_timeout_s = cfg->build_timeout_s,
	    .guest_slots = cfg->guest_slots,
	    .hostpool = cfg->hostpool,
	    .cache_max_bytes = cfg->cache_max_bytes,
	    .min_free_bytes = cfg->min_free_bytes,
	    .disk_wait_max_s = cfg->disk_wait_max_s,
	};
}

/* What the command line of serve says. */
struct serve_args {
	const char *listen, *state, *config_path, *port_file;
	int workers; /* 0: the config's */
	bool cleanup_domains;
};

/* Parses serve's options into *a: 0 to go on, or 1 when serve is done
 * (--help, a bad option) with its exit code in *ret_exit. */
static int serve_parse(int argc, char **argv, struct serve_args *a, int *ret_exit)
{
	static const struct option opts[] = {
	    {"listen", required_argument, NULL, 'l'},
	    {"state", required_argument, NULL, 's'},
	    {"config", required_argument, NULL, 'c'},
	    {"workers", required_argument, NULL, 'w'},
	    {"port-file", required_argument, NULL, 'p'},
	    {"cleanup-domains", no_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "l:s:c:w:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			a->listen = optarg;
			break;
		case 's':
			a->state = optarg;
			break;
		case 'c':
			a->config_path = optarg;
			break;
		case 'w': {
			long n = 0;
			if (parse_int(optarg, 1, 64, &n) < 0) {
				fprintf(stderr, "schedlab serve: --workers '%s' is not 1..64.\n",
					optarg);
				*ret_exit = EXIT_ERROR;
				return 1;
			}
			a->workers = (int)n;
			break;
		}
		case 'p':
			a->port_file = optarg;
			break;
		case 'C':
			a->cleanup_domains = true;
			break;
		case 'h':
			usage(stdout);
			*ret_exit = EXIT_PASS;
			return 1;
		default:
			usage(stderr);
			*ret_exit = EXIT_ERROR;
			return 1;
		}
	}
	if (!a->state || optind != argc) {
		usage(stderr);
		*ret_exit = EXIT_ERROR;
		return 1;
	}
	return 0;
}

/* The store as a starting service wants it: jobs a stop interrupted back
 * at the front of the queue, finished ones past the retention purged. */
static int store_startup(struct store *store, const struct service_config *cfg,
			 struct sl_error *err)
{
	int requeued = 0;
	if (store_requeue_interrupted(store, &requeued, err) < 0)
		return -1;
	if (requeued) {
		char line[128];
		snprintf(line, sizeof(line), "re-queued %d interrupted job(s) at the front",
			 requeued);
		serve_log(line);
	}
	int purged = 0;
	if (store_purge_finished(store, cfg->retention.finished_max_age_s,
				 cfg->retention.drop_results, 100000, &purged, err) < 0)
		return -1;
	if (purged) {
		char line[128];
		snprintf(line, sizeof(line), "retention: purged %d finished job(s)", purged);
		serve_log(line);
	}
	return 0;
}

/* The clock offset of schedules, for tests only (e2e 72): an environment
 * variable of this process, never reachable from the API. -1 (said on
 * stderr) when it is not a number of seconds. */
static int test_clock_apply(void)
{
	const char *offset = getenv("SCHEDLAB_TEST_CLOCK_OFFSET_S");
	if (!offset)
		return 0;
	long n = 0;
	if (parse_int(offset, -315360000L, 315360000L, &n) < 0) {
		fprintf(stderr,
			"schedlab serve: SCHEDLAB_TEST_CLOCK_OFFSET_S '%s' is not a number "
			"of seconds.\n",
			offset);
		return -1;
	}
	nightly_clock_set_offset(n);
	serve_log("test clock: schedules run SCHEDLAB_TEST_CLOCK_OFFSET_S seconds ahead");
	return 0;
}

int cli_serve(int argc, char **argv)
{
	struct serve_args args = {0};
	int exit_code = EXIT_ERROR;
	if (serve_parse(argc, argv, &args, &exit_code) > 0)
		return exit_code;
	const char *listen = args.listen, *state = args.state, *port_file = args.port_file;
	struct sl_error err = {0};
	struct service_config *cfg = NULL;
	struct store *store = NULL;
	struct queue *queue = NULL;
	struct http_server *srv = NULL;
	struct nightly_clock *nightly = NULL;
	struct retention_timer *retention = NULL;
	struct webhooks *hooks = NULL;
	int ret = EXIT_ERROR;
	if ((args.config_path ? service_config_load(args.config_path, &cfg, &err)
			      : service_config_new(&cfg, &err)) < 0)
		goto fail;
	if (listen) {
		free(cfg->listen);
		cfg->listen = strdup(listen);
	}
	if (args.workers)
		cfg->workers = args.workers;

	/* Signals go to sigwait() below, not to the worker threads. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (store_open(state, &store, &err) < 0 || cache_prepare(cfg, &err) < 0 ||
	    store_startup(store, cfg, &err) < 0)
		goto fail;
	if (retention_timer_start(cfg, store, serve_log, &retention, &err) < 0)
		goto fail;
	if (args.cleanup_domains)
		cleanup_leftover_domains(cfg);
	/* Change points after each job, alerts to the "webhooks" (webhook.h). */
	struct webhook_opts wo = {.config = cfg, .store = store, .log = serve_log};
	if (webhooks_start(&wo, &hooks, &err) < 0)
		goto fail;
	struct queue_opts qo = {
	    .store = store,
	    /* runner_run_job, then a bisection when the job asks for one */
	    .runner = run_job_and_bisect,
	    .runner_cfg = runner_config_of(cfg),
	    .workers = cfg->workers,
	    .log = serve_log,
	    .ended = webhooks_job_ended,
	    .ended_cls = hooks,
	};
	if (queue_new(&qo, &queue, &err) < 0)
		goto fail;
	webhooks_set_queue(hooks, queue); /* "bisect_change_points" */
	struct http_server_opts ho = {
	    .config = cfg,
	    .store = store,
	    .queue = queue,
	    .log = serve_log,
	};
	if (http_server_new(&ho, &srv, &err) < 0)
		goto fail;
	/* "workers": 0 holds every job in the queue (docs/service.md). */
	if (cfg->workers > 0 && queue_start(queue, &err) < 0)
		goto fail;
	/* Schedules (docs/service.md "Schedules"). */
	if (test_clock_apply() < 0)
		goto out;
	struct nightly_clock_opts so = {
	    .config = cfg, .store = store, .queue = queue, .log = serve_log};
	if (nightly_clock_start(&so, &nightly, &err) < 0)
		goto fail;
	{
		char line[256];
		snprintf(line, sizeof(line),
			 "listening on '%s' (port %u), state '%s', %d worker(s), %zu queued job(s)",
			 cfg->listen, http_server_port(srv), state, cfg->workers,
			 queue_depth(queue));
		serve_log(line);
	}
	if (port_file) {
		char buf[16];
		int n = snprintf(buf, sizeof(buf), "%u\n", http_server_port(srv));
		if (fs_write_file_atomic(port_file, buf, (size_t)n, &err) < 0)
			goto fail;
	}
	int sig = 0;
	sigwait(&set, &sig);
	{
		char line[96];
		snprintf(line, sizeof(line), "signal %d: stopping (running jobs are re-queued)",
			 sig);
		serve_log(line);
	}
	ret = EXIT_PASS;
	goto out;
fail:
	fprintf(stderr, "schedlab serve: %s\n", err.message);
out:
	retention_timer_free(retention);
	nightly_clock_free(nightly);
	http_server_free(srv);
	webhooks_set_queue(hooks, NULL); /* no bisection starts into a freed queue */
	queue_free(queue);
	webhooks_free(hooks);
	store_free(store);
	service_config_free(cfg);
	return ret;
}
