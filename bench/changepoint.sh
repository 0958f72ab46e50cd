#!/usr/bin/env bash
# How often the nightly change-point detector (service/compare/changepoint.c)
# cries wolf on a flat series, and how often it finds a step, on synthetic
# series of N nights around level 100 with normal noise of sd 3 (an A/A
# spread of a nightly median) and outlier nights of +25 % at a given rate.
# Steps sit at night N/2. A step is "placed" when found within one night.
# Usage: bench/changepoint.sh [K] [N]   (default: 1000 series per cell, 30 nights)
# Links build/libschedlab.a (make builds it); prints the host load too.
case "${1:-}" in -h | --help) sed -n '2,8p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
k=${1:-1000}
n=${2:-30}
for v in "$k" "$n"; do
	case "$v" in ''|*[!0-9]*) echo "changepoint.sh: K and N must be numbers" >&2; exit 2 ;; esac
done
make -C "$root" --no-print-directory build/libschedlab.a >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/bench.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "compare/changepoint.h"

static void series(gsl_rng *r, size_t n, size_t at, double step, double outliers, double *x)
{
	for (size_t i = 0; i < n; i++) {
		x[i] = (i >= at ? 100 * (1 + step) : 100) + gsl_ran_gaussian(r, 3.0);
		if (gsl_rng_uniform(r) < outliers)
			x[i] += 25;
	}
}

int main(int argc, char **argv)
{
	int k = atoi(argv[1]);
	size_t n = (size_t)atoi(argv[2]);
	const double outliers[] = {0, 1.0 / 30, 1.0 / 15};
	const double steps[] = {0, 0.05, 0.10, 0.20};
	double *x = malloc(n * sizeof(*x));
	struct changepoint cp[CHANGEPOINT_MAX_FOUND];
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);

	printf("%-10s %-6s %10s %10s %12s\n", "outliers", "step", "any found", "placed", "ms/series");
	for (size_t o = 0; o < 3; o++)
		for (size_t s = 0; s < 4; s++) {
			size_t found = 0, placed = 0, cnt;
			struct timespec a, b;
			gsl_rng_set(r, 1 + o * 10 + s);
			clock_gettime(CLOCK_MONOTONIC, &a);
			for (int i = 0; i < k; i++) {
				series(r, n, n / 2, steps[s], outliers[o], x);
				if (changepoint_detect(x, n, NULL, cp, CHANGEPOINT_MAX_FOUND, &cnt) < 0)
					return 2;
				found += cnt > 0;
				for (size_t j = 0; j < cnt; j++)
					if (cp[j].at + 1 >= n / 2 && cp[j].at <= n / 2 + 1) {
						placed++;
						break;
					}
			}
			clock_gettime(CLOCK_MONOTONIC, &b);
			double ms = ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6) / k;
			char rate[16] = "none";
			if (outliers[o])
				snprintf(rate, sizeof(rate), "1/%.0f", 1 / outliers[o]);
			printf("%-10s %4.0f %% %9.1f %% %9.1f %% %12.2f\n", rate, steps[s] * 100,
			       100.0 * found / k,
			       steps[s] ? 100.0 * placed / k : 0, ms);
		}
	gsl_rng_free(r);
	free(x);
	return 0;
}
CEOF
cc -O2 -I"$root/service" -o "$tmp/bench" "$tmp/bench.c" "$root/build/libschedlab.a" -lgsl -lgslcblas -lm
echo "changepoint: $k series of $n nights per cell; step 0 % = false alarms (any found)"
echo "host load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/bench" "$k" "$n"
