/* schedlab submit: the client of a schedlab service. Sends a job (a job file,
 * or patches and an mbox under the CI shorthand) and optionally follows it
 * to its verdict; `submit status|wait|cancel|result ID` act on a job that
 * exists. The server, token and CA file default to $SCHEDLAB_SERVER,
 * $SCHEDLAB_TOKEN and $SCHEDLAB_CACERT; the exit code of a wait is the
 * verdict's (docs/ci.md). */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/connection.h"
#include "cli/submit-internal.h"
#include "report/summary.h"
#include "server/store.h"
#include "util/fs.h"
#include "util/parse.h"
#include "util/json_get.h"

#define JOB_FILE_MAX   (8u * 1024 * 1024)
#define PATCH_FILE_MAX (4u * 1024 * 1024)
#define MAX_PATCH_ARGS 200
#define DEFAULT_BASE                                                                               \
	"{\"source\": \"debian:linux-source-6.1\", \"patches\": [{\"series\": \"linux-6.1\"}], "   \
	"\"config\": {\"builtin\": \"linux-6.1\"}}"

enum form { FORM_SUBMIT, FORM_STATUS, FORM_WAIT, FORM_CANCEL, FORM_RESULT };

/* Options, as bits, so that each form can say which it takes. */
enum {
	O_CONN = 1 << 0, /* --server --token --cacert --connect-timeout --stall-timeout */
	O_WAIT = 1 << 1,
	O_GATE = 1 << 2,
	O_OUTPUTS = 1 << 3, /* -o --junit --report */
	O_JOB = 1 << 4,	    /* --patch --mbox --suite --priority */
	O_RETRY = 1 << 5,
	O_JSON = 1 << 6,
};

static const struct form_info {
	const char *name;
	unsigned options;
} forms[] = {
    [FORM_SUBMIT] = {"submit", O_CONN | O_WAIT | O_GATE | O_OUTPUTS | O_JOB | O_RETRY},
    [FORM_STATUS] = {"status", O_CONN | O_JSON},
    [FORM_WAIT] = {"wait", O_CONN | O_OUTPUTS | O_RETRY},
    [FORM_CANCEL] = {"cancel", O_CONN | O_WAIT | O_RETRY},
    [FORM_RESULT] = {"result", O_CONN | O_GATE | O_OUTPUTS},
};

static const char retry_help[] =
    "  --retry-for S          while following a job, keep retrying a service that\n"
    "                         does not answer for S seconds (default 120), then exit 2\n";
static const char outputs_help[] = "  -o, --output FILE      write the result JSON here\n"
				   "  --junit FILE           write JUnit XML here\n"
				   "  --report FILE          write the HTML report here\n";
static const char exit_help[] =
    "Exit status: 0 pass, 1 fail, 3 inconclusive, 2 error (the job failed or was\n"
    "cancelled, the service could not be reached or stalled, bad arguments).\n";

