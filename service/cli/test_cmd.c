/* `schedlab test [OPTIONS] PATCH...`: one command from a patch to a verdict.
 * The patches become the CI shorthand (job.h): the base kernel against the
 * base plus the patches, a suite of workloads with its default gates,
 * adaptive repeats; then the job runs like `schedlab run` does
 * (run_common.h). docs/testing-your-patch.md is the user's side. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/bisect.h"
#include "cli/cli.h"
#include "cli/run_common.h"
#include "job/commit_range.h"
#include "job/job.h"
#include "job/patchset.h"
#include "job/suite.h"
#include "kernel/kernel_spec.h"
#include "compare/sequential.h"
#include "util/cmd.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/parse.h"

/* Adaptive repeats 5..20 (looks at 5, 8, 12, 18 and 20; compare/sequential.h).
 * Each look tests at 0.05 / 5 = 0.01, which 5 runs a side still reach (a
 * clean separation gives p 0.008), so a clear result stops after 5 rounds,
 * as long as `make demo` takes. A gate that is neither failed nor shown
 * within its threshold goes on: the latency gates' 10-15 % thresholds need
 * more runs than the 50 % they replaced to show an A/A job equivalent, and
 * 20 a side bounds the worst case at 40 boots (about 20 minutes of guests
 * under TCG). docs/testing-your-patch.md says the same. */
#define TEST_REPEAT_MIN 5
#define TEST_REPEAT_MAX 20
#define GIT_TIMEOUT_S	300

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: schedlab test [OPTIONS] PATCH...\n"
	    "       schedlab test [OPTIONS] --range git:TREE@BASE..HEAD\n\n"
	    "Build the base kernel and the base plus PATCH..., boot both in libvirt guests,\n"
	    "run a suite of workloads, compare, print the table and exit with the verdict.\n\n"
	    "PATCH is one of (several are applied in the order given):\n"
	    "  FILE                  a git format-patch file, a plain unified diff, or an mbox\n"
	    "                        holding a series (git format-patch --stdout, b4, a list\n"
	    "                        archive); a cover letter is dropped\n"
	    "  DIR                   a directory with a quilt-style 'series' file (one patch\n"
	    "                        file name per line, '#' comments)\n"
	    "  git:TREE@BASE..HEAD   one patch per commit of BASE..HEAD in the git tree TREE\n\n"
	    "Patches must apply to the base: by default Debian's linux-source-6.1 plus the\n"
	    "built-in series; `schedlab kernel tree DIR` writes that tree as a git repository.\n\n"
	    "Options:\n"
	    "      --range git:TREE@BASE..HEAD\n"
	    "                        test the commits BASE..HEAD of the local git tree TREE\n"
	    "                        against the tree at BASE (the default base here; --base\n"
	    "                        overrides it): HEAD's tree is the candidate and, when it\n"
	    "                        fails, the bisection steps through the commits and\n"
	    "                        names the first failing one by hash and subject. BASE\n"
	    "                        must be an ancestor of HEAD, the range linear (no\n"
	    "                        merges) and at most %d commits long\n"
	    "      --suite SUITE     rt, latency, fair, under-load or all (default: all):\n"
	    "                        the workloads and their default gates; debug: all\n"
	    "                        the workloads on\n"
	    "                        the lockdep debug kernels, judged by kernel bug\n"
	    "                        signatures only (no metric gates)\n"
	    "      --debug PRESET    lockdep: build base and patched kernels with the\n"
	    "                        debug preset (PROVE_LOCKING, DEBUG_ATOMIC_SLEEP, BUG\n"
	    "                        and WARN reports...; docs/kernel-bugs.md), keeping\n"
	    "                        the suite's workloads and gates\n"
	    "      --base BASE       builtin (default), debian:PACKAGE, tarball:PATH,\n"
	    "                        git:PATH@REF (as is, no built-in series) or FILE.json\n"
	    "                        (a kernel object like a job's \"base\");\n"
	    "                        debian:linux-source-6.12 is built with the 6.12 config\n"
	    "      --repeat R        boots per variant: N, or MIN:MAX for adaptive repeats\n"
	    "                        (default %d:%d)\n"
	    "  -o, --output FILE     write the result JSON here (default: JOBDIR/result.json)\n"
	    "      --report FILE     also write the self-contained HTML report\n"
	    "      --junit FILE      also write JUnit XML\n"
	    "      --job-dir DIR     working directory for logs and patches\n"
	    "                        (default: build/jobs/NAME-TIMESTAMP under the current dir)\n"
	    "      --no-bisect       when a series of two or more patches fails, do not look\n"
	    "                        for the first patch that fails (by default it does:\n"
	    "                        prefixes of the series are built and measured with the\n"
	    "                        same rules; the answer is in result.bisection)\n"
	    "      --bisect          bisect a failing series (the default)\n"
	    "      --per-patch       measure every prefix of the series, pass or fail, and\n"
	    "                        attribute to each patch its own change in the gated\n"
	    "                        metrics (its prefix against the one before, with\n"
	    "                        intervals; result.attribution); replaces the bisection\n"
	    "      --dry-run         print the expanded job as JSON and exit 0 (nothing runs)\n"
	    "  -q, --quiet           no progress on stderr\n"
	    "      --cache-dir DIR   kernel and initramfs cache (default: $SCHEDLAB_CACHE or\n"
	    "                        ~/.cache/schedlab)\n"
	    "      --accel MODE      auto (probe KVM, else TCG), kvm or tcg\n"
	    "      --uri URI         libvirt connection URI (default: qemu:///system)\n"
	    "      --jobs N          make -jN for kernel builds (default: all cores)\n"
	    "      --no-sandbox      patch and make without the bubblewrap sandbox (trusted\n"
	    "                        trees only; docs/kernel-builds.md)\n"
	    "      --build-timeout S  a kernel build step's time limit (default 3600 s)\n"
	    "      --build-slots N   kernel builds at once, each in its own copy of the source\n"
	    "                        tree (default 1; docs/kernel-builds.md \"Builds at once\")\n"
	    "  -h, --help            this text\n\n"
	    "Exit status: 0 pass, 1 fail (a gated regression, a failed run, or a patched\n"
	    "kernel that does not build), 3 inconclusive (run more repeats), 2 error (bad\n"
	    "input, a base that does not build, libvirt down).\n",
	    job_default_limits()->max_patches, TEST_REPEAT_MIN, TEST_REPEAT_MAX);
}

