/* `schedlab calibrate [--kernel K] [--workloads W] [--boots N]`: boots one
 * kernel N times on this host (an A/A job of two alike variants, run like
 * `schedlab run` runs it, noisy runs rerun), and stores each workload's
 * per-metric A/A spread in the cache's calibration store
 * (compare/calibration.h). Later jobs on this host with that kernel and
 * workload take their default thresholds from it. docs/statistics.md, "A/A
 * calibration", says how. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run_common.h"
#include "compare/calibration.h"
#include "compare/result_model.h"
#include "job/job.h"
#include "job/suite.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/json_get.h"
#include "util/parse.h"
#include "util/time.h"

#define CALIBRATE_DEFAULT_BOOTS	      6
#define CALIBRATE_MAX_WORKLOADS_BYTES (256 * 1024)

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: schedlab calibrate [OPTIONS]\n\n"
		"Boot one kernel N times on this host, run the workloads in each boot, and\n"
		"store every metric's A/A spread (the 90th percentile of the differences\n"
		"between two boots) under CACHE/calibration/, keyed by this host (hostname,\n"
		"CPU model, accelerator), the kernel and the workloads. schedlab run and\n"
		"test then use max(default threshold, %.3g x spread) for metrics with no\n"
		"gate threshold, and the result names the calibration.\n\n"
		"Options:\n"
		"      --kernel K        the kernel, as `schedlab test --base` takes it:\n"
		"                        builtin (default: the built-in base), debian:PACKAGE,\n"
		"                        tarball:PATH, git:PATH@REF or FILE.json\n"
		"      --workloads W     a suite (rt, latency, fair, under-load, all; default\n"
		"                        all, as `schedlab test`) or FILE.json holding a\n"
		"                        workloads array (job.schema.json workload objects)\n"
		"      --boots N         boots of the kernel, %d to %d (default %d; run as an\n"
		"                        A/A job of two alike variants, N/2 boots each,\n"
		"                        rounded up, every run pooled)\n"
		"  -o, --output FILE     write the A/A job's result here\n"
		"      --job-dir DIR     working directory (default build/jobs/calibrate-*)\n"
		"      --cache-dir DIR   kernel cache and calibration store (default:\n"
		"                        $SCHEDLAB_CACHE or ~/.cache/schedlab)\n"
		"      --accel MODE      auto, kvm or tcg\n"
		"      --uri URI         libvirt connection URI (default: qemu:///system)\n"
		"      --jobs N          make -jN for a kernel build\n"
		"  -q, --quiet           no progress on stderr\n"
		"  -h, --help            this text\n\n"
		"Exit status: 0 stored, 2 error (bad input, fewer than 3 ok runs, libvirt down).\n",
		CALIBRATION_MULTIPLE, CALIBRATION_MIN_BOOTS, CALIBRATION_MAX_BOOTS,
		CALIBRATE_DEFAULT_BOOTS);
}

/* --workloads FILE.json: a workloads array, or an object with one. */
static int workloads_from_file(const char *path, json_object **ret, struct sl_error *err)
{
	_cleanup_json_ json_object *doc = NULL;
	int r =
	    json_read_file_strict(path, CALIBRATE_MAX_WORKLOADS_BYTES, "workloads file", &doc, err);
	if (r < 0)
		return r;
	json_object *arr = doc;
	if (json_object_is_type(doc, json_type_object))
		json_object_object_get_ex(doc, "workloads", &arr);
	if (!json_object_is_type(arr, json_type_array) || json_object_array_length(arr) == 0)
		return error_set(err, ERR_INVALID, EINVAL,
				 "--workloads '%s' must hold a non-empty workloads array.", path);
	*ret = json_object_get(arr);
	return 0;
}

static void print_doc(json_object *doc, const char *cache_dir)
{
	json_object *wl = NULL, *name = NULL, *metrics = NULL, *key = NULL, *used = NULL,
		    *noisy = NULL;
	json_object_object_get_ex(doc, "workload", &wl);
	json_object_object_get_ex(wl, "name", &name);
	json_object_object_get_ex(doc, "metrics", &metrics);
	json_object_object_get_ex(doc, "key", &key);
	json_object_object_get_ex(doc, "runs_used", &used);
	json_object_object_get_ex(doc, "noisy_runs_included", &noisy);
	printf("calibration %s/calibration/%s.json: workload '%s', %d run(s)%s\n", cache_dir,
	       json_object_get_string(key), json_object_get_string(name), json_object_get_int(used),
	       json_object_get_boolean(noisy)
		   ? " (fewer than 3 were clean: the noisy ones are counted too)"
		   : ", all clean");
	json_object_object_foreach(metrics, m, mo)
	{
		json_object *sp = NULL, *med = NULL;
		json_object_object_get_ex(mo, "spread", &sp);
		json_object_object_get_ex(mo, "median", &med);
		printf("  %-32s median %-12.6g A/A spread %.6g\n", m, json_object_get_double(med),
		       json_object_get_double(sp));
	}
}

