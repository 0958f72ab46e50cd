#!/usr/bin/env bash
# The cost of reading a job: job_expand_json() (schema validation, the
# shorthand, defaults) against jsonschema_check_schema() of the job schema,
# both in one process, side by side, so the ratio says what checking the
# schema on every job would add (schema_files.c checks it once, at load).
# Usage: bench/job-expand.sh [JOB.json] [N]   (default: the short seed job, 2000)
# Links build/libschedlab.a (make builds it); prints the host load too.
case "${1:-}" in -h | --help) sed -n '2,7p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
job=${1:-$root/examples/seed-reproduction-short.json}
n=${2:-2000}
case "$n" in ''|*[!0-9]*) echo "job-expand.sh: N must be a number" >&2; exit 2 ;; esac
make -C "$root" --no-print-directory build/libschedlab.a >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/bench.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "job/job.h"
#include "job/jsonschema.h"
#include "job/schema_files.h"
#include "util/json.h"
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
	struct sl_error err = {0};
	json_object *spec = NULL, *schema = NULL;
	int n = atoi(argv[2]);
	if (json_read_file_strict(argv[1], 1 << 20, "job", &spec, &err) < 0 ||
	    schema_load("job", &schema, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 2;
	}
	double a = now();
	for (int i = 0; i < n; i++) {
		json_object *e = NULL;
		if (job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &e, &err) < 0) {
			fprintf(stderr, "%s\n", err.message);
			return 2;
		}
		json_object_put(e);
	}
	double b = now();
	for (int i = 0; i < n; i++)
		jsonschema_check_schema(schema, &err);
	double c = now();
	printf("job_expand_json: %.1f us each; jsonschema_check_schema: %.1f us each "
	       "(%.0f %% of an expansion)\n",
	       (b - a) / n * 1e6, (c - b) / n * 1e6, 100 * (c - b) / (b - a));
	return 0;
}
CEOF
pkgs="json-c libvirt libmicrohttpd sqlite3 libarchive gsl libcrypto libcurl libpcre2-8"
# shellcheck disable=SC2046,SC2086
cc -std=gnu11 -D_GNU_SOURCE -O2 -I"$root/service" -I"$root/workloads" $(pkg-config --cflags $pkgs) \
	"$tmp/bench.c" "$root/build/libschedlab.a" -o "$tmp/bench" $(pkg-config --libs $pkgs) -lpthread -lm
echo "host load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
SCHEDLAB_DATA_DIR=$root "$tmp/bench" "$job" "$n"
