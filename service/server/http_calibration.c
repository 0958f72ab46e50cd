/* GET /v1/calibration: the A/A calibrations in the service's cache
 * (compare/calibration.h; `schedlab calibrate` makes them, and the service's
 * jobs on this host use them), newest first, each with its age; and the
 * summary GET /v1/health shows (how many, the newest's age). */
#include "compare/calibration.h"
#include "server/http-internal.h"
#include "server/http.h"
#include "util/fs.h"

#define HTTP_CALIBRATION_MAX 100

static json_object *list(struct http_server *srv)
{
	const char *dir = srv->opts->config ? srv->opts->config->cache_dir : NULL;
	_cleanup_free_ char *def = dir ? NULL : fs_default_cache_dir();
	return calibration_list(dir ? dir : def, HTTP_CALIBRATION_MAX);
}

json_object *http_calibration_summary(struct http_server *srv)
{
	_cleanup_json_ json_object *all = list(srv);
	json_object *o = json_object_new_object();
	size_t n = json_object_array_length(all);
	json_object_object_add(o, "count", json_object_new_int64((int64_t)n));
	if (n > 0) {
		json_object *newest = json_object_array_get_idx(all, 0), *v = NULL;
		if (json_object_object_get_ex(newest, "made_at", &v))
			json_object_object_add(o, "newest_made_at", json_object_get(v));
		if (json_object_object_get_ex(newest, "age_s", &v))
			json_object_object_add(o, "newest_age_s", json_object_get(v));
	}
	return o;
}

enum MHD_Result http_calibration_list(struct http_server *srv, struct MHD_Connection *conn,
				      struct request *req)
{
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object_object_add(o, "calibrations", list(srv));
	return http_respond_json(conn, req, MHD_HTTP_OK, o);
}