static void usage(FILE *f, enum form form)
{
	switch (form) {
	case FORM_SUBMIT:
		fprintf(
		    f,
		    "Usage: schedlab submit [JOB.json] [--patch FILE...] [--mbox FILE]\n"
		    "                       [--suite S] [--wait | --gate] [-o RESULT.json]\n"
		    "                       [--junit FILE] [--report FILE] [--priority N]\n"
		    "       schedlab submit status|wait|cancel|result ID [OPTIONS]\n\n"
		    "Submits a job to a schedlab service and prints its id on stdout. Without\n"
		    "JOB.json, --patch and --mbox make a CI shorthand job: the default base\n"
		    "(debian:linux-source-6.1 with the built-in series and config) against\n"
		    "base + the patches, running --suite (default all).\n\n"
		    "%s%s"
		    "  --wait                 follow the job's progress until it ends; exit 0 "
		    "once\n"
		    "                         it is done, 2 if it failed or was cancelled\n"
		    "  --gate                 like --wait, then exit by the verdict\n"
		    "%s"
		    "                         (-o, --junit and --report imply --wait)\n"
		    "  --patch FILE           add a patch file (repeatable): appended to the CI\n"
		    "                         shorthand's patches\n"
		    "  --mbox FILE            an mbox or a series in one file (git format-patch\n"
		    "                         --stdout, b4): the service splits it into patches,\n"
		    "                         appended after the --patch files\n"
		    "  --suite S              rt, latency, fair, under-load or all: the workloads "
		    "and their\n"
		    "                         default gates (sets the job's \"suite\")\n"
		    "  --priority N           queue priority, -100..100 (higher first)\n\n"
		    "Ctrl-C (SIGINT) or SIGTERM while waiting cancels the job this command\n"
		    "submitted, then exits 2; a second Ctrl-C exits at once.\n"
		    "Patches given in the job by {\"path\": ...} are read here, relative to the\n"
		    "job file, and sent inline: the service accepts no local paths.\n\n"
		    "The other forms: 'schedlab submit status --help', and wait, cancel, result\n"
		    "(a job file named like a form is given as ./status).\n\n"
		    "%s",
		    cli_conn_help, retry_help, outputs_help, exit_help);
		break;
	case FORM_STATUS:
		fprintf(f,
			"Usage: schedlab submit status ID [--json] [OPTIONS]\n\n"
			"Prints job ID's status, progress and verdict (one line), or with --json\n"
			"the service's status document. Exit 0 when the service answered.\n\n"
			"%s"
			"  --json                 print the status document as JSON\n",
			cli_conn_help);
		break;
	case FORM_WAIT:
		fprintf(
		    f,
		    "Usage: schedlab submit wait ID [-o RESULT.json] [--junit FILE]\n"
		    "                               [--report FILE] [OPTIONS]\n\n"
		    "Follows job ID until it ends, prints the summary on stderr, writes the\n"
		    "outputs and exits by the verdict. Ctrl-C stops waiting and leaves the job\n"
		    "running (cancel it with 'schedlab submit cancel ID').\n\n"
		    "%s%s%s\n%s",
		    cli_conn_help, retry_help, outputs_help, exit_help);
		break;
	case FORM_CANCEL:
		fprintf(
		    f,
		    "Usage: schedlab submit cancel ID [--wait] [OPTIONS]\n\n"
		    "Cancels job ID: a queued job at once, a running one is stopped (its builds\n"
		    "and guests end). Exit 0 when the job is cancelled or stopping, 2 when it\n"
		    "had already ended or the service refused.\n\n"
		    "%s%s"
		    "  --wait                 wait until the job has stopped\n",
		    cli_conn_help, retry_help);
		break;
	case FORM_RESULT:
		fprintf(f,
			"Usage: schedlab submit result ID [-o RESULT.json] [--junit FILE]\n"
			"                                 [--report FILE] [--gate] [OPTIONS]\n\n"
			"Fetches the result of job ID, which must be done. Without -o, --junit or\n"
			"--report the result JSON goes to stdout; otherwise the summary goes to\n"
			"stderr. Exit 0, or with --gate by the verdict; 2 when the job has no "
			"result.\n\n"
			"%s%s"
			"  --gate                 exit by the verdict: 0 pass, 1 fail, 3 "
			"inconclusive\n",
			cli_conn_help, outputs_help);
		break;
	}
}

struct opts {
	struct cli_conn conn;
	long retry_for_s;
	bool wait, gate, json;
	struct submit_outputs out;
	char *patches[MAX_PATCH_ARGS];
	size_t n_patches;
	const char *mbox, *suite, *priority;
	unsigned given; /* O_* bits of the options on the command line */
};

