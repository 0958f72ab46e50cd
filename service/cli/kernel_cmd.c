/* `schedlab kernel build SPEC.json`: builds (or takes from the cache) one
 * kernel and prints its key and artifact paths. `schedlab kernel tree DIR`:
 * writes the tree patches apply to as a git repository. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/run_common.h"
#include "job/job.h"
#include "kernel/kbuild.h"
#include "kernel/kernel_export.h"
#include "run/materialize.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/parse.h"

static void kernel_usage(FILE *f)
{
	fputs("Usage: schedlab kernel build SPEC.json [--cache-dir DIR] [--jobs N]\n"
	      "                             [--cache-max-bytes N] [--no-sandbox]\n"
	      "                             [--build-timeout S] [--build-slots N]\n"
	      "                             [--json] [--quiet]\n"
	      "       schedlab kernel key SPEC.json [--cache-dir DIR]\n"
	      "       schedlab kernel tree [--base BASE] [--quiet] DIR\n"
	      "\n"
	      "SPEC.json: {\"source\": \"debian:linux-source-6.1\" | \"tarball:PATH\" | "
	      "\"git:PATH@REF\",\n"
	      "            \"series\": \"series\" and/or \"patches\": [\"a.patch\", ...],\n"
	      "            \"config\": \"fragment.config\",\n"
	      "            \"debug\": \"lockdep\",   (optional: debug-lockdep.config beside the\n"
	      "                                    config merged after it; paths relative\n"
	      "                                    to SPEC.json)\n"
	      "            \"untrusted\": true}  (optional: \"patches\" from someone else; the\n"
	      "                                    sandboxed make runs in a throwaway copy\n"
	      "                                    of the tree's object directory, first\n"
	      "                                    brought to \"series\" + \"config\")\n"
	      "e.g. guest-kernel/linux-6.1/kernel.json\n"
	      "\n"
	      "  --cache-dir DIR        the cache (default $SCHEDLAB_CACHE or ~/.cache/schedlab)\n"
	      "  --jobs N               make -jN (default: all CPUs)\n"
	      "  --cache-max-bytes N    evict least recently used kernels and source trees\n"
	      "                         above N bytes (default: half the cache's\n"
	      "                         filesystem; 0: no bound)\n"
	      "  --no-sandbox           patch and make without the bubblewrap sandbox\n"
	      "                         (trusted trees only; docs/kernel-builds.md)\n"
	      "  --build-timeout S      a build step's time limit (default 3600 s for make)\n"
	      "  --build-slots N        builds of one source tree that may run at once, each\n"
	      "                         in its own copy of the tree (default 1: they take\n"
	      "                         turns; docs/kernel-builds.md \"Builds at once\")\n"
	      "  --json                 print the artifact as JSON on stdout\n"
	      "  --quiet                no progress on stderr\n"
	      "Exit status: 0 built or cached, 1 the kernel did not patch/configure/build,\n"
	      "2 usage or other error.\n"
	      "\n"
	      "kernel tree writes the tree your patches must apply to into DIR (new or empty)\n"
	      "as a git repository: the base source (one commit naming it and its version),\n"
	      "then one commit per patch of the base's series, tagged schedlab-base. Commit\n"
	      "your change on top and test it with\n"
	      "  schedlab test git:DIR@schedlab-base..HEAD\n"
	      "BASE is as for schedlab test: builtin (default: Debian's linux-source-6.1 and\n"
	      "the built-in series), debian:PACKAGE, tarball:PATH, git:PATH@REF or FILE.json.\n"
	      "It takes a few minutes (extracting and committing about 75,000 files).\n",
	      f);
}

struct progress_state {
	int last_percent;
	int quiet;
};

static void on_progress(void *ud, double percent, const char *line)
{
	struct progress_state *p = ud;
	if (p->quiet)
		return;
	/* our own step lines, and a percent line whenever it moves */
	if (strncmp(line, "schedlab: ", 10) == 0)
		fprintf(stderr, "%s\n", line);
	int pc = (int)percent;
	if (pc != p->last_percent && strncmp(line, "  ", 2) == 0) {
		p->last_percent = pc;
		fprintf(stderr, "kernel build: %3d%% %s\n", pc, line + 2);
	}
}

static int load_spec(const char *path, struct kernel_spec **ret, struct sl_error *err)
{
	json_object *spec = NULL;
	int r = json_read_file_strict(path, 1024 * 1024, "kernel spec", &spec, err);
	if (r < 0)
		return r;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	r = kernel_spec_from_json(spec, dir, ret, err);
	json_object_put(spec);
	if (r < 0)
		return error_prefix(err, "Kernel spec '%s'", path);
	return 0;
}

static void tree_progress(void *ud, const char *line)
{
	const time_t *start = ud;
	fprintf(stderr, "kernel tree: [%3lds] %s\n", (long)(time(NULL) - *start), line);
}

