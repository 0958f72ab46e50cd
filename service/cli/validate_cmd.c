/* schedlab validate (--job|--result|--schema SCHEMA) FILE: checks a document
 * against the project's schema (and, for a job, the cross-references
 * job_expand checks), or any JSON file against any JSON Schema with the same
 * validator (docs/json-schema.md says which keywords it implements). */
#include <getopt.h>
#include <libgen.h>
#include <string.h>

#include "cli/cli.h"
#include "compare/sequential.h"
#include "job/job.h"
#include "job/jsonschema.h"
#include "job/schema_files.h"
#include "util/json.h"

#define VALIDATE_MAX_BYTES (64 * 1024 * 1024)

static void validate_usage(FILE *f)
{
	fprintf(f, "Usage: schedlab validate (--job|--result) [--schema-only] FILE\n"
		   "       schedlab validate --schema SCHEMA FILE\n\n"
		   "Checks FILE against results-schema/job.schema.json or result.schema.json,\n"
		   "or against the JSON Schema in the file SCHEMA, and prints 'valid', or the\n"
		   "first error with its JSON path.\n\n"
		   "  --job           FILE is a job spec; also checks what the schema cannot\n"
		   "                  (variants naming kernels, gates naming workloads, limits)\n"
		   "  --result        FILE is a result document\n"
		   "  --schema-only   only the schema, no further job checks\n"
		   "  --schema SCHEMA validate FILE against the schema in SCHEMA (2020-12, the\n"
		   "                  keywords listed in docs/json-schema.md; other keywords\n"
		   "                  are ignored; a schema that is not usable, such as a\n"
		   "                  pattern that is not ECMA-262, is an error, exit 2)\n"
		   "  -h, --help      this text\n\n"
		   "Exit status: 0 valid, 1 invalid, 2 usage, schema or I/O error.\n");
}

int cli_validate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"job", no_argument, NULL, 'j'},	     {"result", no_argument, NULL, 'r'},
	    {"schema-only", no_argument, NULL, 's'}, {"schema", required_argument, NULL, 'S'},
	    {"help", no_argument, NULL, 'h'},	     {},
	};
	const char *kind = NULL, *schema_file = NULL;
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
		case 'S':
			schema_file = optarg;
			break;
		case 'h':
			validate_usage(stdout);
			return 0;
		default:
			validate_usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (!!kind == !!schema_file || (schema_file && schema_only) || optind != argc - 1) {
		validate_usage(stderr);
		return EXIT_ERROR;
	}
	const char *file = argv[optind];

	struct sl_error err = {0};
	_cleanup_json_ json_object *doc = NULL, *schema = NULL, *expanded = NULL;
	if (schema_file) {
		if (json_read_file_strict(schema_file, VALIDATE_MAX_BYTES, "schema file", &schema,
					  &err) < 0) {
			fprintf(stderr, "schedlab validate: %s\n", err.message);
			return EXIT_ERROR;
		}
		/* Before the data is read: an unusable schema (a pattern that is not
		 * ECMA-262, a $ref that does not resolve) is the schema's fault,
		 * whatever FILE holds. */
		if (jsonschema_check_schema(schema, &err) < 0) {
			fprintf(
			    stderr, "schedlab validate: the schema '%s' cannot be used: %s%s%s\n",
			    schema_file, err.message, *err.path ? " schema path: " : "", err.path);
			return EXIT_ERROR;
		}
	} else if (schema_load(kind, &schema, &err) < 0) {
		fprintf(stderr, "schedlab validate: %s\n", err.message);
		return EXIT_ERROR;
	}
	if (json_read_file_strict(file, VALIDATE_MAX_BYTES, "file", &doc, &err) < 0) {
		fprintf(stderr, "schedlab validate: %s\n", err.message);
		return err.kind == ERR_INVALID || err.kind == ERR_TOO_LARGE ? EXIT_FAIL
									    : EXIT_ERROR;
	}
	/* Checked above: at load for the project's own schemas. */
	int r = jsonschema_validate_checked(schema, doc, &err);
	if (r == 0 && kind && strcmp(kind, "job") == 0 && !schema_only) {
		_cleanup_free_ char *copy = strdup(file);
		r = job_expand_json(doc, JOB_ORIGIN_CLI, copy ? dirname(copy) : ".", NULL,
				    &expanded, &err);
	}
	if (r < 0) {
		printf("invalid: %s%s%s\n", err.message, *err.path ? " path: " : "", err.path);
		return err.kind == ERR_INVALID ? EXIT_FAIL : EXIT_ERROR;
	}
	printf("valid\n");
	/* Valid, but told before it runs when its repeats can never decide a
	 * gate (compare/sequential.h). */
	_cleanup_job_ struct job *job = NULL;
	char warn[400];
	if (expanded && job_from_expanded(expanded, &job, &err) == 0 &&
	    compare_repeat_warning(job, warn, sizeof(warn)))
		fprintf(stderr, "schedlab validate: warning: %s\n", warn);
	return EXIT_PASS;
}