/* Parses the options of every form; returns 0, 1 after --help, or -EINVAL. */
static int parse_opts(int argc, char **argv, enum form form, struct opts *o)
{
	enum {
		OPT_RETRY = 256,
		OPT_REPORT,
		OPT_MBOX,
		OPT_SUITE,
		OPT_JSON,
	};
	static const struct option table[] = {
	    CLI_CONN_OPTIONS,
	    {"retry-for", required_argument, NULL, OPT_RETRY},
	    {"wait", no_argument, NULL, 'w'},
	    {"gate", no_argument, NULL, 'g'},
	    {"output", required_argument, NULL, 'o'},
	    {"junit", required_argument, NULL, 'j'},
	    {"report", required_argument, NULL, OPT_REPORT},
	    {"patch", required_argument, NULL, 'p'},
	    {"mbox", required_argument, NULL, OPT_MBOX},
	    {"suite", required_argument, NULL, OPT_SUITE},
	    {"priority", required_argument, NULL, 'P'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:t:wgo:j:p:P:h", table, NULL)) != -1) {
		unsigned bit = 0;
		int taken = cli_conn_option(&o->conn, c, optarg, "schedlab submit");
		if (taken < 0)
			return -EINVAL;
		if (taken)
			c = 0; /* handled: only its bit is left to check */
		switch (c) {
		case 0:
			bit = O_CONN;
			break;
		case OPT_RETRY:
			if (cli_parse_seconds("schedlab submit", "--retry-for", optarg, 0,
					      &o->retry_for_s) < 0)
				return -EINVAL;
			bit = O_RETRY;
			break;
		case 'w':
			o->wait = true;
			bit = O_WAIT;
			break;
		case 'g':
			o->gate = o->wait = true;
			bit = O_GATE;
			break;
		case 'o':
			o->out.result = optarg;
			bit = O_OUTPUTS;
			break;
		case 'j':
			o->out.junit = optarg;
			bit = O_OUTPUTS;
			break;
		case OPT_REPORT:
			o->out.report = optarg;
			bit = O_OUTPUTS;
			break;
		case 'p':
			if (o->n_patches >= MAX_PATCH_ARGS) {
				fprintf(stderr, "schedlab submit: more than %d --patch files.\n",
					MAX_PATCH_ARGS);
				return -EINVAL;
			}
			o->patches[o->n_patches++] = optarg;
			bit = O_JOB;
			break;
		case OPT_MBOX:
			o->mbox = optarg;
			bit = O_JOB;
			break;
		case OPT_SUITE:
			if (strcmp(optarg, "rt") && strcmp(optarg, "latency") &&
			    strcmp(optarg, "fair") && strcmp(optarg, "under-load") &&
			    strcmp(optarg, "all")) {
				fprintf(stderr,
					"schedlab submit: --suite must be rt, latency, fair, "
					"under-load or all, "
					"not '%s'.\n",
					optarg);
				return -EINVAL;
			}
			o->suite = optarg;
			bit = O_JOB;
			break;
		case 'P': {
			long n = 0;
			if (parse_int(optarg, -100, 100, &n) < 0) {
				fprintf(stderr,
					"schedlab submit: --priority '%s' is not -100..100.\n",
					optarg);
				return -EINVAL;
			}
			o->priority = optarg;
			bit = O_JOB;
			break;
		}
		case OPT_JSON:
			o->json = true;
			bit = O_JSON;
			break;
		case 'h':
			usage(stdout, form);
			return 1;
		default:
			usage(stderr, form);
			return -EINVAL;
		}
		if (!(forms[form].options & bit)) {
			fprintf(stderr, "schedlab submit %s: option '%s' does not apply here.\n",
				forms[form].name, argv[optind - 1]);
			return -EINVAL;
		}
		o->given |= bit;
	}
	if (o->out.result || o->out.junit || o->out.report)
		o->wait = true;
	return 0;
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

/* A job name from a file name: the schema's [A-Za-z0-9][A-Za-z0-9._-]{0,63}. */
static void name_from_file(const char *path, char out[65])
{
	_cleanup_free_ char *copy = strdup(path);
	const char *b = copy ? basename(copy) : "submit";
	size_t n = 0;
	for (; *b && n < 64; b++) {
		char ch = *b;
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');
		if (n == 0 && !alnum)
			continue;
		out[n++] = alnum || ch == '.' || ch == '_' || ch == '-' ? ch : '-';
	}
	out[n] = '\0';
	if (!n)
		snprintf(out, 65, "submit");
}

/* The job to send: the job file with its local patches inlined, or the CI
 * shorthand over the default base; --suite sets "suite". */
static int build_spec(const char *job_path, const struct opts *o, json_object **ret,
		      struct sl_error *err)
{
	_cleanup_json_ json_object *spec = NULL;
	int r;
	if (job_path) {
		if ((r = json_read_file_strict(job_path, JOB_FILE_MAX, "job file", &spec, err)) < 0)
			return r;
		if (!json_object_is_type(spec, json_type_object))
			return error_set(err, ERR_INVALID, EINVAL,
					 "Job file '%s' is not a JSON object.", job_path);
		if ((r = inline_local_patches(spec, job_path, err)) < 0)
			return r;
	} else {
		char name[65];
		name_from_file(o->mbox ? o->mbox : o->patches[0], name);
		spec = json_object_new_object();
		json_object_object_add(spec, "name", json_object_new_string(name));
		json_object_object_add(spec, "base", json_tokener_parse(DEFAULT_BASE));
		json_object_object_add(spec, "patches", json_object_new_array());
		if (!o->suite)
			json_object_object_add(spec, "suite", json_object_new_string("all"));
	}
	if (o->suite)
		json_object_object_add(spec, "suite", json_object_new_string(o->suite));
	*ret = TAKE_PTR(spec);
	return 0;
}

static int check_readable(const char *what, const char *path, struct sl_error *err)
{
	if (access(path, R_OK) < 0)
		return error_set(err, ERR_INVALID, errno, "Cannot read %s '%s': %s.", what, path,
				 strerror(errno));
	return 0;
}

static int client_open(const struct opts *o, struct httpclient **ret, struct sl_error *err)
{
	int r = cli_conn_open(&o->conn, ret, err);
	if (r < 0)
		return r;
	httpclient_set_interrupt(*ret, &submit_interrupted);
	return 0;
}

/* Follows id to its end and returns the exit code: by the verdict when
 * gate, else 0 once done; 2 when the job failed or was cancelled, or on an
 * error. own: this command submitted the job, so an interrupt cancels it. */
static int wait_and_finish(struct httpclient *c, const char *id, const struct opts *o, bool gate,
			   bool own)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *job = NULL, *result = NULL;
	if (submit_follow(c, id, o->retry_for_s, &job, &err) < 0) {
		if (err.kind != ERR_CANCELLED) {
			fprintf(stderr, "schedlab submit: %s\n", err.message);
			return EXIT_ERROR;
		}
		if (!own) {
			fprintf(stderr,
				"schedlab submit: interrupted; job %s keeps running (cancel it "
				"with 'schedlab submit cancel %s').\n",
				id, id);
			return EXIT_ERROR;
		}
		fprintf(stderr, "schedlab submit: interrupted; cancelling job %s.\n", id);
		bool requested = false;
		struct sl_error e2 = {0};
		if (submit_cancel(c, id, &requested, &e2) < 0)
			fprintf(stderr, "schedlab submit: could not cancel job %s: %s\n", id,
				e2.message);
		else
			fprintf(stderr, "schedlab submit: job %s %s.\n", id,
				requested ? "is being cancelled (the service stops it)"
					  : "cancelled");
		return EXIT_ERROR;
	}
	const char *status = json_member_string(job, "status");
	if (!status || strcmp(status, "done") != 0) {
		submit_print_ending(id, job);
		return EXIT_ERROR;
	}
	int code = EXIT_ERROR;
	if (submit_fetch_result(c, id, &o->out, &result, &code, &err) < 0) {
		fprintf(stderr, "schedlab submit: %s\n", err.message);
		return EXIT_ERROR;
	}
	const char *verdict = json_member_string(result, "verdict");
	fprintf(stderr, "Job %s done: verdict %s.\n", id, verdict ? verdict : "(none)");
	return gate ? code : EXIT_PASS;
}

static int do_submit(const char *job_path, struct opts *o)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *spec = NULL, *accepted = NULL;
	_cleanup_free_ char *url_path = NULL;
	struct httpclient *client = NULL;
	struct httpclient_response resp = {0};
	int ret = EXIT_ERROR;
	if (!job_path && !o->n_patches && !o->mbox) {
		fprintf(stderr, "schedlab submit: give a job file, or --patch or --mbox.\n");
		usage(stderr, FORM_SUBMIT);
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < o->n_patches; i++)
		if (check_readable("patch", o->patches[i], &err) < 0)
			goto fail;
	if (o->mbox && check_readable("mbox", o->mbox, &err) < 0)
		goto fail;
	if (build_spec(job_path, o, &spec, &err) < 0 || client_open(o, &client, &err) < 0)
		goto fail;
	if (asprintf(&url_path, "/v1/jobs%s%s", o->priority ? "?priority=" : "",
		     o->priority ? o->priority : "") < 0)
		goto fail;
	const char *body = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN);
	if ((o->n_patches || o->mbox
		 ? httpclient_post_multipart(client, url_path, body, o->patches, o->n_patches,
					     o->mbox, &resp, &err)
		 : httpclient_request(client, "POST", url_path, "application/json", body,
				      strlen(body), &resp, &err)) < 0) {
		if (err.kind == ERR_CANCELLED)
			error_set(&err, ERR_CANCELLED, EINTR,
				  "Interrupted before the service answered; if it accepted the "
				  "job, 'schedlab submit status' shows it in GET /v1/jobs.");
		goto fail;
	}
	if (resp.status != 202) {
		submit_print_http_error("the job was not accepted", &resp);
		goto out;
	}
	if (json_parse_strict(resp.body, resp.len, NULL, "service's answer", &accepted, &err) < 0)
		goto fail;
	const char *id = json_member_string(accepted, "id");
	if (!id || !store_id_valid(id)) {
		error_set(&err, ERR_INFRA, EIO, "The service's answer has no valid job id.");
		goto fail;
	}
	printf("%s\n", id);
	fflush(stdout);
	fprintf(stderr, "Submitted job %s to %s.\n", id, o->conn.server);
	if (!o->wait) {
		ret = EXIT_PASS;
		goto out;
	}
	ret = wait_and_finish(client, id, o, o->gate, true);
	goto out;
