/* schedlab submit: sends a job to a schedlab service, optionally follows it
 * to the end and gates a CI pipeline on its verdict. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/httpclient.h"
#include "report/junit.h"
#include "server/store.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/time.h"

#define JOB_FILE_MAX	(8u * 1024 * 1024)
#define PATCH_FILE_MAX	(4u * 1024 * 1024)
#define MAX_PATCH_ARGS	200
#define RECONNECT_TRIES 30

static void usage(FILE *f)
{
	fprintf(f, "Usage: schedlab submit JOB.json --server URL [--token T] [--wait] [--gate]\n"
		   "                       [-o RESULT.json] [--junit FILE] [--patch FILE...]\n"
		   "                       [--priority N]\n\n"
		   "Submits a job to a schedlab service and prints its id.\n\n"
		   "  --server URL     the service, e.g. http://127.0.0.1:8080\n"
		   "  --token T        bearer token (default: $SCHEDLAB_TOKEN)\n"
		   "  --wait           follow the job's progress until it ends\n"
		   "  --gate           like --wait, then exit by verdict: 0 pass, 1 fail,\n"
		   "                   3 inconclusive, 2 error (job failed, cancelled, ...)\n"
		   "  -o FILE          write the result JSON here (implies --wait)\n"
		   "  --junit FILE     write JUnit XML here (implies --wait)\n"
		   "  --patch FILE     add a patch file (repeatable): appended to the CI\n"
		   "                   shorthand's patches\n"
		   "  --priority N     queue priority, -100..100 (higher first)\n\n"
		   "Patches given in the job by {\"path\": ...} are read here, relative to the\n"
		   "job file, and sent inline: the service accepts no local paths.\n");
}

/* Turns {"path": P} patches into inline {name, content} (the service takes
 * only built-in series and inline content). */
static int inline_list(json_object *list, const char *base_dir, struct sl_error *err)
{
	if (!list || !json_object_is_type(list, json_type_array))
		return 0;
	size_t n = json_object_array_length(list);
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(list, i), *path = NULL;
		if (!json_object_is_type(p, json_type_object) ||
		    !json_object_object_get_ex(p, "path", &path) ||
		    !json_object_is_type(path, json_type_string))
			continue;
		const char *rel = json_object_get_string(path);
		_cleanup_free_ char *full =
		    rel[0] == '/' ? strdup(rel) : fs_path_join(base_dir, rel);
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		int r = fs_read_file(full, PATCH_FILE_MAX, &text, &len, err);
		if (r < 0)
			return r;
		_cleanup_free_ char *copy = strdup(rel);
		json_object *inl = json_object_new_object();
		json_object_object_add(inl, "name", json_object_new_string(basename(copy)));
		json_object_object_add(inl, "content", json_object_new_string_len(text, (int)len));
		json_object_array_put_idx(list, i, inl);
	}
	return 0;
}

static int inline_local_patches(json_object *spec, const char *job_path, struct sl_error *err)
{
	_cleanup_free_ char *copy = strdup(job_path);
	const char *base = dirname(copy);
	json_object *v = NULL, *kernels = NULL;
	int r;
	if (json_object_object_get_ex(spec, "patches", &v) && (r = inline_list(v, base, err)) < 0)
		return r;
	json_object *b = NULL;
	if (json_object_object_get_ex(spec, "base", &b) &&
	    json_object_is_type(b, json_type_object) &&
	    json_object_object_get_ex(b, "patches", &v) && (r = inline_list(v, base, err)) < 0)
		return r;
	if (json_object_object_get_ex(spec, "kernels", &kernels) &&
	    json_object_is_type(kernels, json_type_object)) {
		json_object_object_foreach(kernels, name, k)
		{
			(void)name;
			if (json_object_is_type(k, json_type_object) &&
			    json_object_object_get_ex(k, "patches", &v) &&
			    (r = inline_list(v, base, err)) < 0)
				return r;
		}
	}
	return 0;
}