/* The base's kernel spec: the kernel object expanded as a job's and its
 * inline patches written under tmp (run/materialize.h). */
static int tree_spec(json_object *kernel, const char *tmp, struct kernel_spec **ret,
		     struct sl_error *err)
{
	_cleanup_json_ json_object *job = json_object_new_object();
	json_object *kernels = json_object_new_object(), *variants = json_object_new_object(),
		    *v = json_object_new_object(), *wls = json_object_new_array(),
		    *wl = json_object_new_object();
	json_object_object_add(job, "name", json_object_new_string("kernel-tree"));
	json_object_object_add(kernels, "base", json_object_get(kernel));
	json_object_object_add(job, "kernels", kernels);
	json_object_object_add(v, "kernel", json_object_new_string("base"));
	json_object_object_add(variants, "baseline", v);
	/* a job compares two variants; the second is never run */
	json_object *v2 = json_object_new_object();
	json_object_object_add(v2, "kernel", json_object_new_string("base"));
	json_object_object_add(variants, "other", v2);
	json_object_object_add(job, "variants", variants);
	json_object_object_add(wl, "tool", json_object_new_string("rt-migrate-test"));
	json_object_array_add(wls, wl);
	json_object_object_add(job, "workloads", wls);
	_cleanup_job_ struct job *j = NULL;
	int r = job_expand(job, JOB_ORIGIN_CLI, NULL, NULL, &j, err);
	if (r < 0)
		return error_prefix(err, "--base");
	_cleanup_free_ char *data_dir = fs_data_dir();
	return materialize_kernel(&j->kernels[0], tmp, data_dir, ret, err);
}

static int kernel_tree(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"base", required_argument, NULL, 'B'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *base_arg = NULL;
	bool quiet = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'B':
			base_arg = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			kernel_usage(stdout);
			return EXIT_PASS;
		default:
			return EXIT_ERROR;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "schedlab kernel tree: give exactly one DIR (try --help).\n");
		return EXIT_ERROR;
	}
	struct sl_error err = {0};
	_cleanup_free_ char *dir = cli_path_absolute(argv[optind]);
	_cleanup_json_ json_object *kernel = NULL;
	if (!dir || cli_base_from_arg(base_arg, &kernel, &err) < 0) {
		fprintf(stderr, "schedlab kernel tree: %s\n",
			dir ? err.message : "cannot resolve DIR");
		return EXIT_ERROR;
	}
	char tmpl[PATH_MAX];
	const char *tmpdir = getenv("TMPDIR");
	snprintf(tmpl, sizeof(tmpl), "%s/schedlab-tree.XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "schedlab kernel tree: cannot make a temporary directory: %s.\n",
			strerror(errno));
		return EXIT_ERROR;
	}
	struct kernel_spec *spec = NULL;
	time_t start = time(NULL);
	struct kernel_export_opts eo = {.progress = quiet ? NULL : tree_progress,
					.userdata = &start};
	int r = tree_spec(kernel, tmpl, &spec, &err);
	if (r >= 0)
		r = kernel_export_git(spec, dir, &eo, &err);
	kernel_spec_free(spec);
	struct sl_error ignored;
	fs_rm_rf(tmpl, &ignored);
	if (r < 0) {
		fprintf(stderr, "schedlab kernel tree: %s\n", err.message);
		return err.kind == ERR_BUILD ? EXIT_FAIL : EXIT_ERROR;
	}
	if (!quiet)
		tree_progress(&start, "done");
	printf("tree: %s\nbase: the tag %s (commit your patches on top of it)\n"
	       "test: schedlab test git:%s@%s..HEAD\n",
	       dir, KERNEL_EXPORT_TAG, dir, KERNEL_EXPORT_TAG);
	return EXIT_PASS;
}

/* --cache-max-bytes N: 0 asks for no bound (kbuild's 0 is its default). */
static int parse_cache_max(const char *text, unsigned long long *ret)
{
	if (parse_uint64(text, ULLONG_MAX - 1, ret) < 0) {
		fprintf(stderr, "schedlab kernel: --cache-max-bytes '%s' is not a number.\n", text);
		return -EINVAL;
	}
	if (*ret == 0)
		*ret = KBUILD_CACHE_UNLIMITED;
	return 0;
}