/* Every variant's runs of m in one view that borrows them (free only its
 * array, never the runs): the variants all boot the one kernel alike.
 * false when out of memory. */
static bool all_runs(const struct model_result *m, struct run_view *ret)
{
	size_t n = 0;
	for (size_t v = 0; v < m->n_variants; v++)
		n += m->variants[v].n_runs;
	ret->runs = calloc(n ? n : 1, sizeof(*ret->runs));
	ret->n = 0;
	for (size_t v = 0; ret->runs && v < m->n_variants; v++)
		for (size_t i = 0; i < m->variants[v].n_runs; i++)
			ret->runs[ret->n++] = m->variants[v].runs[i];
	return ret->runs != NULL;
}

/* Frees what all_runs() allocated: the array, not the borrowed runs. */
static void all_runs_free(struct run_view *v)
{
	free(v->runs);
}

/* Stores one calibration per workload from the A/A job's result. */
static int store(const char *result_path, json_object *expanded, const char *cache_dir, int boots)
{
	struct sl_error err = {0};
	_cleanup_json_ json_object *result = NULL;
	_cleanup_job_ struct job *job = NULL;
	if (json_read_file_strict(result_path, 0, "result", &result, &err) < 0 ||
	    job_from_expanded(expanded, &job, &err) < 0) {
		fprintf(stderr, "schedlab calibrate: %s\n", err.message);
		return EXIT_ERROR;
	}
	/* The result is read through its model (compare/result_model.h), so a
	 * damaged one is named by its field here, not half-read below. */
	_cleanup_(model_result_free) struct model_result m = {0};
	if (model_result_parse(result, &m, &err) < 0) {
		fprintf(stderr, "schedlab calibrate: %s\n", err.message);
		return EXIT_ERROR;
	}
	/* kernels and environment are untyped members of the model */
	const char *kkey =
	    json_member_string(json_member(m.kernels, job->baseline->kernel->name), "key");
	const char *accel = json_member_string(m.environment, "accelerator");
	_cleanup_(all_runs_free) struct run_view runs = {0};
	if (!all_runs(&m, &runs)) {
		fprintf(stderr, "schedlab calibrate: out of memory\n");
		return EXIT_ERROR;
	}
	if (!kkey || !accel || runs.n == 0) {
		fprintf(stderr,
			"schedlab calibrate: the A/A job ran no guest; nothing to store.\n");
		return EXIT_ERROR;
	}
	struct calibration_host h;
	calibration_host_local(accel, &h);
	char made_at[TIME_ISO8601_MAX];
	time_now_iso8601(made_at);
	int stored = 0;
	for (size_t i = 0; i < job->n_workloads; i++) {
		_cleanup_json_ json_object *doc =
		    calibration_from_view(&h, kkey, job, &job->workloads[i], &runs, boots, made_at);
		json_object *metrics = NULL;
		json_object_object_get_ex(doc, "metrics", &metrics);
		if (json_object_object_length(metrics) == 0) {
			fprintf(stderr,
				"schedlab calibrate: workload '%s' has fewer than %d ok runs "
				"with metrics; nothing stored for it.\n",
				job->workloads[i].name, CALIBRATION_MIN_BOOTS);
			continue;
		}
		if (calibration_save(cache_dir, doc, &err) < 0) {
			fprintf(stderr, "schedlab calibrate: %s\n", err.message);
			return EXIT_ERROR;
		}
		print_doc(doc, cache_dir);
		stored++;
	}
	if (stored == 0) {
		fprintf(stderr, "schedlab calibrate: no workload had enough ok runs.\n");
		return EXIT_ERROR;
	}
	return EXIT_PASS;
}

