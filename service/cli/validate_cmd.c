/* schedlab validate (--job|--result) FILE: checks a document against the
 * project's schema (and, for a job, the cross-references job_expand checks). */
#include <getopt.h>
#include <libgen.h>
#include <string.h>

#include "cli/cli.h"
#include "job/job.h"
#include "job/jsonschema.h"
#include "job/schema_files.h"
#include "util/json.h"

#define VALIDATE_MAX_BYTES (64 * 1024 * 1024)

static void validate_usage(FILE *f)
{
	fprintf(f, "Usage: schedlab validate (--job|--result) [--schema-only] FILE\n\n"
		   "Checks FILE against results-schema/job.schema.json or result.schema.json\n"
		   "and prints 'valid', or the first error with its JSON path.\n\n"
		   "  --job           FILE is a job spec; also checks what the schema cannot\n"
		   "                  (variants naming kernels, gates naming workloads, limits)\n"
		   "  --result        FILE is a result document\n"
		   "  --schema-only   only the schema, no further job checks\n"
		   "  -h, --help      this text\n\n"
		   "Exit status: 0 valid, 1 invalid, 2 usage or I/O error.\n");
}

int cli_validate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"job", no_argument, NULL, 'j'},
	    {"result", no_argument, NULL, 'r'},
	    {"schema-only", no_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	const char *kind = NULL;
	bool schema_only = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			kind = "job";
			break;
		case 'r':
			kind = "result";
			break;
		case 's':
			schema_only = true;
			break;
		case 'h':
			validate_usage(stdout);
			return 0;
		default:
			validate_usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (!kind || optind != argc - 1) {
		validate_usage(stderr);
		return EXIT_ERROR;
	}
	const char *file = argv[optind];

	struct sl_error err = {0};
	_cleanup_json_ json_object *doc = NULL, *schema = NULL, *expanded = NULL;
	if (json_read_file_strict(file, VALIDATE_MAX_BYTES, "file", &doc, &err) < 0) {
		fprintf(stderr, "schedlab validate: %s\n", err.message);
		return err.kind == ERR_INVALID || err.kind == ERR_TOO_LARGE ? EXIT_FAIL
									    : EXIT_ERROR;
	}
	if (schema_load(kind, &schema, &err) < 0) {
		fprintf(stderr, "schedlab validate: %s\n", err.message);
		return EXIT_ERROR;
	}
	int r = jsonschema_validate(schema, doc, &err);
	if (r == 0 && strcmp(kind, "job") == 0 && !schema_only) {
		_cleanup_free_ char *copy = strdup(file);
		r = job_expand_json(doc, JOB_ORIGIN_CLI, copy ? dirname(copy) : ".", NULL,
				    &expanded, &err);
	}
	if (r < 0) {
		printf("invalid: %s%s%s\n", err.message, *err.path ? " path: " : "", err.path);
		return err.kind == ERR_INVALID ? EXIT_FAIL : EXIT_ERROR;
	}
	printf("valid\n");
	return EXIT_PASS;
}
