/* Typed jobs for unit tests: a job spec in JSON text, validated and expanded
 * as the service does (job_expand, JOB_ORIGIN_SERVICE) against the real
 * results-schema/job.schema.json. */
#pragma once

#include "job/job.h"

/* The typed job of text (owned by the caller, job_free), or NULL after
 * printing why to stderr. */
struct job *job_fixture(const char *text);

/* A minimal job's parts, for tests to build specs from. */
#define JOB_FIXTURE_KERNELS "{\"k\":{\"source\":\"debian:linux-source-6.1\"}}"