/* A git ref as schedlab accepts it in a range: no shell, no options, no
 * "..": letters, digits and "._/^~-", not starting with '-'. */
static bool ref_ok(const char *s, size_t n)
{
	if (n == 0 || n > 200 || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("._/^~-", c)))
			return false;
		if (c == '.' && i + 1 < n && s[i + 1] == '.')
			return false;
	}
	return true;
}

/* Appends the patches of one input (borrowed array) to all. */
static void append_all(json_object *all, json_object *patches)
{
	for (size_t i = 0; i < json_object_array_length(patches); i++)
		json_object_array_add(all, json_object_get(json_object_array_get_idx(patches, i)));
}

static int patches_from_file(const char *path, json_object *all, struct sl_error *err)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = fs_read_file(path, PATCHSET_MAX_INPUT_BYTES, &data, &len, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *copy = strdup(path);
	if (!copy)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_json_ json_object *patches = NULL;
	r = patchset_from_mbox(data, len, basename(copy), &patches, err);
	if (r < 0)
		return error_prefix(err, "'%s'", path);
	append_all(all, patches);
	return 0;
}

static int patches_from_series_dir(const char *dir, json_object *all, struct sl_error *err)
{
	_cleanup_free_ char *abs = cli_path_absolute(dir);
	if (!abs)
		return error_set(err, ERR_INTERNAL, errno, "Cannot resolve '%s'.", dir);
	_cleanup_free_ char *series = fs_path_join(abs, "series");
	if (!fs_exists(series))
		return error_set(err, ERR_NOT_FOUND, ENOENT,
				 "Directory '%s' has no 'series' file (one patch file name per "
				 "line, as quilt writes it).",
				 dir);
	_cleanup_strv_free_ char **files = NULL;
	int r = kernel_series_read(series, &files, err);
	if (r < 0)
		return r;
	if (!files[0])
		return error_set(err, ERR_INVALID, EINVAL, "'%s' lists no patches.", series);
	for (char **f = files; *f; f++)
		if ((r = patches_from_file(*f, all, err)) < 0)
			return r;
	return 0;
}

