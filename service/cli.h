/* Subcommands of the schedlab CLI. Each takes (argc, argv) with argv[0] the
 * subcommand name, supports --help, and returns the process exit code.
 * Exit codes shared by run and submit --gate: */
#pragma once

#include "util/macro.h"

#define SCHEDLAB_VERSION "0.1.0"

enum {
	EXIT_PASS = 0,
	EXIT_FAIL = 1,
	EXIT_ERROR = 2,
	EXIT_INCONCLUSIVE = 3,
};

struct cli_command {
	const char *name;
	const char *summary;
	int (*fn)(int argc, char **argv);
};

int cli_run(int argc, char **argv);	 /* cli_run.c */
int cli_kernel(int argc, char **argv);	 /* cli_kernel.c */
int cli_serve(int argc, char **argv);	 /* cli_serve.c */
int cli_submit(int argc, char **argv);	 /* cli_submit.c */
int cli_report(int argc, char **argv);	 /* cli_report.c */
int cli_trend(int argc, char **argv);	 /* cli_report.c */
int cli_validate(int argc, char **argv); /* cli_validate.c */
int cli_guest(int argc, char **argv);	 /* cli_guest.c */
