/* Per-patch attribution (`schedlab test --per-patch`, the
 * job field "per_patch": true): which patch of a series bought, or cost,
 * what. Every prefix of the series is measured against the same base
 * (run/prefix_step.h: the base's runs reused; the whole series' result is
 * the last prefix), and each patch's own effect is its prefix's runs
 * compared with the prefix before it (the first patch's with the base) by
 * the job's own comparison rules (compare/compare.h: gates, thresholds,
 * the noise policy, the bootstrap interval of the median difference and
 * the Mann-Whitney p). The answer goes into result.attribution {status,
 * patches, rule, steps[{patches, last_patch, commit, subject, verdict,
 * comparisons (the prefix against the base), added (the patch against the
 * prefix before: workload, metric, verdict, change, change_pct, ci95,
 * p_value, from, to), added_verdict and added_reasons (that comparison's
 * verdict and sentences), built, boots, reused_runs, job_dir}], carried_by
 * [{workload, metric, patches, last_patch, verdict, change, ci95, p_value}]
 * (per gated metric, the patch whose own change was decided, improved or
 * regressed, and largest), builds, boots}. Unlike a bisection it runs
 * whatever the series' verdict: an improving series is attributed too. */
#pragma once

#include "run/prefix_step.h"
#include "util/json.h"

/* When the series has two patches or more, measures its prefixes and adds
 * result.attribution (result: the whole series' result). Returns 0; a
 * step that errors ends the walk with status "error" (the steps so far are
 * kept), < 0 only when the job itself cannot be read. */
int run_attribution(const struct series_input *in, json_object *result);