/* git:TREE@BASE..HEAD: `git -C TREE format-patch --stdout BASE..HEAD`, split. */
static int patches_from_git_range(const char *arg, json_object *all, struct sl_error *err)
{
	const char *spec = arg + 4;
	const char *at = strrchr(spec, '@');
	const char *dots = at ? strstr(at + 1, "..") : NULL;
	if (!at || at == spec || !dots)
		return error_set(err, ERR_INVALID, EINVAL,
				 "'%s' must look like 'git:TREE@BASE..HEAD'.", arg);
	const char *base = at + 1, *head = dots + 2;
	if (!ref_ok(base, (size_t)(dots - base)) || !ref_ok(head, strlen(head)))
		return error_set(err, ERR_INVALID, EINVAL,
				 "The range in '%s' must be BASE..HEAD with refs of letters, "
				 "digits and '._/^~-' (not starting with '-'), e.g. "
				 "'git:linux@v6.1..HEAD' or 'git:.@HEAD~3..HEAD'.",
				 arg);
	_cleanup_free_ char *tree_rel = strndup(spec, (size_t)(at - spec));
	_cleanup_free_ char *tree = tree_rel ? cli_path_absolute(tree_rel) : NULL;
	if (!tree)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	struct stat st;
	if (stat(tree, &st) < 0 || !S_ISDIR(st.st_mode))
		return error_set(err, ERR_NOT_FOUND, ENOENT,
				 "'%s': the git tree '%s' is not a directory.", arg, tree);
	const char *range = base; /* "BASE..HEAD", the rest of arg */
	/* --no-attach and --no-cover-letter override a user's format.*
	 * settings that would wrap the patches in MIME or add a letter. */
	char *argv[] = {"git",
			"-C",
			tree,
			"format-patch",
			"--stdout",
			"--no-attach",
			"--no-cover-letter",
			(char *)range,
			"--",
			NULL};
	struct cmd_opts o = {.timeout_s = GIT_TIMEOUT_S,
			     .log_fd = -1,
			     .capture_max = (size_t)PATCHSET_MAX_INPUT_BYTES + 1};
	_cleanup_free_ char *out = NULL;
	int exit_status = 0;
	int r = cmd_run(argv, &o, &exit_status, &out, err);
	if (r < 0)
		return error_prefix(err, "'%s': git format-patch", arg);
	if (exit_status != 0) {
		size_t n = out ? strlen(out) : 0;
		while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
			out[--n] = '\0';
		return error_set(err, ERR_INVALID, EINVAL,
				 "'%s': git format-patch exited %d: %.600s", arg, exit_status,
				 out && *out ? out : "(no output)");
	}
	size_t len = out ? strlen(out) : 0;
	if (len == 0)
		return error_set(err, ERR_INVALID, EINVAL,
				 "'%s': the range %s holds no commits with changes.", arg, range);
	if (len > PATCHSET_MAX_INPUT_BYTES)
		return error_set(err, ERR_TOO_LARGE, EFBIG,
				 "'%s': the range's patches are over %u bytes.", arg,
				 PATCHSET_MAX_INPUT_BYTES);
	_cleanup_json_ json_object *patches = NULL;
	r = patchset_from_mbox(out, len, NULL, &patches, err);
	if (r < 0)
		return error_prefix(err, "'%s'", arg);
	append_all(all, patches);
	return 0;
}

