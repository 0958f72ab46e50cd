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

/* Makes every path in o absolute (against the cwd), runs the expanded job
 * (borrowed), writes the result, JUnit and report, prints the summary, and
 * returns the exit code: 0 pass, 1 fail, 3 inconclusive, 2 error. cmd
 * ("run", "test", "rerun") prefixes messages. */
int cli_run_expanded(const char *cmd, json_object *expanded, const struct cli_run_opts *o);

/* path made absolute against the current directory, lexically (the path
 * need not exist; "." components and repeated slashes are dropped, ".." is
 * kept since folding it is wrong across a symlink).
 * malloc'd; NULL (errno set) when the cwd cannot be read or on OOM. */
char *cli_path_absolute(const char *path);

/* The default job directory for a job named name, started now: the absolute
 * form of build/jobs/<name>-<YYYYmmddTHHMMSSZ> under the cwd. malloc'd, or
 * NULL on failure. */
char *cli_default_job_dir(const char *name);

/* A kernel source string with a relative local path made absolute against
 * base_dir (itself made absolute against the cwd): "tarball:PATH" and
 * "git:PATH@REF" (the ref after the last '@'). Other sources
 * ("debian:...") are copied unchanged. malloc'd, or NULL on failure. */
char *cli_source_absolute(const char *source, const char *base_dir);

/* Rewrites, in place, the relative tarball:/git: sources of a job spec
 * (kernels.*.source and the CI shorthand's base.source) with
 * cli_source_absolute(). Returns 0, or -ENOMEM. */
int cli_spec_sources_absolute(json_object *spec, const char *base_dir);

/* The base kernel `schedlab test --base` and `schedlab kernel tree --base`
 * name, as a new job kernel object ({"source", "patches", "config"}):
 *   NULL or "builtin"      Debian's linux-source-6.1 with the built-in series
 *                          and config (the tree the built-in kernel is built
 *                          from; docs/testing-your-patch.md);
 *   "debian:PACKAGE", "tarball:PATH", "git:PATH@REF"
 *                          that source as it is, with the built-in config
 *                          fragment and no series (paths made absolute);
 *   FILE.json              a kernel object like a job's "base"; its relative
 *                          "path" items and sources are made absolute against
 *                          the file's directory.
 * Errors (ERR_INVALID, ERR_NOT_FOUND) name --base and the reason. */
int cli_base_from_arg(const char *arg, json_object **ret, struct sl_error *err);
