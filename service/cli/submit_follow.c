/* Following a submitted job, fetching its result and cancelling it: the
 * parts of `schedlab submit` that talk to a job that exists. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/submit-internal.h"
#include "compare/result_model.h"
#include "report/junit.h"
#include "report/report.h"
#include "report/summary.h"
#include "server/store.h"
#include "util/fs.h"
#include "util/time.h"
#include "util/json_get.h"

volatile sig_atomic_t submit_interrupted;

static void on_signal(int sig)
{
	submit_interrupted = sig;
	/* A second Ctrl-C ends the process without waiting for the cancel. */
	signal(sig, SIG_DFL);
}

void submit_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the 2 s sleep between retries returns early. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void submit_print_http_error(const char *what, const struct httpclient_response *r)
{
	_cleanup_json_ json_object *o = NULL;
	json_object *e = NULL;
	if (r->body)
		(void)json_parse_strict(r->body, r->len, NULL, "error body", &o, NULL);
	if (o && json_object_object_get_ex(o, "error", &e)) {
		const char *path = json_member_string(e, "path");
		fprintf(stderr, "schedlab submit: %s: %s%s%s%s (HTTP %ld)\n", what,
			json_member_string(e, "message") ? json_member_string(e, "message")
							 : "error",
			path ? " [at " : "", path ? path : "", path ? "]" : "", r->status);
	} else
		fprintf(stderr, "schedlab submit: %s: HTTP %ld.\n", what, r->status);
}

struct follow {
	int64_t last_id;
};

static int on_event(void *userdata, int64_t id, const char *type, const char *data)
{
	struct follow *fl = userdata;
	fl->last_id = id;
	_cleanup_json_ json_object *d = NULL;
	if (json_parse_strict(data, strlen(data), NULL, "event", &d, NULL) < 0 || !d)
		return 0;
	char ts[TIME_ISO8601_MAX];
	time_now_iso8601(ts);
	const char *s;
	if (strcmp(type, "status") == 0) {
		s = json_member_string(d, "verdict");
		fprintf(stderr, "%s status: %s%s%s\n", ts,
			json_member_string(d, "status") ? json_member_string(d, "status") : "?",
			s ? ", verdict " : "", s ? s : "");
	} else if (strcmp(type, "progress") == 0) {
		json_object *pct = NULL, *ri = NULL, *rt = NULL;
		json_object_object_get_ex(d, "percent", &pct);
		json_object_object_get_ex(d, "run_index", &ri);
		json_object_object_get_ex(d, "run_total", &rt);
		s = json_member_string(d, "phase");
		fprintf(stderr, "%s [%s] ", ts, s ? s : "?");
		if (pct && json_object_get_double(pct) >= 0)
			fprintf(stderr, "%3.0f%% ", json_object_get_double(pct));
		if (rt && json_object_get_int(rt) > 0)
			fprintf(stderr, "run %d/%d ", json_object_get_int(ri),
				json_object_get_int(rt));
		s = json_member_string(d, "message");
		fprintf(stderr, "%s\n", s ? s : "");
	} else if (strcmp(type, "run") == 0)
		fprintf(stderr, "%s run %s: %s\n", ts,
			json_member_string(d, "run_key") ? json_member_string(d, "run_key") : "?",
			json_member_string(d, "status") ? json_member_string(d, "status") : "?");
	return 0;
}

static int get_job(struct httpclient *c, const char *id, struct httpclient_response *resp,
		   struct sl_error *err)
{
	char path[96];
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	return httpclient_request(c, "GET", path, NULL, NULL, 0, resp, err);
}

int submit_follow(struct httpclient *c, const char *id, long retry_for_s, json_object **ret_job,
		  struct sl_error *err)
{
	char path[96];
	struct follow fl = {0};
	double last_answer = time_monotonic_s();
	for (;;) {
		snprintf(path, sizeof(path), "/v1/jobs/%s/events", id);
		long st = 0;
		struct sl_error e2 = {0};
		int r = httpclient_events(c, path, fl.last_id, on_event, &fl, &st, &e2);
		if (r < 0 && e2.kind == ERR_CANCELLED)
			return error_set(err, ERR_CANCELLED, EINTR, "Interrupted.");
		struct httpclient_response resp = {0};
		int g = get_job(c, id, &resp, &e2);
		if (g < 0 && e2.kind == ERR_CANCELLED)
			return error_set(err, ERR_CANCELLED, EINTR, "Interrupted.");
		if (g == 0 && resp.status == 200) {
			json_object *job = NULL;
			(void)json_parse_strict(resp.body, resp.len, NULL, "job status", &job,
						NULL);
			httpclient_response_clear(&resp);
			if (job && store_status_is_final(json_member_string(job, "status"))) {
				*ret_job = job;
				return 0;
			}
			json_object_put(job);
			last_answer = time_monotonic_s();
		} else if (g == 0 && resp.status != 200 && resp.status < 500) {
			submit_print_http_error("cannot read the job", &resp);
			long status = resp.status;
			httpclient_response_clear(&resp);
			return error_set(err, ERR_INFRA, EIO, "The service answered HTTP %ld.",
					 status);
		} else
			httpclient_response_clear(&resp);
		double quiet = time_monotonic_s() - last_answer;
		if (quiet > (double)retry_for_s)
			return error_set(err, ERR_INFRA, EIO,
					 "The service has not answered for %.0f s (--retry-for "
					 "%ld): %s",
					 quiet, retry_for_s,
					 e2.message[0] ? e2.message : "no answer.");
		if (r < 0 || g < 0)
			fprintf(stderr, "schedlab submit: %s Retrying.\n",
				e2.message[0] ? e2.message : "The service did not answer.");
		/* The service may be restarting: it resumes the job. */
		struct timespec ts = {2, 0};
		nanosleep(&ts, NULL);
		if (submit_interrupted)
			return error_set(err, ERR_CANCELLED, EINTR, "Interrupted.");
	}
}

