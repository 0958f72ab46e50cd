/* GET /v1/schedules: the config's schedules with their last run (job id,
 * time, slot) and next run (scheduler.h, docs/service.md "Schedules"). */
#include "server/http.h"
#include "server/http-internal.h"
#include "server/scheduler.h"

enum MHD_Result http_schedules_list(struct http_server *srv, struct MHD_Connection *conn,
				    struct request *req)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *o =
	    scheduler_list_json(srv->opts->config, srv->opts->store, &err);
	if (!o)
		return http_respond_error(conn, req, &err);
	return http_respond_json(conn, req, MHD_HTTP_OK, o);
}