/* --range git:TREE@BASE..HEAD (job/commit_range.h): the commits as
 * patches, the commits themselves ([{"commit", "subject"}]) for the
 * bisection to name, and the base they apply to
 * (commit_range_bisect_inputs), "git:ABS_TREE@<hash>" as `--base
 * git:PATH@REF` would give it. */
static int patches_from_range(const char *arg, json_object *all, json_object **ret_commits,
			      char **ret_base, struct sl_error *err)
{
	struct commit_range cr;
	int r = commit_range_parse(arg, "--range", &cr, err);
	if (r < 0)
		return r;
	char *abs = cli_path_absolute(cr.tree);
	free(cr.tree);
	cr.tree = abs;
	_cleanup_json_ json_object *patches = NULL;
	if (!abs)
		r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	else if ((r = commit_range_bisect_inputs(&cr, (size_t)job_default_limits()->max_patches,
						 "--range", &patches, ret_commits, ret_base,
						 err)) >= 0)
		append_all(all, patches);
	commit_range_done(&cr);
	return r;
}

static int patches_from_arg(const char *arg, json_object *all, struct sl_error *err)
{
	if (strncmp(arg, "git:", 4) == 0)
		return patches_from_git_range(arg, all, err);
	struct stat st;
	if (stat(arg, &st) < 0)
		return error_set(err, ERR_NOT_FOUND, errno, "PATCH '%s': %s.", arg,
				 strerror(errno));
	if (S_ISDIR(st.st_mode))
		return patches_from_series_dir(arg, all, err);
	if (!S_ISREG(st.st_mode))
		return error_set(err, ERR_INVALID, EINVAL,
				 "PATCH '%s' is neither a file nor a directory.", arg);
	return patches_from_file(arg, all, err);
}

/* Numbered names ("0003-x.patch") from several inputs numbered again in
 * order, so the job's list reads 0001.. like one series. */
static void renumber(json_object *all)
{
	for (size_t i = 0; i < json_object_array_length(all); i++) {
		json_object *p = json_object_array_get_idx(all, i), *name = NULL;
		json_object_object_get_ex(p, "name", &name);
		const char *s = json_object_get_string(name);
		if (!s || strlen(s) < 6 || strspn(s, "0123456789") != 4 || s[4] != '-')
			continue;
		char buf[PATCHSET_MAX_NAME + 8];
		snprintf(buf, sizeof(buf), "%04zu%s", (i + 1) % 10000, s + 4);
		json_object_object_add(p, "name", json_object_new_string(buf));
	}
}

/* The job's name: the first patch's name without "NNNN-" and ".patch",
 * made a valid job name ([A-Za-z0-9][A-Za-z0-9._-]{0,63}). */
static char *job_name(json_object *all)
{
	json_object *first = json_object_array_get_idx(all, 0), *name = NULL;
	json_object_object_get_ex(first, "name", &name);
	const char *s = name ? json_object_get_string(name) : "";
	if (strlen(s) > 5 && strspn(s, "0123456789") == 4 && s[4] == '-')
		s += 5;
	_cleanup_free_ char *stem = strdup(s);
	if (!stem)
		return NULL;
	char *dot = strrchr(stem, '.');
	if (dot && (strcmp(dot, ".patch") == 0 || strcmp(dot, ".diff") == 0 ||
		    strcmp(dot, ".mbox") == 0 || strcmp(dot, ".mbx") == 0))
		*dot = '\0';
	for (char *c = stem; *c; c++)
		if (*c == '+')
			*c = '-';
	char *out = patchset_safe_name(stem, 64);
	if (out && !*out) {
		free(out);
		out = strdup("patch-test");
	}
	return out;
}

