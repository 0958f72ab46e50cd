/* schedlab: the command-line entry point. Each subcommand is a function
 * cli_<name>() in service/cli/<name>_cmd.c (trend shares report_cmd.c;
 * cli/cli.h names each one's file) and is listed in the table below. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* Weak, so a build without one subcommand's module still links; main()
 * reports such a command as unavailable instead of crashing. */
#pragma weak cli_run
#pragma weak cli_test
#pragma weak cli_kernel
#pragma weak cli_serve
#pragma weak cli_submit
#pragma weak cli_report
#pragma weak cli_trend
#pragma weak cli_validate
#pragma weak cli_guest
#pragma weak cli_rerun
#pragma weak cli_calibrate
#pragma weak cli_nightly

static const struct cli_command commands[] = {
    {"run", "run a job in-process and write its result", cli_run},
    {"test", "test your patches: base against base + patches, one verdict", cli_test},
    {"kernel", "build kernels, or write the tree patches apply to (kernel tree DIR)", cli_kernel},
    {"serve", "run the HTTP service", cli_serve},
    {"submit", "submit a job to a service and optionally gate on it", cli_submit},
    {"report", "render a result as a self-contained HTML report", cli_report},
    {"trend", "render the nightly trend report from a service's store", cli_trend},
    {"validate", "validate a job or result file against its schema", cli_validate},
    {"guest", "boot one kernel with one plan (guest run --help)", cli_guest},
    {"rerun", "run a result's job again and warn where this host differs", cli_rerun},
    {"calibrate", "boot one kernel N times and store this host's A/A spread", cli_calibrate},
    {"nightly", "submit jobs once as a schedule's slot would (for your own cron)", cli_nightly},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: schedlab COMMAND [ARGS...]\n\n"
		   "Benchmark and verify Linux scheduler patches in libvirt guests.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\nRun 'schedlab COMMAND --help' for a command's options.\n"
		"\nEnvironment:\n"
		"  SCHEDLAB_CACHE              the cache directory (default\n"
		"                              $XDG_CACHE_HOME/schedlab, else ~/.cache/schedlab)\n"
		"  SCHEDLAB_LIBVIRT_TIMEOUT_S  how long a libvirt connect may take before the\n"
		"                              daemon is reported hung (default 60)\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("schedlab %s\n", SCHEDLAB_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			if (!commands[i].fn) {
				fprintf(stderr, "schedlab: command '%s' is not in this build.\n",
					argv[1]);
				return 2;
			}
			return commands[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "schedlab: unknown command '%s'.\n", argv[1]);
	usage(stderr);
	return 2;
}
