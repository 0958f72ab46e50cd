/* `schedlab run JOB.json -o RESULT.json`: a whole job in-process, with no
 * server. Progress on stderr, a summary table on stdout, and the verdict as
 * the exit code (0 pass, 1 fail, 3 inconclusive, 2 error). */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run_common.h"
#include "job/job.h"
#include "util/json.h"
#include "util/parse.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: schedlab run JOB.json [-o RESULT.json] [OPTIONS]\n\n"
	    "Build the job's kernels, boot every variant REPEAT times in libvirt guests,\n"
	    "run the workloads, compare each variant with the baseline and print a summary.\n\n"
	    "Options:\n"
	    "  -o, --output FILE     write the result JSON here (default: JOBDIR/result.json)\n"
	    "      --job-dir DIR     working directory for logs and patches\n"
	    "                        (default: build/jobs/NAME-TIMESTAMP under the current\n"
	    "                        directory; every path is made absolute first)\n"
	    "      --cache-dir DIR   kernel and initramfs cache (default: $SCHEDLAB_CACHE or\n"
	    "                        ~/.cache/schedlab)\n"
	    "      --accel MODE      auto (probe KVM, else TCG), kvm or tcg (default: the job's)\n"
	    "      --uri URI         libvirt connection URI (default: qemu:///system)\n"
	    "      --hypervisors FILE  a JSON array of hosts {uri, slots, labels} to run the\n"
	    "                        guests on (docs/scale-out.md; replaces --uri)\n"
	    "      --jobs N          make -jN for kernel builds (default: all cores)\n"
	    "      --no-sandbox      patch and make without the bubblewrap sandbox (trusted\n"
	    "                        trees only; docs/kernel-builds.md)\n"
	    "      --build-timeout S  a kernel build step's time limit (default 3600 s)\n"
	    "      --build-slots N   kernel builds at once, each in its own copy of the source\n"
	    "                        tree (default 1; docs/kernel-builds.md \"Builds at once\")\n"
	    "      --junit FILE      also write JUnit XML (a testcase per comparison and run)\n"
	    "      --report FILE     also write the self-contained HTML report\n"
	    "  -q, --quiet           no progress on stderr\n"
	    "  -h, --help            this text\n\n"
	    "Exit status: 0 pass, 1 fail (a gated regression or a failed candidate run),\n"
	    "3 inconclusive, 2 error.\n");
}

int cli_run(int argc, char **argv)
{
	enum { OPT_HYPERVISORS = CLI_OPT_FIRST_FREE };
	static const struct option opts[] = {
	    CLI_RUN_OPTIONS,
	    {"hypervisors", required_argument, NULL, OPT_HYPERVISORS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_run_opts o = {0};
	_cleanup_json_ json_object *hypervisors = NULL;
	struct sl_error err = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qhj:", opts, NULL)) != -1) {
		int r = cli_run_option("run", c, optarg, &o);
		if (r < 0)
			return EXIT_ERROR;
		if (r > 0)
			continue;
		switch (c) {
		case OPT_HYPERVISORS:
			json_object_put(TAKE_PTR(hypervisors)); /* the last one counts */
			if (json_read_file_strict(optarg, 0, "--hypervisors file", &hypervisors,
						  &err) < 0) {
				fprintf(stderr, "schedlab run: %s\n", err.message);
				return EXIT_ERROR;
			}
			o.cfg.hypervisors = hypervisors;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_ERROR;
	}
	const char *job_path = argv[optind];
	_cleanup_json_ json_object *spec = NULL;
	if (json_read_file_strict(job_path, 16 << 20, "job file", &spec, &err) < 0) {
		fprintf(stderr, "schedlab run: %s\n", err.message);
		return EXIT_ERROR;
	}
	/* The job file's directory, absolute: relative patch, config and
	 * source paths in the job are relative to it, whatever the cwd. */
	_cleanup_free_ char *path_copy = strdup(job_path);
	_cleanup_free_ char *base_dir = path_copy ? cli_path_absolute(dirname(path_copy)) : NULL;
	if (!base_dir) {
		fprintf(stderr, "schedlab run: cannot resolve the directory of '%s': %s.\n",
			job_path, strerror(errno));
		return EXIT_ERROR;
	}
	_cleanup_json_ json_object *expanded = NULL;
	if (job_expand_json(spec, JOB_ORIGIN_CLI, base_dir, NULL, &expanded, &err) < 0) {
		fprintf(stderr, "schedlab run: %s: %s%s%s\n", job_path, err.path[0] ? err.path : "",
			err.path[0] ? ": " : "", err.message);
		return EXIT_ERROR;
	}
	return cli_run_expanded("run", expanded, &o);
}