static int parse_repeat(const char *s, json_object **ret)
{
	const struct job_limits *lim = job_default_limits();
	const char *colon = strchr(s, ':');
	long min = 0, max = 0;
	if (!colon) {
		if (parse_int(s, 1, lim->max_repeat, &min) < 0)
			return -EINVAL;
		*ret = json_object_new_int((int)min);
		return 0;
	}
	_cleanup_free_ char *a = strndup(s, (size_t)(colon - s));
	if (!a || parse_int(a, 1, lim->max_repeat, &min) < 0 ||
	    parse_int(colon + 1, 1, lim->max_repeat, &max) < 0 || max < min)
		return -EINVAL;
	json_object *o = json_object_new_object();
	json_object_object_add(o, "min", json_object_new_int((int)min));
	json_object_object_add(o, "max", json_object_new_int((int)max));
	*ret = o;
	return 0;
}

/* Says before anything runs when the job's repeats can never decide a gate
 * (compare/sequential.h); with dry_run prints the expanded job and returns
 * true: nothing is to run. */
static bool warn_or_dry_run(json_object *expanded, bool dry_run)
{
	_cleanup_job_ struct job *job = NULL;
	struct sl_error err = {0};
	char warn[400];
	if (job_from_expanded(expanded, &job, &err) == 0 &&
	    compare_repeat_warning(job, warn, sizeof(warn)))
		fprintf(stderr, "schedlab test: warning: %s\n", warn);
	if (dry_run)
		printf("%s\n",
		       json_object_to_json_string_ext(
			   expanded, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	return dry_run;
}

/* The job's patches into patches: the commits of range_arg (their ids in
 * *ret_commits, the range's base in *ret_range_base) or the PATCH
 * arguments from optind on, bounded and numbered; -1 (said on stderr) when
 * they cannot be read. */
static int collect_patches(int argc, char **argv, const char *range_arg, json_object *patches,
			   json_object **ret_commits, char **ret_range_base)
{
	struct sl_error err = {0};
	if (range_arg) {
		if (optind < argc) {
			fprintf(stderr, "schedlab test: --range: give either PATCH... or --range, "
					"not both.\n");
			return -1;
		}
		if (patches_from_range(range_arg, patches, ret_commits, ret_range_base, &err) < 0) {
			fprintf(stderr, "schedlab test: %s%s%s\n", err.path,
				err.path[0] ? ": " : "", err.message);
			return -1;
		}
	} else if (optind >= argc) {
		fprintf(stderr,
			"schedlab test: give at least one PATCH or --range (try --help).\n");
		return -1;
	}
	for (int i = optind; i < argc; i++) {
		if (patches_from_arg(argv[i], patches, &err) < 0) {
			fprintf(stderr, "schedlab test: %s\n", err.message);
			return -1;
		}
	}
	if ((int)json_object_array_length(patches) > job_default_limits()->max_patches) {
		fprintf(stderr, "schedlab test: %zu patches; a job may carry at most %d.\n",
			json_object_array_length(patches), job_default_limits()->max_patches);
		return -1;
	}
	renumber(patches);
	return 0;
}

int cli_test(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"suite", required_argument, NULL, 'S'}, {"debug", required_argument, NULL, 'D'},
	    {"base", required_argument, NULL, 'B'},  {"repeat", required_argument, NULL, 'r'},
	    {"range", required_argument, NULL, 'R'}, CLI_RUN_OPTIONS,
	    {"dry-run", no_argument, NULL, 'n'},     {"bisect", no_argument, NULL, 'b'},
	    {"no-bisect", no_argument, NULL, 'N'},   {"per-patch", no_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},	     {NULL, 0, NULL, 0},
	};
	struct cli_run_opts o = {0};
	const char *suite = "all", *base_arg = NULL, *debug = NULL, *range_arg = NULL;
	_cleanup_json_ json_object *repeat = NULL;
	bool dry_run = false, bisect = true, per_patch = false;
	struct sl_error err = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qhj:", opts, NULL)) != -1) {
		int r = cli_run_option("test", c, optarg, &o);
		if (r < 0)
			return EXIT_ERROR;
		if (r > 0)
			continue;
		switch (c) {
		case 'S':
			if (!suite_known(optarg)) {
				fprintf(stderr,
					"schedlab test: --suite must be rt, latency, fair, "
					"under-load, all or debug, not '%s'.\n",
					optarg);
				return EXIT_ERROR;
			}
			suite = optarg;
			break;
		case 'D':
			if (!suite_debug_known(optarg)) {
				fprintf(stderr,
					"schedlab test: --debug must be lockdep (the one debug "
					"preset), not '%s'.\n",
					optarg);
				return EXIT_ERROR;
			}
			debug = optarg;
			break;
		case 'B':
			base_arg = optarg;
			break;
		case 'R':
			range_arg = optarg;
			break;
		case 'r':
			json_object_put(TAKE_PTR(repeat));
			if (parse_repeat(optarg, &repeat) < 0) {
				fprintf(stderr,
					"schedlab test: --repeat '%s' is not N or MIN:MAX with "
					"1 <= MIN <= MAX <= %d.\n",
					optarg, job_default_limits()->max_repeat);
				return EXIT_ERROR;
			}
			break;
		case 'n':
			dry_run = true;
			break;
		case 'b':
			bisect = true;
			break;
		case 'N':
			bisect = false;
			break;
		case 'P':
			per_patch = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_PASS;
		default:
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	_cleanup_json_ json_object *patches = json_object_new_array();
	_cleanup_json_ json_object *commits = NULL;
	_cleanup_free_ char *range_base = NULL;
	if (collect_patches(argc, argv, range_arg, patches, &commits, &range_base) < 0)
		return EXIT_ERROR;
	if (range_arg && !base_arg)
		base_arg = range_base;
	_cleanup_json_ json_object *base = NULL;
	if (cli_base_from_arg(base_arg, &base, &err) < 0) {
		fprintf(stderr, "schedlab test: %s\n", err.message);
		return EXIT_ERROR;
	}
	/* The shorthand's patched kernel copies the base: both are debug builds. */
	if (debug)
		json_object_object_add(base, "debug", json_object_new_string(debug));
	_cleanup_free_ char *name = job_name(patches);
	if (!name)
		return EXIT_ERROR;
	if (!repeat) {
		repeat = json_object_new_object();
		json_object_object_add(repeat, "min", json_object_new_int(TEST_REPEAT_MIN));
		json_object_object_add(repeat, "max", json_object_new_int(TEST_REPEAT_MAX));
	}
	_cleanup_json_ json_object *spec = json_object_new_object();
	json_object_object_add(spec, "name", json_object_new_string(name));
	char desc[512];
	snprintf(desc, sizeof(desc), "schedlab test: %zu %s from %.200s%s, suite %s%s%s.",
		 json_object_array_length(patches), range_arg ? "commit(s)" : "patch(es)",
		 range_arg ? range_arg : argv[optind], argc - optind > 1 ? " and more" : "", suite,
		 debug ? ", debug " : "", debug ? debug : "");
	json_object_object_add(spec, "description", json_object_new_string(desc));
	json_object_object_add(spec, "base", TAKE_PTR(base));
	json_object_object_add(spec, "patches", TAKE_PTR(patches));
	json_object_object_add(spec, "suite", json_object_new_string(suite));
	json_object_object_add(spec, "repeat", TAKE_PTR(repeat));

	_cleanup_free_ char *cwd = cli_path_absolute(".");
	_cleanup_json_ json_object *expanded = NULL;
	if (!cwd || job_expand_json(spec, JOB_ORIGIN_CLI, cwd, NULL, &expanded, &err) < 0) {
		fprintf(stderr, "schedlab test: the job: %s%s%s\n", err.path[0] ? err.path : "",
			err.path[0] ? ": " : "", err.message);
		return EXIT_ERROR;
	}
	if (warn_or_dry_run(expanded, dry_run))
		return EXIT_PASS;
	struct bisect_input bi = {.spec = spec,
				  .cwd = cwd,
				  .enabled = bisect,
				  .per_patch = per_patch,
				  .commits = commits};
	return cli_run_expanded_then("test", expanded, &o, cli_bisect, &bi);
}
