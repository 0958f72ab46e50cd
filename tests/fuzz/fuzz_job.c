/* libFuzzer target: what POST /v1/jobs does with a body. The bytes go through
 * the service's own body parser (http_parse_json); a value goes through
 * job_expand_json() as an untrusted service
 * job, and every variant of an accepted job through plan_build(). Checks:
 * a rejected job carries a message; an accepted one expands again to the
 * same document (the stored "spec as run" is itself a valid job), builds a
 * typed job (job_from_expanded), and every variant yields a plan with a
 * positive deadline. Run with
 * SCHEDLAB_DATA_DIR at the repository, where results-schema/ lives. */
#include <assert.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "server/http.h"
#include "job/job.h"
#include "run/run_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_plans(const struct job *job)
{
	for (size_t i = 0; i < job->n_variants; i++) {
		json_object *plan = NULL;
		struct sl_error err = {0};
		if (plan_build(job, job->variants[i].name, "fuzz-run", &plan, &err) < 0) {
			assert(err.message[0] != '\0');
			continue;
		}
		assert(plan_deadline_s(plan, true) > 0);
		assert(plan_deadline_s(plan, false) > 0);
		json_object_put(plan);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256 * 1024)
		return 0;
	struct sl_error err = {0};
	json_object *spec =
	    http_parse_json((const char *)data, size, "request body", HTTP_JSON_MAX_VALUES, &err);
	if (!spec) {
		assert(err.message[0] != '\0');
		return 0;
	}

	json_object *expanded = NULL;
	if (job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &expanded, &err) < 0) {
		assert(err.message[0] != '\0');
		assert(!expanded);
	} else {
		assert(json_object_is_type(expanded, json_type_object));
		json_object *again = NULL;
		struct sl_error err2 = {0};
		int r = job_expand_json(expanded, JOB_ORIGIN_SERVICE, NULL, NULL, &again, &err2);
		if (r < 0)
			fprintf(stderr, "re-expansion failed: %s: %s\n", err2.path, err2.message);
		assert(r == 0);
		assert(json_object_equal(expanded, again));
		/* The typed job builds from every expanded spec. */
		struct job *job = NULL;
		r = job_from_expanded(expanded, &job, &err2);
		if (r < 0)
			fprintf(stderr, "typed job failed: %s: %s\n", err2.path, err2.message);
		assert(r == 0 && job->n_variants >= 2 && job->baseline);
		check_plans(job);
		job_free(job);
		json_object_put(again);
		json_object_put(expanded);
	}
	json_object_put(spec);
	return 0;
}