static int write_outputs(const struct model_result *m, const char *text,
			 const struct submit_outputs *out, struct sl_error *err)
{
	int r;
	if (out->result && (r = fs_write_file_atomic(out->result, text, strlen(text), err)) < 0)
		return r;
	if (out->junit) {
		_cleanup_free_ char *xml = NULL;
		if (junit_from_model(m, &xml) < 0)
			return error_set(err, ERR_INTERNAL, ENOMEM,
					 "Out of memory writing JUnit XML.");
		if ((r = fs_write_file_atomic(out->junit, xml, strlen(xml), err)) < 0)
			return r;
	}
	if (out->report) {
		_cleanup_free_ char *html = NULL;
		if ((r = report_html_model(m, &html, err)) < 0 ||
		    (r = fs_write_file_atomic(out->report, html, strlen(html), err)) < 0)
			return r;
	}
	return 0;
}

int submit_fetch_result(struct httpclient *c, const char *id, const struct submit_outputs *out,
			json_object **ret_result, int *ret_exit, struct sl_error *err)
{
	char path[96];
	snprintf(path, sizeof(path), "/v1/jobs/%s/result", id);
	struct httpclient_response resp = {0};
	int r = httpclient_request(c, "GET", path, NULL, NULL, 0, &resp, err);
	if (r < 0)
		return r;
	if (resp.status != 200) {
		submit_print_http_error("cannot fetch the result", &resp);
		long status = resp.status;
		httpclient_response_clear(&resp);
		return error_set(err, status == 409 ? ERR_CONFLICT : ERR_INFRA, EIO,
				 "The result of job %s could not be fetched (HTTP %ld).", id,
				 status);
	}
	char what[64];
	snprintf(what, sizeof(what), "result of job %s", id);
	_cleanup_json_ json_object *result = NULL;
	r = json_parse_strict(resp.body, resp.len, NULL, what, &result, err);
	if (r == 0 && !json_object_is_type(result, json_type_object))
		r = error_set(err, ERR_INFRA, EIO, "The %s is not a JSON object.", what);
	/* One parse for every output, the summary and the exit status. */
	struct model_result m = {0};
	if (r == 0)
		r = model_result_parse(result, &m, err);
	if (r == 0)
		r = write_outputs(&m, resp.body, out, err);
	httpclient_response_clear(&resp);
	if (r == 0) {
		summary_print_model(stderr, &m);
		*ret_exit = summary_exit_code_model(&m);
	}
	model_result_free(&m);
	if (r < 0)
		return r;
	*ret_result = TAKE_PTR(result);
	return 0;
}

int submit_cancel(struct httpclient *c, const char *id, bool *ret_requested, struct sl_error *err)
{
	char path[96];
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	httpclient_set_interrupt(c, NULL);
	struct httpclient_response resp = {0};
	int r = httpclient_request(c, "DELETE", path, NULL, NULL, 0, &resp, err);
	if (r < 0)
		return r;
	long status = resp.status;
	if (status != 200 && status != 202) {
		submit_print_http_error("cannot cancel the job", &resp);
		httpclient_response_clear(&resp);
		if (status == 409)
			return error_set(err, ERR_CONFLICT, EBUSY,
					 "Job %s has already ended; there is nothing to cancel.",
					 id);
		return error_set(err, ERR_INFRA, EIO, "The service answered HTTP %ld.", status);
	}
	httpclient_response_clear(&resp);
	*ret_requested = status == 202;
	return 0;
}

void submit_print_ending(const char *id, json_object *job)
{
	const char *status = json_member_string(job, "status");
	json_object *e = NULL;
	json_object_object_get_ex(job, "error", &e);
	const char *msg = e ? json_member_string(e, "message") : NULL;
	fprintf(stderr, "schedlab submit: job %s ended %s%s%s\n", id, status ? status : "?",
		msg ? ": " : ".", msg ? msg : "");
}
