/* `schedlab test --bisect`: which patch (or commit) of a failing series made
 * it fail, by the same verdict rules as the whole series: run/bisection.c
 * with steps run like `schedlab run` runs a job (progress on stderr). See
 * bisect.h and docs/testing-your-patch.md "Which patch did it". */
#include <stdio.h>

#include "cli/bisect.h"
#include "run/attribution.h"
#include "run/bisection.h"
#include "run/runner.h"

struct step_ctx {
	const struct cli_run_ctx *ctx;
};

static int step_run(void *userdata, json_object *expanded, const char *step_dir,
		    json_object *(*lookup_run)(void *, const char *), void *lookup_userdata,
		    json_object **ret_result)
{
	struct step_ctx *s = userdata;
	return cli_run_in(s->ctx, expanded, step_dir, lookup_run, lookup_userdata, ret_result);
}

/* A prefix's kernels built ahead, from a builder thread (no progress:
 * run/prefix_prebuild.c says when each starts and ends). */
static int step_build(void *userdata, json_object *expanded, const char *step_dir, int *ret_built)
{
	struct step_ctx *s = userdata;
	struct sl_error err = {0};
	if (runner_build_job(&s->ctx->cfg, expanded, step_dir, NULL, ret_built, &err) < 0) {
		fprintf(stderr, "schedlab %s: %s\n", s->ctx->cmd, err.message);
		return -1;
	}
	return 0;
}

static void say(void *userdata, const char *line)
{
	(void)userdata;
	fprintf(stderr, "%s\n", line);
}

int cli_bisect(void *userdata, const struct cli_run_ctx *ctx, json_object *result)
{
	const struct bisect_input *in = userdata;
	if (!in->enabled && !in->per_patch)
		return 0;
	struct step_ctx s = {.ctx = ctx};
	struct series_input bi = {.spec = in->spec,
				  .origin = JOB_ORIGIN_CLI,
				  .cwd = in->cwd,
				  .job_dir = ctx->job_dir,
				  .commits = in->commits,
				  .step_run = step_run,
				  .step_build = step_build,
				  .build_slots = ctx->cfg.build_slots,
				  .step_userdata = &s,
				  .say = say};
	return in->per_patch ? run_attribution(&bi, result) : run_bisection(&bi, result);
}