static const char *jstr(json_object *o, const char *k)
{
	json_object *v = NULL;
	if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* Prints the server's error body, or the status. */
static void print_http_error(const char *what, const struct httpclient_response *r)
{
	_cleanup_json_ json_object *o = NULL;
	json_object *e = NULL;
	if (r->body)
		(void)json_parse_strict(r->body, r->len, NULL, "error body", &o, NULL);
	if (o && json_object_object_get_ex(o, "error", &e)) {
		const char *path = jstr(e, "path");
		fprintf(stderr, "schedlab submit: %s: %s%s%s%s (HTTP %ld)\n", what,
			jstr(e, "message") ? jstr(e, "message") : "error", path ? " [at " : "",
			path ? path : "", path ? "]" : "", r->status);
	} else
		fprintf(stderr, "schedlab submit: %s: HTTP %ld.\n", what, r->status);
}

struct follow {
	int64_t last_id;
	char status[16];
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
	if (strcmp(type, "status") == 0) {
		snprintf(fl->status, sizeof(fl->status), "%s",
			 jstr(d, "status") ? jstr(d, "status") : "");
		fprintf(stderr, "%s status: %s%s%s\n", ts, fl->status,
			jstr(d, "verdict") ? ", verdict " : "",
			jstr(d, "verdict") ? jstr(d, "verdict") : "");
	} else if (strcmp(type, "progress") == 0) {
		json_object *pct = NULL, *ri = NULL, *rt = NULL;
		json_object_object_get_ex(d, "percent", &pct);
		json_object_object_get_ex(d, "run_index", &ri);
		json_object_object_get_ex(d, "run_total", &rt);
		fprintf(stderr, "%s [%s] ", ts, jstr(d, "phase") ? jstr(d, "phase") : "?");
		if (pct && json_object_get_double(pct) >= 0)
			fprintf(stderr, "%3.0f%% ", json_object_get_double(pct));
		if (rt && json_object_get_int(rt) > 0)
			fprintf(stderr, "run %d/%d ", json_object_get_int(ri),
				json_object_get_int(rt));
		fprintf(stderr, "%s\n", jstr(d, "message") ? jstr(d, "message") : "");
	} else if (strcmp(type, "run") == 0)
		fprintf(stderr, "%s run %s: %s\n", ts,
			jstr(d, "run_key") ? jstr(d, "run_key") : "?",
			jstr(d, "status") ? jstr(d, "status") : "?");
	return 0;
}

/* Follows the job until it is final; fills *ret_job (new reference). */
static int follow_job(struct httpclient *c, const char *id, json_object **ret_job,
		      struct sl_error *err)
{
	char path[96];
	struct follow fl = {0};
	int failures = 0;
	for (;;) {
		snprintf(path, sizeof(path), "/v1/jobs/%s/events", id);
		long st = 0;
		struct sl_error e2 = {0};
		int r = httpclient_events(c, path, fl.last_id, on_event, &fl, &st, &e2);
		snprintf(path, sizeof(path), "/v1/jobs/%s", id);
		struct httpclient_response resp = {0};
		int g = httpclient_request(c, "GET", path, NULL, NULL, 0, &resp, &e2);
		if (g == 0 && resp.status == 200) {
			json_object *job = NULL;
			(void)json_parse_strict(resp.body, resp.len, NULL, "job status", &job,
						NULL);
			httpclient_response_clear(&resp);
			if (job && store_status_is_final(jstr(job, "status"))) {
				*ret_job = job;
				return 0;
			}
			json_object_put(job);
			if (r == 0 && st == 200)
				failures = 0;
		} else if (g == 0 && resp.status != 200 && resp.status < 500) {
			print_http_error("cannot read the job", &resp);
			httpclient_response_clear(&resp);
			return error_set(err, ERR_INFRA, EIO, "The service answered HTTP %ld.",
					 resp.status);
		} else
			httpclient_response_clear(&resp);
		if (++failures > RECONNECT_TRIES)
			return error_set(err, ERR_INFRA, EIO,
					 "Lost the service for %d attempts: %s", RECONNECT_TRIES,
					 e2.message[0] ? e2.message : "no answer.");
		/* The service may be restarting: it resumes the job. */
		struct timespec ts = {2, 0};
		nanosleep(&ts, NULL);
	}
}

static int fetch_result(struct httpclient *c, const char *id, char **ret_text, struct sl_error *err)
{
	char path[96];
	snprintf(path, sizeof(path), "/v1/jobs/%s/result", id);
	struct httpclient_response resp = {0};
	int r = httpclient_request(c, "GET", path, NULL, NULL, 0, &resp, err);
	if (r < 0)
		return r;
	if (resp.status != 200) {
		print_http_error("cannot fetch the result", &resp);
		httpclient_response_clear(&resp);
		return error_set(err, ERR_INFRA, EIO, "The result could not be fetched.");
	}
	*ret_text = TAKE_PTR(resp.body);
	httpclient_response_clear(&resp);
	return 0;
}

int cli_submit(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"server", required_argument, NULL, 's'}, {"token", required_argument, NULL, 't'},
	    {"wait", no_argument, NULL, 'w'},	      {"gate", no_argument, NULL, 'g'},
	    {"output", required_argument, NULL, 'o'}, {"junit", required_argument, NULL, 'j'},
	    {"patch", required_argument, NULL, 'p'},  {"priority", required_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},	      {0},
	};
	const char *server = NULL, *token = getenv("SCHEDLAB_TOKEN"), *out = NULL, *junit = NULL;
	const char *priority = NULL;
	char *patches[MAX_PATCH_ARGS];
	size_t n_patches = 0;
	bool wait = false, gate = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:t:wgo:j:p:P:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			server = optarg;
			break;
		case 't':
			token = optarg;
			break;
		case 'w':
			wait = true;
			break;
		case 'g':
			gate = wait = true;
			break;
		case 'o':
			out = optarg;
			wait = true;
			break;
		case 'j':
			junit = optarg;
			wait = true;
			break;
		case 'p':
			if (n_patches >= MAX_PATCH_ARGS) {
				fprintf(stderr, "schedlab submit: more than %d --patch files.\n",
					MAX_PATCH_ARGS);
				return EXIT_ERROR;
			}
			patches[n_patches++] = optarg;
			break;
		case 'P': {
			long n = 0;
			if (parse_int(optarg, -100, 100, &n) < 0) {
				fprintf(stderr,
					"schedlab submit: --priority '%s' is not -100..100.\n",
					optarg);
				return EXIT_ERROR;
			}
			priority = optarg;
			break;
		}
		case 'h':
			usage(stdout);
			return EXIT_PASS;
		default:
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (optind != argc - 1 || !server) {
		usage(stderr);
		return EXIT_ERROR;
	}
	const char *job_path = argv[optind];
	struct sl_error err = {0};
	_cleanup_free_ char *result_text = NULL, *url_path = NULL;
	_cleanup_json_ json_object *spec = NULL, *accepted = NULL, *job = NULL, *result = NULL;
	struct httpclient *client = NULL;
	struct httpclient_response resp = {0};
	int ret = EXIT_ERROR;
	if (json_read_file_strict(job_path, JOB_FILE_MAX, "job file", &spec, &err) < 0)
		goto fail;
	if (!json_object_is_type(spec, json_type_object)) {
		error_set(&err, ERR_INVALID, EINVAL, "Job file '%s' is not a JSON object.",
			  job_path);
		goto fail;
	}
	if (inline_local_patches(spec, job_path, &err) < 0)
		goto fail;
	if (httpclient_new(server, token, &client, &err) < 0)
		goto fail;
	if (asprintf(&url_path, "/v1/jobs%s%s", priority ? "?priority=" : "",
		     priority ? priority : "") < 0)
		goto fail;
	const char *body = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN);
	if ((n_patches ? httpclient_post_multipart(client, url_path, body, patches, n_patches,
						   &resp, &err)
		       : httpclient_request(client, "POST", url_path, "application/json", body,
					    strlen(body), &resp, &err)) < 0)
		goto fail;
	if (resp.status != 202) {
		print_http_error("the job was not accepted", &resp);
		goto out;
	}
	if (json_parse_strict(resp.body, resp.len, NULL, "service's answer", &accepted, &err) < 0)
		goto fail;
	const char *id = jstr(accepted, "id");
	if (!id || !store_id_valid(id)) {
		error_set(&err, ERR_INFRA, EIO, "The service's answer has no valid job id.");
		goto fail;
	}
	printf("%s\n", id);
	fflush(stdout);
	fprintf(stderr, "Submitted job %s to %s.\n", id, server);
	if (!wait) {
		ret = EXIT_PASS;
		goto out;
	}
	if (follow_job(client, id, &job, &err) < 0)
		goto fail;
	const char *status = jstr(job, "status");
	if (strcmp(status, "done") != 0) {
		json_object *e = NULL;
		json_object_object_get_ex(job, "error", &e);
		fprintf(stderr, "schedlab submit: job %s ended %s%s%s\n", id, status,
			e ? ": " : ".", e ? (jstr(e, "message") ? jstr(e, "message") : "") : "");
		goto out;
	}
	if (fetch_result(client, id, &result_text, &err) < 0)
		goto fail;
	if (out && fs_write_file_atomic(out, result_text, strlen(result_text), &err) < 0)
		goto fail;
	char what[64];
	snprintf(what, sizeof(what), "result of job %s", id);
	if (json_parse_strict(result_text, strlen(result_text), NULL, what, &result, &err) < 0)
		goto fail;
	if (junit) {
		_cleanup_free_ char *xml = NULL;
		if (junit_from_result(result, &xml) < 0) {
			error_set(&err, ERR_INTERNAL, EIO, "Cannot render JUnit XML.");
			goto fail;
		}
		if (fs_write_file_atomic(junit, xml, strlen(xml), &err) < 0)
			goto fail;
	}
	const char *verdict = jstr(result, "verdict") ? jstr(result, "verdict") : "inconclusive";
	fprintf(stderr, "Job %s done: verdict %s.\n", id, verdict);
	if (!gate)
		ret = EXIT_PASS;
	else if (strcmp(verdict, "pass") == 0)
		ret = EXIT_PASS;
	else if (strcmp(verdict, "fail") == 0)
		ret = EXIT_FAIL;
	else
		ret = EXIT_INCONCLUSIVE;
	goto out;
fail:
	fprintf(stderr, "schedlab submit: %s\n", err.message[0] ? err.message : "Out of memory.");
	ret = EXIT_ERROR;
out:
	httpclient_response_clear(&resp);
	httpclient_free(client);
	return ret;
}
