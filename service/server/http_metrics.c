/* The service-wide views: GET /v1/health, GET /metrics (Prometheus text
 * format 0.0.4, from the counters the store keeps as rows change, the
 * queue, the connections and the host pool) and GET /v1/trend (the nightly trend page over this
 * store). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "server/http.h"
#include "server/http-internal.h"
#include "server/counters.h"
#include "guest/hostpool.h"
#include "guest/libvirt_probe.h"
#include "report/trend.h"
#include "server/store_trend.h"
#include "util/disk.h"
#include "util/fs.h"
#include "util/parse.h"
#include "util/version.h"

/* ---- health and metrics ---- */

/* The free space of the cache's and the state's filesystems against the
 * floor (util/disk.h), read now: {"min_free_bytes", "cache_free_bytes",
 * "state_free_bytes", "below_floor", "reason"}. No paths: health is served
 * without a token. */
static json_object *disk_json(struct http_server *srv, bool *ret_low)
{
	const struct service_config *c = srv->opts->config;
	_cleanup_free_ char *cache = c->cache_dir ? strdup(c->cache_dir) : fs_default_cache_dir();
	const char *state = store_state_dir(srv->opts->store);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "min_free_bytes",
			       json_object_new_int64((int64_t)c->min_free_bytes));
	/* a cache the first build has not made yet is not watched */
	const struct disk_fs fs[] = {{"cache", cache && fs_exists(cache) ? cache : NULL},
				     {"state", state}};
	for (size_t i = 0; i < ELEMENTSOF(fs); i++) {
		unsigned long long avail = 0, size = 0;
		char key[32];
		snprintf(key, sizeof(key), "%s_free_bytes", fs[i].label);
		if (fs[i].path && disk_space(fs[i].path, &avail, &size, NULL) == 0)
			json_object_object_add(o, key, json_object_new_int64((int64_t)avail));
	}
	char why[256] = "";
	int low = disk_floor_check(fs, ELEMENTSOF(fs), c->min_free_bytes, why, sizeof(why), NULL);
	*ret_low = low > 0;
	json_object_object_add(o, "below_floor", json_object_new_boolean(low > 0));
	if (low > 0)
		json_object_object_add(o, "reason", json_object_new_string(why));
	return o;
}

int http_health_init(struct http_server *srv)
{
	const struct service_config *cfg = srv->opts->config;
	size_t n = cfg->hostpool ? hostpool_size(cfg->hostpool) : 1;
	srv->probes = calloc(n, sizeof(*srv->probes));
	if (!srv->probes)
		return -ENOMEM;
	srv->n_probes = n;
	for (size_t i = 0; i < n; i++) {
		const char *uri = cfg->hostpool	     ? hostpool_uri(cfg->hostpool, i)
				  : cfg->libvirt_uri ? cfg->libvirt_uri
						     : "qemu:///system";
		if (!(srv->probes[i] = libvirt_probe_new(uri)))
			return -ENOMEM;
	}
	return 0;
}

void http_health_fini(struct http_server *srv)
{
	for (size_t i = 0; i < srv->n_probes; i++)
		libvirt_probe_free(srv->probes[i]);
	free(srv->probes);
	srv->probes = NULL;
	srv->n_probes = 0;
}

/* "libvirt": each daemon's probe. A daemon that does not answer within the
 * bound makes the service "degraded" (still 200: the service itself
 * answers; docs/guests.md says what to do about the daemon). */
enum MHD_Result http_metrics_health(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req)
{
	_cleanup_json_ json_object *o = json_object_new_object();
	bool low = false;
	json_object *disk = disk_json(srv, &low);
	json_object *lv = json_object_new_array();
	bool wedged = false;
	double bound = libvirt_probe_timeout_s();
	for (size_t i = 0; i < srv->n_probes; i++) {
		json_object *p = libvirt_probe_check(srv->probes[i], bound, LIBVIRT_PROBE_AGE_S);
		json_object *st = json_object_object_get(p, "state");
		if (strcmp(json_object_get_string(st), "no_answer") == 0)
			wedged = true;
		json_object_array_add(lv, p);
	}
	/* "degraded": up and answering, but new builds and runs wait for room,
	 * or a libvirt daemon does not answer */
	json_object_object_add(o, "status",
			       json_object_new_string(low || wedged ? "degraded" : "ok"));
	json_object_object_add(o, "disk", disk);
	json_object_object_add(o, "version", json_object_new_string(SCHEDLAB_VERSION));
	json_object_object_add(o, "queue_depth",
			       json_object_new_int64((int64_t)queue_depth(srv->opts->queue)));
	json_object_object_add(o, "running",
			       json_object_new_int64((int64_t)queue_running(srv->opts->queue)));
	json_object_object_add(o, "workers", json_object_new_int(srv->opts->config->workers));
	json_object_object_add(o, "calibration", http_calibration_summary(srv));
	json_object_object_add(o, "libvirt", lv);
	return http_respond_json(conn, req, MHD_HTTP_OK, o);
}

/* Reads counters kept as events happen (counters.h) and the queue's and the
 * server's own gauges: no store query, so a scrape never waits for or holds
 * the store's lock. */
