/* Typed jobs for unit tests. See job_fixture.h. */
#include <stdio.h>

#include "helpers/job_fixture.h"

struct job *job_fixture(const char *text)
{
	_cleanup_json_ json_object *spec = json_tokener_parse(text);
	if (!spec) {
		fprintf(stderr, "job_fixture: not JSON: %s\n", text);
		return NULL;
	}
	struct job *job = NULL;
	struct sl_error err = {0};
	if (job_expand(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &job, &err) < 0) {
		fprintf(stderr, "job_fixture: %s: %s\n", err.path, err.message);
		return NULL;
	}
	return job;
}
