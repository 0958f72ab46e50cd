/* libFuzzer target: what POST /v1/jobs does with a body. The bytes are parsed
 * as strict JSON; an object goes through job_expand() as an untrusted service
 * job, and every variant of an accepted job through plan_build(). Checks:
 * a rejected job carries a message; an accepted one expands again to the
 * same document (the stored "spec as run" is itself a valid job), and every
 * variant yields a plan with a positive deadline. Run with
 * SCHEDLAB_DATA_DIR at the repository, where results-schema/ lives. */
#include <assert.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_plans(json_object *expanded)
{
	json_object *variants = NULL;
	assert(json_object_object_get_ex(expanded, "variants", &variants));
	json_object_object_foreach(variants, name, v)
	{
		(void)v;
		json_object *plan = NULL;
		struct sl_error err = {0};
		if (plan_build(expanded, name, "fuzz-run", &plan, &err) < 0) {
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
	json_tokener *tok = json_tokener_new_ex(64);
	if (!tok)
		return 0;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *spec = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	json_tokener_free(tok);
	if (!spec)
		return 0;

	json_object *expanded = NULL;
	struct sl_error err = {0};
	if (job_expand(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &expanded, &err) < 0) {
		assert(err.message[0] != '\0');
		assert(!expanded);
	} else {
		assert(json_object_is_type(expanded, json_type_object));
		json_object *again = NULL;
		struct sl_error err2 = {0};
		int r = job_expand(expanded, JOB_ORIGIN_SERVICE, NULL, NULL, &again, &err2);
		if (r < 0)
			fprintf(stderr, "re-expansion failed: %s: %s\n", err2.path, err2.message);
		assert(r == 0);
		assert(json_object_equal(expanded, again));
		check_plans(expanded);
		json_object_put(again);
		json_object_put(expanded);
	}
	json_object_put(spec);
	return 0;
}
