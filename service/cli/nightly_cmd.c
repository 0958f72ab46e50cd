/* schedlab nightly: what a service schedule does for one slot, once, from
 * the command line, for users who keep their own cron: each job file is
 * submitted to the service under its series name (the job's name: the
 * trend's series). docs/service.md "Schedules". */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/connection.h"
#include "cli/httpclient.h"
#include "job/job.h"
#include "util/json.h"
#include "util/parse.h"

#define NIGHTLY_JOB_MAX_BYTES (8 * 1024 * 1024)
#define SERIES_MAX	      JOB_NAME_MAX

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: schedlab nightly [--server URL] [--token TOKEN] [--cacert FILE]\n"
		"                        [--connect-timeout S] [--stall-timeout S]\n"
		"                        [--series NAME] JOB.json...\n\n"
		"Submits each job once to a schedlab service, as one slot of a service\n"
		"schedule would (docs/service.md, Schedules): for users who run their own\n"
		"cron, e.g.  30 2 * * *  schedlab nightly --server URL nightly.json\n\n"
		"Each job is named after its series, which the trend page groups nights by:\n"
		"--series NAME (one job file only), else the job's own \"name\", else the\n"
		"file's name without .json. It does not wait for the jobs; follow them with\n"
		"`schedlab submit wait ID` or on GET /v1/trend.\n\n"
		"%s"
		"  --series NAME          the series (1-64 of letters, digits, '.', '_', '-')\n\n"
		"The token needs the submit role.\n"
		"Prints one line per job on stdout: FILE SERIES JOB_ID (JOB_ID '-' when the\n"
		"service refused it; why goes to stderr).\n"
		"Exit: 0 every job was queued; 1 the service refused some job (the others\n"
		"were still submitted); 2 usage, an unreadable job file, or no service.\n",
		cli_conn_help);
}

/* The series of a job: --series, the job's name, or the file's stem. */
static int series_of(const char *file, json_object *job, const char *forced,
		     char ret[SERIES_MAX + 1], struct sl_error *err)
{
	json_object *v = NULL;
	int len; /* a longer name is refused below, never cut to a valid one */
	if (forced)
		len = snprintf(ret, SERIES_MAX + 1, "%s", forced);
	else if (json_object_object_get_ex(job, "name", &v) &&
		 json_object_is_type(v, json_type_string))
		len = snprintf(ret, SERIES_MAX + 1, "%s", json_object_get_string(v));
	else {
		_cleanup_free_ char *copy = strdup(file);
		if (!copy)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		const char *b = basename(copy);
		size_t n = strlen(b);
		if (n > 5 && strcmp(b + n - 5, ".json") == 0)
			n -= 5;
		len = snprintf(ret, SERIES_MAX + 1, "%.*s", (int)n, b);
	}
	if (len > SERIES_MAX || !job_name_valid(ret))
		return error_set(err, ERR_INVALID, EINVAL,
				 "The series '%s' of '%s' is not 1-%d of letters, digits, '.', "
				 "'_' and '-'; give --series NAME.",
				 ret, file, SERIES_MAX);
	return 0;
}

/* Submits one job; 0 queued (id in ret_id), 1 refused, 2 transport. */
static int submit_one(struct httpclient *c, const char *file, const char *forced)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL;
	char series[SERIES_MAX + 1];
	if (json_read_file_strict(file, NIGHTLY_JOB_MAX_BYTES, "job file", &job, &err) < 0 ||
	    (!json_object_is_type(job, json_type_object) &&
	     error_set(&err, ERR_INVALID, EINVAL, "The job file '%s' is not a JSON object.", file) <
		 0) ||
	    series_of(file, job, forced, series, &err) < 0) {
		fprintf(stderr, "schedlab nightly: %s\n", err.message);
		return EXIT_ERROR;
	}
	json_object_object_add(job, "name", json_object_new_string(series));
	const char *text = json_object_to_json_string_ext(job, JSON_C_TO_STRING_PLAIN);
	struct httpclient_response resp = {0};
	if (httpclient_request(c, "POST", "/v1/jobs", "application/json", text, strlen(text), &resp,
			       &err) < 0) {
		fprintf(stderr, "schedlab nightly: %s: %s\n", file, err.message);
		printf("%s %s -\n", file, series);
		return EXIT_ERROR;
	}
	int ret = EXIT_PASS;
	_cleanup_json_ json_object *o = NULL;
	struct json_limits lim = {.max_bytes = resp.len + 1};
	(void)json_parse_strict(resp.body ? resp.body : "", resp.len, &lim, "answer", &o, NULL);
	json_object *id = NULL, *e = NULL, *msg = NULL, *path = NULL;
	if (resp.status == 202 && o && json_object_object_get_ex(o, "id", &id) &&
	    json_object_is_type(id, json_type_string)) {
		printf("%s %s %s\n", file, series, json_object_get_string(id));
	} else {
		if (o && json_object_object_get_ex(o, "error", &e)) {
			json_object_object_get_ex(e, "message", &msg);
			json_object_object_get_ex(e, "path", &path);
		}
		fprintf(stderr, "schedlab nightly: %s: the service refused it: %s%s%s (HTTP %ld)\n",
			file, msg ? json_object_get_string(msg) : "no error document",
			path ? " at " : "", path ? json_object_get_string(path) : "", resp.status);
		printf("%s %s -\n", file, series);
		ret = resp.status >= 500 || resp.status == 401 || resp.status == 403 ? EXIT_ERROR
										     : EXIT_FAIL;
	}
	httpclient_response_clear(&resp);
	return ret;
}

int cli_nightly(int argc, char **argv)
{
	static const struct option opts[] = {
	    CLI_CONN_OPTIONS,
	    {"series", required_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct cli_conn conn;
	cli_conn_defaults(&conn);
	const char *series = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:t:n:h", opts, NULL)) != -1) {
		int taken = cli_conn_option(&conn, c, optarg, "schedlab nightly");
		if (taken < 0)
			return EXIT_ERROR;
		if (taken)
			continue;
		switch (c) {
		case 'n':
			series = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_PASS;
		default:
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (optind >= argc || (series && argc - optind != 1)) {
		if (series && argc - optind > 1)
			fprintf(stderr,
				"schedlab nightly: --series names one job file's series.\n");
		usage(stderr);
		return EXIT_ERROR;
	}
	struct sl_error err = {0};
	struct httpclient *client = NULL;
	if (cli_conn_open(&conn, &client, &err) < 0) {
		fprintf(stderr, "schedlab nightly: %s\n", err.message);
		return EXIT_ERROR;
	}
	int worst = EXIT_PASS;
	for (int i = optind; i < argc; i++) {
		int r = submit_one(client, argv[i], series);
		if (r > worst)
			worst = r;
	}
	httpclient_free(client);
	return worst;
}