fail:
	fprintf(stderr, "schedlab submit: %s\n", err.message[0] ? err.message : "Out of memory.");
	ret = EXIT_ERROR;
out:
	httpclient_response_clear(&resp);
	httpclient_free(client);
	return ret;
}

static void print_status_line(const char *id, json_object *job)
{
	const char *name = json_member_string(job, "name"),
		   *status = json_member_string(job, "status");
	const char *verdict = json_member_string(job, "verdict");
	printf("%s %s %s", id, name && name[0] ? name : "-", status ? status : "?");
	if (verdict)
		printf(" verdict=%s", verdict);
	json_object *p = NULL, *v = NULL;
	if (status && !store_status_is_final(status) && strcmp(status, "queued") != 0 &&
	    json_object_object_get_ex(job, "progress", &p) && p) {
		if (json_object_object_get_ex(p, "percent", &v) && json_object_get_double(v) >= 0)
			printf(" %.0f%%", json_object_get_double(v));
		json_object *ri = NULL, *rt = NULL;
		if (json_object_object_get_ex(p, "run_index", &ri) &&
		    json_object_object_get_ex(p, "run_total", &rt) && json_object_get_int(rt) > 0)
			printf(" run %d/%d", json_object_get_int(ri), json_object_get_int(rt));
		const char *msg = json_member_string(p, "message");
		if (msg && msg[0])
			printf(" %s", msg);
	}
	json_object *e = NULL;
	if (json_object_object_get_ex(job, "error", &e) && json_member_string(e, "message"))
		printf(" error: %s", json_member_string(e, "message"));
	printf("\n");
}

