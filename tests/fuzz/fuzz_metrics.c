/* libFuzzer target: the workload output parsers (service/metrics/). The
 * first byte picks the tool (modulo 10: rt-migrate-test, cyclictest, own
 * tools, hackbench, pi_stress, pip_stress, cyclicdeadline, stress-ng,
 * perf-bench-sched, and 9: two /proc/schedstat snapshots); the
 * rest is split at the first NUL into the tool's stdout and its JSON (or
 * stress-ng's YAML) file. A parser either
 * fails with ERR_INVALID and a message, or returns metrics whose names are
 * valid and whose values are finite numbers. */
#include <assert.h>
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	int tool = data[0] % 10;
	long maxerr = 100 + (data[0] >> 2) * 1000;
	data++, size--;
	/* stdout: bytes up to the first NUL; the JSON file: the rest, as a C string. */
	const uint8_t *nul = memchr(data, 0, size);
	size_t out_len = nul ? (size_t)(nul - data) : size;
	char *out = malloc(out_len + 1);
	char *json = NULL;
	if (!out)
		return 0;
	memcpy(out, data, out_len);
	out[out_len] = '\0';
	if (nul) {
		size_t jl = size - out_len - 1;
		json = malloc(jl + 1);
		if (!json) {
			free(out);
			return 0;
		}
		memcpy(json, nul + 1, jl);
		json[jl] = '\0';
	}

	json_object *metrics = NULL, *details = NULL;
	struct sl_error err = {0};
	int r;
	if (tool == 0)
		r = metrics_rtmigrate(out, out_len, json, maxerr, &metrics, &details, &err);
	else if (tool == 1)
		r = metrics_cyclictest(out, out_len, json, &metrics, &details, &err);
	else if (tool == 2)
		r = metrics_own_tool(out, out_len, &metrics, &details, &err);
	else if (tool == 3)
		r = metrics_hackbench(out, out_len, &metrics, &details, &err);
	else if (tool == 4)
		r = metrics_pi_stress(out, out_len, json, &metrics, &details, &err);
	else if (tool == 5)
		r = metrics_pip_stress(out, out_len, &metrics, &details, &err);
	else if (tool == 6)
		r = metrics_cyclicdeadline(json, &metrics, &details, &err);
	else if (tool == 7)
		r = metrics_stress_ng(json, &metrics, &details, &err);
	else if (tool == 8)
		r = metrics_perf_bench_sched(out, out_len, &metrics, &details, &err);
	else {
		/* the snapshot before (stdout) and after (the file) */
		metrics = json_object_new_object();
		r = metrics_schedstat(out, out_len, json ? json : "", json ? strlen(json) : 0,
				      metrics, &err);
		if (r < 0) {
			assert(json_object_object_length(metrics) == 0);
			json_object_put(metrics);
			metrics = NULL;
		}
	}

	if (r < 0) {
		assert(!metrics && !details);
		assert(err.message[0] != '\0');
	} else {
		assert(metrics && json_object_is_type(metrics, json_type_object));
		assert(json_object_object_length(metrics) <= METRICS_MAX_COUNT);
		json_object_object_foreach(metrics, name, val)
		{
			assert(metrics_name_ok(name));
			assert(json_object_is_type(val, json_type_int) ||
			       json_object_is_type(val, json_type_double));
			assert(isfinite(json_object_get_double(val)));
		}
	}
	json_object_put(metrics);
	json_object_put(details);
	free(out);
	free(json);
	return 0;
}