int cli_kernel(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"cache-dir", required_argument, NULL, 'c'},
	    {"jobs", required_argument, NULL, 'j'},
	    {"cache-max-bytes", required_argument, NULL, 'm'},
	    {"no-sandbox", no_argument, NULL, 'S'},
	    {"build-timeout", required_argument, NULL, 'T'},
	    {"build-slots", required_argument, NULL, 'B'},
	    {"json", no_argument, NULL, 'J'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *cache_dir = NULL;
	int jobs = 0, json_out = 0, quiet = 0, no_sandbox = 0, timeout_s = 0, slots = 1;
	unsigned long long max_bytes = 0;
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		kernel_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_ERROR : EXIT_PASS;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "tree") == 0)
		return kernel_tree(argc - 1, argv + 1);
	if (strcmp(verb, "build") != 0 && strcmp(verb, "key") != 0) {
		fprintf(stderr, "schedlab kernel: unknown command '%s' (try --help).\n", verb);
		return EXIT_ERROR;
	}
	optind = 1;
	int c;
	long n_jobs;
	while ((c = getopt_long(argc - 1, argv + 1, "c:j:m:ST:B:Jqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cache_dir = optarg;
			break;
		case 'j':
			if (parse_int(optarg, 1, 1024, &n_jobs) < 0) {
				fprintf(stderr, "schedlab kernel: --jobs '%s' is not 1..1024.\n",
					optarg);
				return EXIT_ERROR;
			}
			jobs = (int)n_jobs;
			break;
		case 'm':
			if (parse_cache_max(optarg, &max_bytes) < 0)
				return EXIT_ERROR;
			break;
		case 'S':
			no_sandbox = 1;
			break;
		case 'T':
			if (parse_int(optarg, 1, 86400, &n_jobs) < 0) {
				fprintf(
				    stderr,
				    "schedlab kernel: --build-timeout '%s' is not 1..86400 s.\n",
				    optarg);
				return EXIT_ERROR;
			}
			timeout_s = (int)n_jobs;
			break;
		case 'B':
			if (parse_int(optarg, 1, 8, &n_jobs) < 0) {
				fprintf(stderr,
					"schedlab kernel: --build-slots '%s' is not 1..8.\n",
					optarg);
				return EXIT_ERROR;
			}
			slots = (int)n_jobs;
			break;
		case 'J':
			json_out = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			kernel_usage(stdout);
			return EXIT_PASS;
		default:
			return EXIT_ERROR;
		}
	}
	if (optind + 1 != argc - 1) {
		fprintf(stderr, "schedlab kernel %s: give exactly one SPEC.json (try --help).\n",
			verb);
		return EXIT_ERROR;
	}
	const char *spec_path = argv[1 + optind];

	struct sl_error err = {0};
	struct kernel_spec *spec = NULL;
	int r = load_spec(spec_path, &spec, &err);
	if (r < 0) {
		fprintf(stderr, "schedlab kernel: %s\n", err.message);
		return EXIT_ERROR;
	}
	if (strcmp(verb, "key") == 0) {
		char key[65];
		r = kbuild_key_in(cache_dir, spec, key, &err);
		kernel_spec_free(spec);
		if (r < 0) {
			fprintf(stderr, "schedlab kernel: %s\n", err.message);
			return EXIT_ERROR;
		}
		printf("%s\n", key);
		return EXIT_PASS;
	}

	struct progress_state ps = {.last_percent = -1, .quiet = quiet};
	struct kbuild_opts o = {
	    .cache_dir = cache_dir,
	    .jobs = jobs,
	    .cache_max_bytes = max_bytes,
	    .log_fd = -1,
	    .no_sandbox = no_sandbox,
	    .timeout_s = timeout_s,
	    .tree_slots = slots,
	    .progress = on_progress,
	    .userdata = &ps,
	};
	struct kbuild_artifact *a = NULL;
	r = kbuild_build(&o, spec, &a, &err);
	kernel_spec_free(spec);
	if (r < 0) {
		fprintf(stderr, "schedlab kernel: %s\n", err.message);
		if (json_out) {
			_cleanup_json_ json_object *e = error_to_json(&err);
			printf("%s\n", json_object_to_json_string_ext(e, JSON_C_TO_STRING_PRETTY));
		}
		return err.kind == ERR_BUILD ? EXIT_FAIL : EXIT_ERROR;
	}
	if (json_out) {
		_cleanup_json_ json_object *j = json_object_new_object();
		json_object_object_add(j, "key", json_object_new_string(a->key));
		json_object_object_add(j, "cached", json_object_new_boolean(a->cached));
		json_object_object_add(j, "dir", json_object_new_string(a->dir));
		json_object_object_add(j, "bzimage", json_object_new_string(a->bzimage));
		json_object_object_add(j, "config", json_object_new_string(a->config));
		json_object_object_add(j, "log", json_object_new_string(a->log));
		json_object_object_add(j, "meta_path", json_object_new_string(a->meta_path));
		json_object_object_add(j, "meta", json_object_get(a->meta));
		printf("%s\n", json_object_to_json_string_ext(
				   j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		printf("key: %s\ncached: %s\nbzImage: %s\nconfig: %s\nlog: %s\nmeta: %s\n", a->key,
		       a->cached ? "yes" : "no", a->bzimage, a->config, a->log, a->meta_path);
	}
	kbuild_artifact_free(a);
	return EXIT_PASS;
}