enum MHD_Result http_metrics_prometheus(struct http_server *srv, struct MHD_Connection *conn,
					struct request *req)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return http_respond_errorf(conn, req, ERR_INTERNAL, NULL, "Out of memory.");
	fprintf(f,
		"# HELP schedlab_build_info The running schedlab's version.\n"
		"# TYPE schedlab_build_info gauge\nschedlab_build_info{version=\"%s\"} 1\n",
		SCHEDLAB_VERSION);
	/* The counters marked "service start" in docs/service.md restart from 0
	 * with the service; this says when (Prometheus' rate() handles the
	 * reset, and dashboards can show it). */
	fprintf(f,
		"# HELP process_start_time_seconds When the service started, in seconds since "
		"the Unix epoch.\n"
		"# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.3f\n",
		srv->started_unix);
	counters_write(store_counters(srv->opts->store), f);
	{
		bool low = false;
		_cleanup_json_ json_object *d = disk_json(srv, &low);
		fprintf(f,
			"# HELP schedlab_disk_free_bytes Free bytes of the cache's and the state's "
			"filesystems.\n# TYPE schedlab_disk_free_bytes gauge\n");
		json_object_object_foreach(d, k, v)
		{
			size_t n = strlen(k);
			if (n > 11 && strcmp(k + n - 11, "_free_bytes") == 0 &&
			    strcmp(k, "min_free_bytes") != 0)
				fprintf(f, "schedlab_disk_free_bytes{fs=\"%.*s\"} %" PRId64 "\n",
					(int)(n - 11), k, json_object_get_int64(v));
		}
		fprintf(f,
			"# HELP schedlab_disk_below_floor 1 while a filesystem is below "
			"min_free_bytes: new builds and runs wait.\n"
			"# TYPE schedlab_disk_below_floor gauge\nschedlab_disk_below_floor %d\n",
			low);
	}
	fprintf(f,
		"# HELP schedlab_queue_depth Jobs waiting for a worker.\n"
		"# TYPE schedlab_queue_depth gauge\nschedlab_queue_depth %zu\n",
		queue_depth(srv->opts->queue));
	fprintf(f,
		"# HELP schedlab_jobs_running Jobs a worker is running.\n"
		"# TYPE schedlab_jobs_running gauge\nschedlab_jobs_running %zu\n",
		queue_running(srv->opts->queue));
	fprintf(f,
		"# HELP schedlab_http_connections Open HTTP connections.\n"
		"# TYPE schedlab_http_connections gauge\nschedlab_http_connections %zu\n"
		"# HELP schedlab_http_event_streams Open event streams.\n"
		"# TYPE schedlab_http_event_streams gauge\nschedlab_http_event_streams %zu\n"
		"# HELP schedlab_http_deadline_closed_total Connections closed because their "
		"request did not arrive within request_deadline_s.\n"
		"# TYPE schedlab_http_deadline_closed_total counter\n"
		"schedlab_http_deadline_closed_total %llu\n"
		"# HELP schedlab_http_streams_refused_total Event streams refused over "
		"max_streams_per_token.\n"
		"# TYPE schedlab_http_streams_refused_total counter\n"
		"schedlab_http_streams_refused_total %llu\n",
		http_conns_count(srv), http_streams_count(srv),
		(unsigned long long)atomic_load(&srv->deadline_closed),
		(unsigned long long)atomic_load(&srv->streams_refused));
	/* Hypervisor hosts' state and slots, when the config lists them. */
	if (srv->opts->config->hostpool)
		hostpool_write_metrics(srv->opts->config->hostpool, f);
	fclose(f);
	return http_respond_buf(conn, req, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
				text, len, MHD_RESPMEM_MUST_FREE);
}

/* ---- GET /v1/trend ---- */

int http_query_since(struct MHD_Connection *conn, long *ret_seconds, struct sl_error *err)
{
	const char *since = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "since");
	*ret_seconds = HTTP_SINCE_DEFAULT_S;
	if (since && (strlen(since) > 32 || parse_duration(since, ret_seconds) < 0))
		return error_set_path(err, ERR_INVALID, "since",
				      "Query parameter 'since' is '%.32s', not a duration such as "
				      "'30d', '12h', '90m' or '3600s'.",
				      since);
	return 0;
}

/* The nightly trend page, the same one `schedlab trend` writes, over
 * ?since= (default 30d) read from this service's own store. */
enum MHD_Result http_metrics_trend(struct http_server *srv, struct MHD_Connection *conn,
				   struct request *req)
{
	struct sl_error err = {0};
	long seconds = 0;
	if (http_query_since(conn, &seconds, &err) < 0)
		return http_respond_error(conn, req, &err);
	char *html = NULL;
	/* The store is the service's own: any failure here is a 500, and its
	 * message (which may name this host's paths) goes to the log only. */
	if (store_trend_html(store_state_dir(srv->opts->store), seconds, &html, &err) < 0) {
		http_log(srv, "trend: %s", err.message);
		return http_respond_errorf(
		    conn, req, ERR_INTERNAL, NULL,
		    "The trend page cannot be made from this service's store.");
	}
	return http_respond_buf(conn, req, MHD_HTTP_OK, "text/html; charset=utf-8", html,
				strlen(html), MHD_RESPMEM_MUST_FREE);
}
