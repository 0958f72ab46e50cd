/* `schedlab report RESULT.json -o report.html` and
 * `schedlab trend --state DIR --since 30d -o trend.html`. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "report/report.h"
#include "job/schema_files.h"
#include "report/trend.h"
#include "server/store_trend.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/parse.h"

#define RESULT_MAX_BYTES (64u << 20)

static int write_output(const char *path, const char *html, struct sl_error *err)
{
	if (!path || strcmp(path, "-") == 0) {
		size_t len = strlen(html);
		if (fwrite(html, 1, len, stdout) != len || fflush(stdout) != 0)
			return error_set(err, ERR_INTERNAL, EIO,
					 "Writing the report to stdout failed.");
		return 0;
	}
	return fs_write_file_atomic(path, html, strlen(html), err);
}

static void report_usage(FILE *f)
{
	fprintf(f, "Usage: schedlab report RESULT.json [-o REPORT.html]\n\n"
		   "Renders a result as one self-contained HTML page (inline SVG and CSS, no\n"
		   "script, nothing fetched). Without -o, or with -o -, writes to stdout.\n");
}

int cli_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *out = NULL;
	_cleanup_free_ char *html = NULL;
	_cleanup_json_ json_object *result = NULL;
	struct sl_error err = {0};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			report_usage(stdout);
			return 0;
		default:
			report_usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (optind != argc - 1) {
		report_usage(stderr);
		return EXIT_ERROR;
	}
	if (json_read_file_strict(argv[optind], RESULT_MAX_BYTES, "result file", &result, &err) <
	    0) {
		fprintf(stderr, "schedlab report: %s\n", err.message);
		return EXIT_ERROR;
	}
	/* A result that breaks the schema only where the report does not look
	 * (an unknown member, a format) is worth a warning, not a refusal;
	 * report_html() refuses one its typed model cannot read, naming the
	 * field. */
	if (schema_validate("result", result, &err) < 0)
		fprintf(stderr,
			"schedlab report: warning: '%s' does not match result.schema.json: %s "
			"Rendering it anyway.\n",
			argv[optind], err.message);
	memset(&err, 0, sizeof(err));
	if (report_html(result, &html, &err) < 0 || write_output(out, html, &err) < 0) {
		fprintf(stderr, "schedlab report: %s\n", err.message);
		return EXIT_ERROR;
	}
	if (out && strcmp(out, "-") != 0)
		fprintf(stderr, "schedlab report: wrote '%s'.\n", out);
	return 0;
}

static void trend_usage(FILE *f)
{
	fprintf(f, "Usage: schedlab trend --state DIR [--since 30d] [-o TREND.html]\n\n"
		   "Renders the trend of every job name and metric from the service's store\n"
		   "(DIR/schedlab.db, read-only) over the window (Nd, Nh, Nm or Ns; default 30d).\n"
		   "Without -o, or with -o -, writes to stdout.\n");
}

int cli_trend(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"state", required_argument, NULL, 's'},
	    {"since", required_argument, NULL, 'S'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *state = NULL, *out = NULL, *since = "30d";
	_cleanup_free_ char *html = NULL;
	struct sl_error err = {0};
	long seconds;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			state = optarg;
			break;
		case 'S':
			since = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			trend_usage(stdout);
			return 0;
		default:
			trend_usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (!state || optind != argc) {
		trend_usage(stderr);
		return EXIT_ERROR;
	}
	if (parse_duration(since, &seconds) < 0) {
		fprintf(stderr,
			"schedlab trend: the window '%s' is not a duration such as '30d', '12h', "
			"'90m' or '3600s' of at most ten years.\n",
			since);
		return EXIT_ERROR;
	}
	if (store_trend_html(state, seconds, &html, &err) < 0 ||
	    write_output(out, html, &err) < 0) {
		fprintf(stderr, "schedlab trend: %s\n", err.message);
		return EXIT_ERROR;
	}
	if (out && strcmp(out, "-") != 0)
		fprintf(stderr, "schedlab trend: wrote '%s'.\n", out);
	return 0;
}
