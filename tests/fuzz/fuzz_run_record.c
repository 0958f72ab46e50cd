/* libFuzzer target: a guest's frames, through the path the runner takes.
 * The input is a job pick (first byte) and then payloads separated by NUL
 * bytes, each starting with a byte that picks its kind (s summary, w
 * workload, h hello, anything else an unknown kind). Each becomes a frame
 * with a right checksum, fed as serial bytes to the guest stage
 * (guest_state_pop_frames: the strict parse, the per-run budget), then
 * guest_outcome_fill() and run_record_set_outcome() (run_record_fill()).
 * Checks, for any input: no abort, leak or UB; the run's status is one of
 * the result schema's; a run that is not ok has a reason; the record prints
 * as JSON that json_parse_strict() takes back (valid UTF-8, finite numbers);
 * its size is bounded whatever the guest sent; an ok run's workloads are all
 * ok with finite metrics. Run with SCHEDLAB_DATA_DIR at the repository. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/guest-internal.h"
#include "guest/guest.h"
#include "job/job.h"
#include "run/run_record.h"
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The workloads of the jobs the first byte picks from: every tool whose
 * output a frame can carry. */
static const char *const job_workloads[] = {
    "[{\"name\":\"w\",\"tool\":\"hackbench\",\"args\":[\"-p\"]}]",
    ("[{\"name\":\"w\",\"tool\":\"rt-migrate-test\",\"args\":[\"-p\",\"60\",\"-l\",\"5\",\"3\"]},"
     "{\"name\":\"c\",\"tool\":\"cyclictest\",\"args\":[\"-t1\",\"-l100\",\"-h100\"]}]"),
    "[{\"name\":\"s\",\"tool\":\"slice\"},{\"name\":\"p\",\"tool\":\"pi_stress\",\"args\":[\"--"
    "duration\",\"5\"]}]",
    "[{\"name\":\"n\",\"tool\":\"stress-ng\",\"args\":[\"--switch\",\"1\",\"--timeout\",\"5\",\"--"
    "metrics-brief\"]}]",
};
#define N_JOBS (sizeof(job_workloads) / sizeof(job_workloads[0]))
static struct job *jobs[N_JOBS];

static struct job *job_for(size_t i)
{
	if (jobs[i])
		return jobs[i];
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"name\":\"fuzz\",\"baseline\":\"a\",\"kernels\":{\"k\":{\"source\":"
		 "\"debian:linux-source-6.1\"}},\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":"
		 "{\"kernel\":\"k\"}},\"workloads\":%s}",
		 job_workloads[i]);
	json_object *spec = json_tokener_parse(text);
	struct sl_error err = {0};
	if (!spec || job_expand(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &jobs[i], &err) < 0) {
		fprintf(stderr, "fuzz_run_record: job %zu: %s (SCHEDLAB_DATA_DIR?)\n", i,
			err.message);
		abort();
	}
	json_object_put(spec);
	return jobs[i];
}

static void feed(struct guest_state *s, const char *kind, const char *payload, size_t len)
{
	char head[96];
	int n = snprintf(head, sizeof(head), "\nSLFRAME v1 %s %zu %08x\n", kind, len,
			 (unsigned)frame_crc32(payload, len));
	frame_parser_feed(s->fp, head, (size_t)n);
	frame_parser_feed(s->fp, payload, len);
	frame_parser_feed(s->fp, "\nSLEND\n", 7);
	guest_state_pop_frames(s);
}

static void check_record(json_object *run, size_t input_size)
{
	static const char *const statuses[] = {"ok",	  "hung",  "panic",
					       "crashed", "error", "sched_ext_failed"};
	const char *st = json_object_get_string(json_object_object_get(run, "status"));
	bool known = false;
	for (size_t i = 0; st && i < sizeof(statuses) / sizeof(statuses[0]); i++)
		known |= strcmp(st, statuses[i]) == 0;
	assert(known);
	json_object *reason = json_object_object_get(run, "reason");
	if (strcmp(st, "ok") != 0)
		assert(json_object_is_type(reason, json_type_string) &&
		       json_object_get_string_len(reason) > 0);
	size_t len = 0;
	const char *text = json_object_to_json_string_length(run, JSON_C_TO_STRING_PLAIN, &len);
	/* the record never grows with what the guest sent beyond its bounds:
	 * the console excerpt, 2 KiB of stderr per workload, 32 errors of
	 * 1 KiB, the tools' metrics and bounded details */
	assert(len <= 256 * 1024 + 2 * input_size);
	json_object *back = NULL;
	struct sl_error err = {0};
	if (json_parse_strict(text, len, NULL, "run record", &back, &err) < 0) {
		fprintf(stderr, "the record does not parse back: %s\n", err.message);
		abort();
	}
	json_object_put(back);
	if (strcmp(st, "ok") != 0)
		return;
	json_object *wls = json_object_object_get(run, "workloads");
	for (size_t i = 0; i < json_object_array_length(wls); i++) {
		json_object *w = json_object_array_get_idx(wls, i);
		assert(strcmp(json_object_get_string(json_object_object_get(w, "status")), "ok") ==
		       0);
		json_object_object_foreach(json_object_object_get(w, "metrics"), k, v)
		{
			(void)k;
			assert(isfinite(json_object_get_double(v)));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 256 * 1024)
		return 0;
	struct job *job = job_for(data[0] % N_JOBS);
	struct sl_error err = {0};
	struct guest_state *s = guest_state_new(NULL, &err);
	assert(s);
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);
		if (n > 0) {
			const char *kind = p[0] == 's'	 ? "summary"
					   : p[0] == 'w' ? "workload"
					   : p[0] == 'h' ? "hello"
							 : "extra";
			feed(s, kind, p + 1, n - 1);
		}
		p += n + 1;
	}
	struct guest_outcome *o = calloc(1, sizeof(*o));
	assert(o);
	pthread_mutex_lock(&s->lock);
	guest_outcome_fill(s, o, false, 60, false, 0);
	pthread_mutex_unlock(&s->lock);
	struct run_key key = {.repeat = 0};
	snprintf(key.variant, sizeof(key.variant), "a");
	json_object *run =
	    run_record_new(&key, "0123456789abcdef", "local", "2026-01-01T00:00:00Z");
	run_record_set_outcome(run, job, "tcg", o, 1.0);
	check_record(run, size);
	json_object_put(run);
	guest_outcome_free(o);
	guest_state_free(s);
	return 0;
}
