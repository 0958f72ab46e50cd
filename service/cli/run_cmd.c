/* `schedlab run JOB.json -o RESULT.json`: a whole job in-process, with no
 * server. Progress on stderr, a summary table on stdout, and the verdict as
 * the exit code (0 pass, 1 fail, 3 inconclusive, 2 error). */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "job/job.h"
#include "report/junit.h"
#include "report/report.h"
#include "run/runner.h"
#include "report/summary.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/parse.h"

struct run_progress {
	bool tty;
	double last_pct;
	char last_phase[16];
};

static void on_progress(void *userdata, const struct runner_progress *p)
{
	struct run_progress *st = userdata;
	bool same_phase = strcmp(st->last_phase, p->phase) == 0;
	/* Build output is chatty: keep one line per 5% unless on a terminal. */
	if (strcmp(p->phase, "building") == 0 && same_phase && p->percent >= 0 &&
	    p->percent < 100 && p->percent - st->last_pct < 5.0 && !st->tty)
		return;
	snprintf(st->last_phase, sizeof(st->last_phase), "%s", p->phase);
	st->last_pct = p->percent;
	char pct[16] = "";
	if (p->percent >= 0)
		snprintf(pct, sizeof(pct), " %3.0f%%", p->percent);
	char runs[32] = "";
	if (p->run_total > 0)
		snprintf(runs, sizeof(runs), " [run %d/%d]", p->run_index, p->run_total);
	if (st->tty && strcmp(p->phase, "building") == 0 && p->percent < 100)
		fprintf(stderr, "\r\033[K[%s%s]%s %.100s", p->phase, pct, runs, p->message);
	else
		fprintf(stderr, "%s[%s%s]%s %s\n", st->tty ? "\r\033[K" : "", p->phase, pct, runs,
			p->message);
}

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
	    "                        (default: build/jobs/NAME-TIMESTAMP)\n"
	    "      --cache-dir DIR   kernel and initramfs cache (default: $SCHEDLAB_CACHE or\n"
	    "                        ~/.cache/schedlab)\n"
	    "      --accel MODE      auto (probe KVM, else TCG), kvm or tcg (default: the job's)\n"
	    "      --uri URI         libvirt connection URI (default: qemu:///system)\n"
	    "      --hypervisors FILE  a JSON array of hosts {uri, slots, labels} to run the\n"
	    "                        guests on (docs/scale-out.md; replaces --uri)\n"
	    "      --jobs N          make -jN for kernel builds (default: all cores)\n"
	    "      --junit FILE      also write JUnit XML (a testcase per comparison and run)\n"
	    "      --report FILE     also write the self-contained HTML report\n"
	    "  -q, --quiet           no progress on stderr\n"
	    "  -h, --help            this text\n\n"
	    "Exit status: 0 pass, 1 fail (a gated regression or a failed candidate run),\n"
	    "3 inconclusive, 2 error.\n");
}

