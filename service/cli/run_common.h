/* Running an expanded job from the CLI: the part `schedlab run`, `schedlab
 * test` and `schedlab rerun` share. Progress on stderr, the result (and
 * optionally JUnit XML and the HTML report) written to files, the summary
 * table on stdout, and the verdict as the exit code. */
#pragma once

#include <stdbool.h>

#include "run/runner.h"
#include "util/macro.h"

struct cli_run_opts {
	const char *output;	 /* -o; NULL: <job dir>/result.json */
	const char *job_dir;	 /* --job-dir; NULL: build/jobs/<name>-<UTC stamp> under the cwd */
	const char *junit_path;	 /* NULL: none */
	const char *report_path; /* NULL: none */
	bool quiet;		 /* no progress on stderr */
	struct runner_config cfg;
};

/* The options run, test and rerun share. A command lists CLI_RUN_OPTIONS in
 * its getopt_long table (with "o:qj:" among its short options) and hands
 * every option to cli_run_option() first. */
enum {
	CLI_OPT_JOB_DIR = 0x100,
	CLI_OPT_CACHE_DIR,
	CLI_OPT_ACCEL,
	CLI_OPT_URI,
	CLI_OPT_JUNIT,
	CLI_OPT_REPORT,
	CLI_OPT_NO_SANDBOX,
	CLI_OPT_BUILD_TIMEOUT,
	CLI_OPT_BUILD_SLOTS,
	CLI_OPT_FIRST_FREE, /* a command's own long-only options start here */
};
#define CLI_RUN_OPTIONS                                                                            \
	{"output", required_argument, NULL, 'o'},                                                  \
	    {"job-dir", required_argument, NULL, CLI_OPT_JOB_DIR},                                 \
	    {"cache-dir", required_argument, NULL, CLI_OPT_CACHE_DIR},                             \
	    {"accel", required_argument, NULL, CLI_OPT_ACCEL},                                     \
	    {"uri", required_argument, NULL, CLI_OPT_URI}, {"jobs", required_argument, NULL, 'j'}, \
	    {"junit", required_argument, NULL, CLI_OPT_JUNIT},                                     \
	    {"report", required_argument, NULL, CLI_OPT_REPORT},                                   \
	    {"no-sandbox", no_argument, NULL, CLI_OPT_NO_SANDBOX},                                 \
	    {"build-timeout", required_argument, NULL, CLI_OPT_BUILD_TIMEOUT},                     \
	    {"build-slots", required_argument, NULL, CLI_OPT_BUILD_SLOTS},                         \
	{                                                                                          \
		"quiet", no_argument, NULL, 'q'                                                    \
	}

/* Applies option c (with its argument arg) to o when it is one of
 * CLI_RUN_OPTIONS: returns 1 when it was, 0 when c is not one of them, and
 * -1 for a bad value (--accel not auto/kvm/tcg, --jobs not 1..1024,
 * --build-timeout not 1..86400, --build-slots not 1..8), after
 * saying so on stderr prefixed with "schedlab <cmd>". */
int cli_run_option(const char *cmd, int c, const char *arg, struct cli_run_opts *o);

/* Makes every path in o absolute (against the cwd), runs the expanded job
 * (borrowed), writes the result, JUnit and report, prints the summary, and
 * returns the exit code: 0 pass, 1 fail, 3 inconclusive, 2 error. cmd
 * ("run", "test", "rerun") prefixes messages. */
int cli_run_expanded(const char *cmd, json_object *expanded, const struct cli_run_opts *o);

/* What a job run from the CLI ran with, every path absolute: for a command
 * that runs more jobs after the first (test --bisect). */
struct cli_run_ctx {
	const char *cmd;
	const char *job_dir;
	struct runner_config cfg;
	bool quiet;
};

/* Called with the finished result (borrowed, may be changed) before it is
 * written and summarised; a negative return makes the command exit 2. */
typedef int (*cli_result_fn)(void *userdata, const struct cli_run_ctx *ctx, json_object *result);

/* cli_run_expanded() with then() called on the result in between. */
int cli_run_expanded_then(const char *cmd, json_object *expanded, const struct cli_run_opts *o,
			  cli_result_fn then, void *userdata);

/* Runs the expanded job (borrowed) in job_dir with ctx's configuration and
 * progress, reusing the runs lookup_run (may be NULL) returns by run key
 * (a new reference, or NULL to run it), and returns the result in
 * *ret_result without writing or printing it. Returns 0, or -1 after
 * printing the error. */
int cli_run_in(const struct cli_run_ctx *ctx, json_object *expanded, const char *job_dir,
	       json_object *(*lookup_run)(void *userdata, const char *run_key), void *userdata,
	       json_object **ret_result);

/* path made absolute against the current directory, lexically (the path
 * need not exist; "." components and repeated slashes are dropped, ".." is
 * kept since folding it is wrong across a symlink).
 * malloc'd; NULL (errno set) when the cwd cannot be read or on OOM. */
char *cli_path_absolute(const char *path);

/* The default job directory for a job named name, started now: the absolute
 * form of build/jobs/<name>-<YYYYmmddTHHMMSSZ> under the cwd. malloc'd, or
 * NULL on failure. */
char *cli_default_job_dir(const char *name);

/* The base kernel `schedlab test --base` and `schedlab kernel tree --base`
 * name, as a new job kernel object ({"source", "patches", "config"}):
 *   NULL or "builtin"      Debian's linux-source-6.1 with the built-in series
 *                          and config (the tree the built-in kernel is built
 *                          from; docs/testing-your-patch.md);
 *   "debian:PACKAGE", "tarball:PATH", "git:PATH@REF"
 *                          that source as it is, with the built-in config
 *                          fragment and no series (paths made absolute):
 *                          guest-kernel/linux-6.12/'s for
 *                          debian:linux-source-6.12, linux-6.1's otherwise;
 *   FILE.json              a kernel object like a job's "base"; its relative
 *                          "path" items and sources are made absolute against
 *                          the file's directory.
 * Errors (ERR_INVALID, ERR_NOT_FOUND) name --base and the reason. */
int cli_base_from_arg(const char *arg, json_object **ret, struct sl_error *err);