static int do_on_job(enum form form, const char *id, struct opts *o)
{
	struct sl_error err = {0};
	struct httpclient *client = NULL;
	struct httpclient_response resp = {0};
	_cleanup_json_ json_object *job = NULL, *result = NULL;
	int ret = EXIT_ERROR;
	if (!store_id_valid(id)) {
		fprintf(stderr, "schedlab submit %s: '%.64s' is not a job id (32 hex digits).\n",
			forms[form].name, id);
		return EXIT_ERROR;
	}
	if (client_open(o, &client, &err) < 0)
		goto fail;
	switch (form) {
	case FORM_STATUS: {
		char path[96];
		snprintf(path, sizeof(path), "/v1/jobs/%s", id);
		if (httpclient_request(client, "GET", path, NULL, NULL, 0, &resp, &err) < 0)
			goto fail;
		if (resp.status != 200) {
			submit_print_http_error("cannot read the job", &resp);
			goto out;
		}
		if (json_parse_strict(resp.body, resp.len, NULL, "job status", &job, &err) < 0)
			goto fail;
		if (o->json)
			printf("%s\n",
			       json_object_to_json_string_ext(
				   job, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		else
			print_status_line(id, job);
		ret = EXIT_PASS;
		break;
	}
	case FORM_WAIT:
		ret = wait_and_finish(client, id, o, true, false);
		break;
	case FORM_CANCEL: {
		bool requested = false;
		if (submit_cancel(client, id, &requested, &err) < 0)
			goto fail;
		fprintf(stderr, "Job %s %s.\n", id,
			requested ? "is being cancelled" : "is cancelled");
		if (requested && o->wait) {
			httpclient_set_interrupt(client, &submit_interrupted);
			if (submit_follow(client, id, o->retry_for_s, &job, &err) < 0)
				goto fail;
			fprintf(stderr, "Job %s ended %s.\n", id,
				json_member_string(job, "status"));
		}
		ret = EXIT_PASS;
		break;
	}
	case FORM_RESULT: {
		bool to_stdout = !o->out.result && !o->out.junit && !o->out.report;
		int code = EXIT_ERROR;
		char path[96];
		if (to_stdout) {
			snprintf(path, sizeof(path), "/v1/jobs/%s/result", id);
			if (httpclient_request(client, "GET", path, NULL, NULL, 0, &resp, &err) < 0)
				goto fail;
			if (resp.status != 200) {
				submit_print_http_error("cannot fetch the result", &resp);
				goto out;
			}
			if (json_parse_strict(resp.body, resp.len, NULL, "result", &result, &err) <
			    0)
				goto fail;
			fwrite(resp.body, 1, resp.len, stdout);
			if (resp.len && resp.body[resp.len - 1] != '\n')
				putchar('\n');
			code = summary_exit_code(result);
		} else if (submit_fetch_result(client, id, &o->out, &result, &code, &err) < 0)
			goto fail;
		ret = o->gate ? code : EXIT_PASS;
		break;
	}
	case FORM_SUBMIT:
		break;
	}
	goto out;
fail:
	fprintf(stderr, "schedlab submit %s: %s\n", forms[form].name,
		err.message[0] ? err.message : "Out of memory.");
	ret = EXIT_ERROR;
out:
	httpclient_response_clear(&resp);
	httpclient_free(client);
	return ret;
}

int cli_submit(int argc, char **argv)
{
	enum form form = FORM_SUBMIT;
	for (size_t i = FORM_STATUS; argc > 1 && i < ELEMENTSOF(forms); i++)
		if (strcmp(argv[1], forms[i].name) == 0) {
			form = (enum form)i;
			argc--;
			argv++;
			break;
		}
	struct opts o = {.retry_for_s = SUBMIT_RETRY_FOR_S};
	cli_conn_defaults(&o.conn);
	int r = parse_opts(argc, argv, form, &o);
	if (r != 0)
		return r > 0 ? EXIT_PASS : EXIT_ERROR;
	int positional = argc - optind;
	if (form == FORM_SUBMIT ? positional > 1 : positional != 1) {
		usage(stderr, form);
		return EXIT_ERROR;
	}
	submit_interrupted = 0;
	submit_signals_install();
	if (form == FORM_SUBMIT)
		return do_submit(positional ? argv[optind] : NULL, &o);
	return do_on_job(form, argv[optind], &o);
}