int cli_run(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"job-dir", required_argument, NULL, 'd'},
	    {"cache-dir", required_argument, NULL, 'c'},
	    {"accel", required_argument, NULL, 'a'},
	    {"uri", required_argument, NULL, 'u'},
	    {"hypervisors", required_argument, NULL, 'H'},
	    {"jobs", required_argument, NULL, 'j'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"junit", required_argument, NULL, 'J'},
	    {"report", required_argument, NULL, 'R'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *output = NULL, *job_dir_arg = NULL, *junit_path = NULL, *report_path = NULL;
	struct runner_config cfg = {0};
	_cleanup_json_ json_object *hypervisors = NULL;
	struct sl_error err = {0};
	bool quiet = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qhj:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'd':
			job_dir_arg = optarg;
			break;
		case 'c':
			cfg.cache_dir = optarg;
			break;
		case 'a':
			if (strcmp(optarg, "auto") && strcmp(optarg, "kvm") &&
			    strcmp(optarg, "tcg")) {
				fprintf(
				    stderr,
				    "schedlab run: --accel must be auto, kvm or tcg, not '%s'.\n",
				    optarg);
				return EXIT_ERROR;
			}
			cfg.accel = optarg;
			break;
		case 'u':
			cfg.libvirt_uri = optarg;
			break;
		case 'H':
			json_object_put(TAKE_PTR(hypervisors)); /* the last one counts */
			if (json_read_file_strict(optarg, 0, "--hypervisors file", &hypervisors,
						  &err) < 0) {
				fprintf(stderr, "schedlab run: %s\n", err.message);
				return EXIT_ERROR;
			}
			cfg.hypervisors = hypervisors;
			break;
		case 'j': {
			long j = 0;
			if (parse_int(optarg, 1, 1024, &j) < 0) {
				fprintf(stderr, "schedlab run: --jobs '%s' is not 1..1024.\n",
					optarg);
				return EXIT_ERROR;
			}
			cfg.build_jobs = (int)j;
			break;
		}
		case 'J':
			junit_path = optarg;
			break;
		case 'R':
			report_path = optarg;
			break;
		case 'q':
			quiet = true;
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
	_cleanup_free_ char *path_copy = strdup(job_path);
	const char *base_dir = dirname(path_copy);
	_cleanup_json_ json_object *expanded = NULL;
	if (job_expand_json(spec, JOB_ORIGIN_CLI, base_dir, NULL, &expanded, &err) < 0) {
		fprintf(stderr, "schedlab run: %s: %s%s%s\n", job_path, err.path[0] ? err.path : "",
			err.path[0] ? ": " : "", err.message);
		return EXIT_ERROR;
	}
	_cleanup_free_ char *job_dir = NULL;
	if (job_dir_arg) {
		job_dir = strdup(job_dir_arg);
	} else {
		char stamp[32];
		time_t t = time(NULL);
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
		json_object *name = NULL;
		json_object_object_get_ex(expanded, "name", &name);
		if (asprintf(&job_dir, "build/jobs/%s-%s", json_object_get_string(name), stamp) < 0)
			return EXIT_ERROR;
	}
	struct run_progress st = {.tty = isatty(STDERR_FILENO), .last_pct = -100};
	struct runner_hooks hooks = {.userdata = &st, .progress = quiet ? NULL : on_progress};
	_cleanup_json_ json_object *result = NULL;
	if (runner_run_job(&cfg, expanded, job_dir, &hooks, &result, &err) < 0) {
		fprintf(stderr, "schedlab run: %s\n", err.message);
		fprintf(stderr, "schedlab run: logs are in '%s'.\n", job_dir);
		return EXIT_ERROR;
	}
	_cleanup_free_ char *default_out = fs_path_join(job_dir, "result.json");
	if (!output)
		output = default_out;
	const char *js = json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (fs_write_file_atomic(output, js, strlen(js), &err) < 0) {
		fprintf(stderr, "schedlab run: %s\n", err.message);
		return EXIT_ERROR;
	}
	if (junit_path) {
		_cleanup_free_ char *xml = NULL;
		if (junit_from_result(result, &xml) < 0 ||
		    fs_write_file_atomic(junit_path, xml, strlen(xml), &err) < 0) {
			fprintf(stderr, "schedlab run: cannot write JUnit XML to '%s'.\n",
				junit_path);
			return EXIT_ERROR;
		}
	}
	if (report_path) {
		_cleanup_free_ char *html = NULL;
		if (report_html(result, &html, &err) < 0 ||
		    fs_write_file_atomic(report_path, html, strlen(html), &err) < 0) {
			fprintf(stderr, "schedlab run: cannot write the report to '%s': %s\n",
				report_path, err.message);
			return EXIT_ERROR;
		}
	}
	summary_print(stdout, result);
	printf("result: %s\n", output);
	return summary_exit_code(result);
}
