/* The service-wide views: GET /v1/health, GET /metrics (Prometheus text
 * format 0.0.4, from the store's counts and timings, the queue and the host
 * pool) and GET /v1/trend (the nightly trend page over this store). */
#include <inttypes.h>
#include <string.h>

#include "server/http.h"
#include "server/http-internal.h"
#include "guest/hostpool.h"
#include "report/trend.h"
#include "util/parse.h"
#include "util/version.h"

/* ---- health and metrics ---- */

enum MHD_Result http_metrics_health(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req)
{
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object_object_add(o, "status", json_object_new_string("ok"));
	json_object_object_add(o, "version", json_object_new_string(SCHEDLAB_VERSION));
	json_object_object_add(o, "queue_depth",
			       json_object_new_int64((int64_t)queue_depth(srv->opts->queue)));
	json_object_object_add(o, "running",
			       json_object_new_int64((int64_t)queue_running(srv->opts->queue)));
	json_object_object_add(o, "workers", json_object_new_int(srv->opts->config->workers));
	json_object_object_add(o, "calibration", http_calibration_summary(srv));
	return http_respond_json(conn, req, MHD_HTTP_OK, o);
}

static void metric_histogram(FILE *f, const char *name, const char *help, json_object *values,
			     const double *bounds, size_t nb)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	size_t n = values ? json_object_array_length(values) : 0;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += json_object_get_double(json_object_array_get_idx(values, i));
	for (size_t b = 0; b < nb; b++) {
		size_t c = 0;
		for (size_t i = 0; i < n; i++)
			if (json_object_get_double(json_object_array_get_idx(values, i)) <=
			    bounds[b])
				c++;
		fprintf(f, "%s_bucket{le=\"%g\"} %zu\n", name, bounds[b], c);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %zu\n%s_sum %.3f\n%s_count %zu\n", name, n, name, sum,
		name, n);
}

enum MHD_Result http_metrics_prometheus(struct http_server *srv, struct MHD_Connection *conn,
					struct request *req)
{
	static const char *const job_statuses[] = {"queued",	"building", "booting", "running",
						   "comparing", "done",	    "failed",  "cancelled"};
	static const char *const run_statuses[] = {"ok", "hung", "panic", "crashed", "error"};
	static const double build_bounds[] = {10, 30, 60, 120, 300, 600, 1200, 1800, 3600};
	static const double boot_bounds[] = {0.25, 0.5, 1, 2, 5, 10, 30, 60, 120};
	struct sl_error err = {0};
	_cleanup_json_ json_object *jobs = NULL, *runs = NULL, *builds = NULL, *boots = NULL;
	if (store_job_counts(srv->opts->store, &jobs, &err) < 0 ||
	    store_run_counts(srv->opts->store, &runs, &err) < 0 ||
	    store_build_seconds(srv->opts->store, &builds, &err) < 0 ||
	    store_boot_seconds(srv->opts->store, &boots, &err) < 0)
		return http_respond_error(conn, req, &err);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return http_respond_errorf(conn, req, ERR_INTERNAL, NULL, "Out of memory.");
	fprintf(f,
		"# HELP schedlab_jobs Jobs in the store by status.\n# TYPE schedlab_jobs gauge\n");
	for (size_t i = 0; i < ELEMENTSOF(job_statuses); i++) {
		json_object *v = json_object_object_get(jobs, job_statuses[i]);
		fprintf(f, "schedlab_jobs{status=\"%s\"} %" PRId64 "\n", job_statuses[i],
			v ? json_object_get_int64(v) : 0);
	}
	fprintf(f,
		"# HELP schedlab_queue_depth Jobs waiting for a worker.\n"
		"# TYPE schedlab_queue_depth gauge\nschedlab_queue_depth %zu\n",
		queue_depth(srv->opts->queue));
	fprintf(f,
		"# HELP schedlab_jobs_running Jobs a worker is running.\n"
		"# TYPE schedlab_jobs_running gauge\nschedlab_jobs_running %zu\n",
		queue_running(srv->opts->queue));
	fprintf(f, "# HELP schedlab_runs_total Finished guest runs by status.\n"
		   "# TYPE schedlab_runs_total counter\n");
	for (size_t i = 0; i < ELEMENTSOF(run_statuses); i++) {
		json_object *v = json_object_object_get(runs, run_statuses[i]);
		fprintf(f, "schedlab_runs_total{status=\"%s\"} %" PRId64 "\n", run_statuses[i],
			v ? json_object_get_int64(v) : 0);
	}
	metric_histogram(f, "schedlab_build_seconds", "Kernel build time (cache misses).", builds,
			 build_bounds, ELEMENTSOF(build_bounds));
	metric_histogram(f, "schedlab_boot_seconds", "Guest boot time per run.", boots, boot_bounds,
			 ELEMENTSOF(boot_bounds));
	/* Hypervisor hosts' state and slots, when the config lists them. */
	if (srv->opts->config->hostpool)
		hostpool_write_metrics(srv->opts->config->hostpool, f);
	fclose(f);
	return http_respond_buf(conn, req, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
				text, len, MHD_RESPMEM_MUST_FREE);
}

/* ---- GET /v1/trend ---- */

/* The nightly trend page, the same one `schedlab trend` writes, over
 * ?since= (default 30d) read from this service's own store. */
enum MHD_Result http_metrics_trend(struct http_server *srv, struct MHD_Connection *conn,
				   struct request *req)
{
	struct sl_error err = {0};
	const char *since = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "since");
	long seconds = 30L * 86400;
	if (since && (strlen(since) > 32 || parse_duration(since, &seconds) < 0))
		return http_respond_errorf(
		    conn, req, ERR_INVALID, "since",
		    "Query parameter 'since' is '%.32s', not a duration such as "
		    "'30d', '12h', '90m' or '3600s'.",
		    since);
	char *html = NULL;
	if (trend_html(store_state_dir(srv->opts->store), seconds, &html, &err) < 0)
		return http_respond_error(conn, req, &err);
	return http_respond_buf(conn, req, MHD_HTTP_OK, "text/html; charset=utf-8", html,
				strlen(html), MHD_RESPMEM_MUST_FREE);
}
