/* Subcommands of the schedlab CLI. Each takes (argc, argv) with argv[0] the
 * subcommand name, supports --help, and returns the process exit code.
 * Exit codes (util/version.h) are shared by run and submit --gate. */
#pragma once

#include "util/macro.h"
#include "util/version.h"

struct cli_command {
	const char *name;
	const char *summary;
	int (*fn)(int argc, char **argv);
};

int cli_run(int argc, char **argv);	  /* run_cmd.c */
int cli_test(int argc, char **argv);	  /* test_cmd.c */
int cli_kernel(int argc, char **argv);	  /* kernel_cmd.c */
int cli_serve(int argc, char **argv);	  /* serve_cmd.c */
int cli_submit(int argc, char **argv);	  /* submit_cmd.c */
int cli_report(int argc, char **argv);	  /* report_cmd.c */
int cli_trend(int argc, char **argv);	  /* report_cmd.c */
int cli_validate(int argc, char **argv);  /* validate_cmd.c */
int cli_guest(int argc, char **argv);	  /* guest_cmd.c */
int cli_rerun(int argc, char **argv);	  /* rerun_cmd.c */
int cli_calibrate(int argc, char **argv); /* calibrate_cmd.c */
int cli_nightly(int argc, char **argv);	  /* nightly_cmd.c */