int cli_calibrate(int argc, char **argv)
{
	enum { OPT_KERNEL = CLI_OPT_FIRST_FREE, OPT_WORKLOADS, OPT_BOOTS };
	static const struct option opts[] = {
	    {"kernel", required_argument, NULL, OPT_KERNEL},
	    {"workloads", required_argument, NULL, OPT_WORKLOADS},
	    {"boots", required_argument, NULL, OPT_BOOTS},
	    CLI_RUN_OPTIONS,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_run_opts o = {0};
	const char *kernel_arg = NULL, *workloads_arg = "all";
	long boots = CALIBRATE_DEFAULT_BOOTS;
	struct sl_error err = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qhj:", opts, NULL)) != -1) {
		int r = cli_run_option("calibrate", c, optarg, &o);
		if (r < 0)
			return EXIT_ERROR;
		if (r > 0)
			continue;
		switch (c) {
		case OPT_KERNEL:
			kernel_arg = optarg;
			break;
		case OPT_WORKLOADS:
			workloads_arg = optarg;
			break;
		case OPT_BOOTS:
			if (parse_int(optarg, CALIBRATION_MIN_BOOTS, CALIBRATION_MAX_BOOTS,
				      &boots) < 0) {
				fprintf(stderr,
					"schedlab calibrate: --boots must be an integer from %d to "
					"%d, not '%s'.\n",
					CALIBRATION_MIN_BOOTS, CALIBRATION_MAX_BOOTS, optarg);
				return EXIT_ERROR;
			}
			break;
		case 'h':
			usage(stdout);
			return EXIT_PASS;
		default:
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "schedlab calibrate: unexpected argument '%s' (try --help).\n",
			argv[optind]);
		return EXIT_ERROR;
	}
	if (o.junit_path || o.report_path) {
		fprintf(stderr, "schedlab calibrate: --junit and --report do not apply.\n");
		return EXIT_ERROR;
	}

	_cleanup_json_ json_object *base = NULL;
	if (cli_base_from_arg(kernel_arg, &base, &err) < 0) {
		fprintf(stderr, "schedlab calibrate: --kernel: %s\n", err.message);
		return EXIT_ERROR;
	}
	_cleanup_json_ json_object *spec = json_object_new_object();
	json_object_object_add(spec, "name", json_object_new_string("calibrate"));
	json_object_object_add(
	    spec, "description",
	    json_object_new_string("schedlab calibrate: A/A boots of one kernel."));
	json_object *kernels = json_object_new_object();
	json_object_object_add(kernels, "base", TAKE_PTR(base));
	json_object_object_add(spec, "kernels", kernels);
	/* A job needs two variants: two alike, "a" and "b", boots/2 each
	 * (rounded up), their runs pooled. */
	json_object *variants = json_object_new_object();
	for (const char *vn = "a"; vn; vn = strcmp(vn, "a") == 0 ? "b" : NULL) {
		json_object *v = json_object_new_object();
		json_object_object_add(v, "kernel", json_object_new_string("base"));
		json_object_object_add(variants, vn, v);
	}
	json_object_object_add(spec, "variants", variants);
	json_object_object_add(spec, "baseline", json_object_new_string("a"));
	if (suite_known(workloads_arg))
		json_object_object_add(spec, "suite", json_object_new_string(workloads_arg));
	else {
		json_object *wl = NULL;
		if (workloads_from_file(workloads_arg, &wl, &err) < 0) {
			fprintf(stderr, "schedlab calibrate: --workloads: %s\n", err.message);
			return EXIT_ERROR;
		}
		json_object_object_add(spec, "workloads", wl);
	}
	json_object_object_add(spec, "repeat", json_object_new_int((int)(boots + 1) / 2));
	json_object_object_add(spec, "gates", json_object_new_array());

	_cleanup_free_ char *cwd = cli_path_absolute(".");
	_cleanup_json_ json_object *expanded = NULL;
	if (!cwd || job_expand_json(spec, JOB_ORIGIN_CLI, cwd, NULL, &expanded, &err) < 0) {
		fprintf(stderr, "schedlab calibrate: the A/A job: %s%s%s\n", err.path,
			err.path[0] ? ": " : "", err.message);
		return EXIT_ERROR;
	}
	/* The result path and cache dir are needed after the run. */
	_cleanup_free_ char *job_dir =
	    o.job_dir ? cli_path_absolute(o.job_dir) : cli_default_job_dir("calibrate");
	_cleanup_free_ char *output = o.output ? cli_path_absolute(o.output) : NULL;
	if (!job_dir)
		return EXIT_ERROR;
	if (!output)
		output = fs_path_join(job_dir, "result.json");
	_cleanup_free_ char *cache_dir =
	    o.cfg.cache_dir ? cli_path_absolute(o.cfg.cache_dir) : fs_default_cache_dir();
	if (!output || !cache_dir)
		return EXIT_ERROR;
	o.job_dir = job_dir;
	o.output = output;
	o.cfg.cache_dir = cache_dir;
	int rc = cli_run_expanded("calibrate", expanded, &o);
	if (rc == EXIT_ERROR)
		return rc;
	return store(output, expanded, cache_dir, (int)boots);
}
