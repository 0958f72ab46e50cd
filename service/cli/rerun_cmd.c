/* schedlab rerun RESULT.json: runs a result's job again, exactly as it ran.
 * result.job is the expanded spec (patches inline by content, the config,
 * every default filled in), so it runs as is through cli_run_expanded().
 * What the spec cannot pin down is the host: before running, each kernel is
 * materialized here and its cache key, patches, config fragment, source
 * version and compiler are compared with what the result recorded, and so
 * are the QEMU, libvirt and schedlab versions; every difference is a warning
 * on stderr (docs/ci.md, "Reproducing a result"). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run_common.h"
#include "guest/guest.h"
#include "job/job.h"
#include "kernel/kbuild.h"
#include "run/materialize.h"
#include "util/cmd.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/json_get.h"

#define RESULT_FILE_MAX (64u * 1024 * 1024)

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: schedlab rerun RESULT.json [OPTIONS]\n\n"
	    "Runs the job of a result again, exactly: the spec as it ran (result.job),\n"
	    "the patches by content, the kernel config. Before running it compares this\n"
	    "host with the one that produced the result (each kernel's cache key,\n"
	    "patches, config fragment, source version and compiler; QEMU, libvirt and\n"
	    "schedlab versions) and warns on stderr about each difference.\n\n"
	    "Options:\n"
	    "  -o, --output FILE     write the new result JSON here (default: JOBDIR/result.json)\n"
	    "      --job-dir DIR     working directory (default: build/jobs/NAME-TIMESTAMP)\n"
	    "      --junit FILE      also write JUnit XML\n"
	    "      --report FILE     also write the HTML report\n"
	    "      --cache-dir DIR   kernel and initramfs cache (default: $SCHEDLAB_CACHE or\n"
	    "                        ~/.cache/schedlab)\n"
	    "      --accel MODE      auto, kvm or tcg (default: the job's)\n"
	    "      --uri URI         libvirt connection URI (default: qemu:///system)\n"
	    "      --jobs N          make -jN for kernel builds (default: all cores)\n"
	    "      --no-sandbox      patch and make without the bubblewrap sandbox (trusted\n"
	    "                        trees only; docs/kernel-builds.md)\n"
	    "      --build-timeout S  a kernel build step's time limit (default 3600 s)\n"
	    "      --build-slots N   kernel builds at once, each in its own copy of the source\n"
	    "                        tree (default 1; docs/kernel-builds.md \"Builds at once\")\n"
	    "      --dry-run         print the job and the warnings; run nothing\n"
	    "  -q, --quiet           no progress on stderr\n"
	    "  -h, --help            this text\n\n"
	    "Exit status: 0 pass, 1 fail, 3 inconclusive, 2 error (also: the file is not\n"
	    "a result, or its job is not a valid expanded job). --dry-run exits 0 when\n"
	    "the job is valid, whatever the warnings.\n");
}

struct check {
	int warnings;
};

static void warn(struct check *ck, const char *fmt, ...) _printf_(2, 3);
static void warn(struct check *ck, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "schedlab rerun: warning: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	ck->warnings++;
}

/* Warns when the recorded value differs from this host's (NULL: unknown). */
static void compare(struct check *ck, const char *what, const char *recorded, const char *here)
{
	if (!recorded || !here || strcmp(recorded, "unknown") == 0)
		return;
	if (strcmp(recorded, here) != 0)
		warn(ck, "%s differs: the result has '%.200s', this host has '%.200s'.", what,
		     recorded, here);
}

/* The first line of a command's output, or NULL. */
static char *first_line(char *const argv[])
{
	struct cmd_opts o = {.log_fd = -1, .capture_max = 4096, .timeout_s = 30};
	char *out = NULL;
	int ex = 0;
	struct sl_error err = {0};
	if (cmd_run(argv, &o, &ex, &out, &err) < 0 || ex != 0) {
		free(out);
		return NULL;
	}
	out[strcspn(out, "\n")] = '\0';
	return out;
}

/* The upstream version of the installed Debian package behind source
 * "debian:linux-source-X.Y" ("6.1.192-3" gives "6.1.192"), or NULL. */
static char *debian_source_version(const char *source)
{
	if (strncmp(source, "debian:", 7) != 0)
		return NULL;
	char *const argv[] = {"dpkg-query", "-W", "-f=${Version}", (char *)source + 7, NULL};
	char *v = first_line(argv);
	if (v) {
		char *colon = strchr(v, ':'); /* an epoch */
		if (colon)
			memmove(v, colon + 1, strlen(colon + 1) + 1);
		char *dash = strrchr(v, '-');
		if (dash)
			*dash = '\0';
	}
	return v;
}

/* Compares kernel k of the job, as it would be built here, with the
 * kernel meta the result recorded. */
static void check_kernel(struct check *ck, const struct job_kernel *k, json_object *meta,
			 const char *tmp, const struct runner_config *cfg, const char *compiler)
{
	int before = ck->warnings;
	if (!meta || !json_object_is_type(meta, json_type_object)) {
		warn(ck, "the result records nothing about kernel '%s'; cannot compare it.",
		     k->name);
		return;
	}
	char what[160];
	_cleanup_free_ char *deb = debian_source_version(k->source);
	snprintf(what, sizeof(what), "kernel '%s': the source version of '%s'", k->name, k->source);
	compare(ck, what, json_member_string(meta, "source_version"), deb);
	snprintf(what, sizeof(what), "kernel '%s': the compiler", k->name);
	compare(ck, what, json_member_string(meta, "compiler"), compiler);

	struct kernel_spec *spec = NULL;
	struct sl_error err = {0};
	_cleanup_free_ char *data_dir = cfg->data_dir ? strdup(cfg->data_dir) : fs_data_dir();
	if (materialize_kernel(k, tmp, data_dir, &spec, &err) < 0) {
		warn(ck, "kernel '%s' cannot be prepared here: %s", k->name, err.message);
		return;
	}
	/* The patches as they would be applied here (built-in series come from
	 * this checkout) against the ones that were. */
	json_object *pa = NULL;
	size_t n_here = 0;
	while (spec->patches && spec->patches[n_here])
		n_here++;
	if (json_object_object_get_ex(meta, "patches", &pa) &&
	    json_object_is_type(pa, json_type_array)) {
		size_t n_then = json_object_array_length(pa);
		if (n_then != n_here)
			warn(ck, "kernel '%s': %zu patches here, %zu when the result was made.",
			     k->name, n_here, n_then);
		for (size_t i = 0; i < n_here && i < n_then; i++) {
			json_object *p = json_object_array_get_idx(pa, i);
			char sha[HASH_HEX_LEN];
			if (hash_file_hex(spec->patches[i], sha, &err) < 0)
				continue;
			const char *then = json_member_string(p, "sha256");
			if (then && strcmp(then, sha) != 0)
				warn(ck,
				     "kernel '%s': patch %zu ('%.128s') differs from the one "
				     "the result was built with (sha256 %.12s..., here %.12s...).",
				     k->name, i + 1,
				     json_member_string(p, "name") ? json_member_string(p, "name")
								   : "?",
				     then, sha);
		}
	}
	char sha[HASH_HEX_LEN];
	if (spec->config && hash_file_hex(spec->config, sha, &err) == 0) {
		const char *then = json_member_string(meta, "config_sha256");
		if (then && strcmp(then, sha) != 0)
			warn(ck,
			     "kernel '%s': the config fragment differs (sha256 %.12s..., here "
			     "%.12s...).",
			     k->name, then, sha);
	}
	/* The cache key covers all of the above and the source's identity (a
	 * tarball's sha256, a git commit): the same key is the same kernel. */
	char key[65];
	const char *then_key = json_member_string(meta, "key");
	if (kbuild_key_in(cfg->cache_dir, spec, key, &err) < 0)
		warn(ck, "kernel '%s': cannot compute its cache key here: %s", k->name,
		     err.message);
	else if (then_key && strcmp(then_key, key) != 0)
		warn(ck,
		     "kernel '%s' will not be the same build (cache key %.12s..., here %.12s...): "
		     "its source, patches, config or compiler differ%s.",
		     k->name, then_key, key,
		     ck->warnings > before
			 ? ""
			 : "; the source tarball or git commit is the likely cause");
	else if (then_key)
		fprintf(stderr,
			"schedlab rerun: kernel '%s' has the same build inputs here (cache key "
			"%.12s...).\n",
			k->name, key);
	kernel_spec_free(spec);
}

/* Compares this host with result's; returns the number of warnings. */
static int check_host(json_object *result, const struct job *job, const struct runner_config *cfg)
{
	struct check ck = {0};
	json_object *env = NULL, *kernels = NULL;
	json_object_object_get_ex(result, "environment", &env);
	if (!env || !json_object_is_type(env, json_type_object))
		warn(&ck, "the result has no environment; cannot compare hosts.");
	else {
		compare(&ck, "the schedlab version", json_member_string(env, "schedlab_version"),
			SCHEDLAB_VERSION);
		struct sl_error err = {0};
		struct guest_host *h =
		    guest_host_open(cfg->libvirt_uri ? cfg->libvirt_uri : "qemu:///system", &err);
		char qemu[32], libvirt[32];
		if (!h || guest_host_versions(h, qemu, libvirt, &err) < 0)
			warn(&ck, "cannot read this host's QEMU and libvirt versions: %s",
			     err.message);
		else {
			compare(&ck, "the QEMU version", json_member_string(env, "qemu_version"),
				qemu);
			compare(&ck, "the libvirt version",
				json_member_string(env, "libvirt_version"), libvirt);
		}
		guest_host_free(h);
	}
	char *const gcc[] = {"gcc", "--version", NULL};
	_cleanup_free_ char *compiler = first_line(gcc);
	if (!compiler)
		warn(&ck, "cannot run 'gcc --version' here.");
	const char *tmpdir = getenv("TMPDIR");
	_cleanup_free_ char *tmp = NULL;
	if (asprintf(&tmp, "%s/schedlab-rerun.XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp") < 0 ||
	    !mkdtemp(tmp)) {
		warn(&ck, "cannot make a temporary directory; kernels not compared.");
		return ck.warnings;
	}
	json_object_object_get_ex(result, "kernels", &kernels);
	for (size_t i = 0; i < job->n_kernels; i++) {
		json_object *meta = NULL;
		if (kernels && json_object_is_type(kernels, json_type_object))
			json_object_object_get_ex(kernels, job->kernels[i].name, &meta);
		check_kernel(&ck, &job->kernels[i], meta, tmp, cfg, compiler);
	}
	fs_rm_rf(tmp, NULL);
	return ck.warnings;
}

/* Reads path as a result and returns it and its job (result.job, the
 * expanded spec, checked by job_from_expanded). */
static int read_result(const char *path, json_object **ret_result, struct job **ret_job,
		       struct sl_error *err)
{
	_cleanup_json_ json_object *result = NULL;
	int r = json_read_file_strict(path, RESULT_FILE_MAX, "result file", &result, err);
	if (r < 0)
		return r;
	json_object *job = NULL;
	const char *schema = json_member_string(result, "schema");
	if (!json_object_is_type(result, json_type_object) || !schema ||
	    strncmp(schema, "schedlab.result/", 16) != 0)
		return error_set(err, ERR_INVALID, EINVAL,
				 "'%s' is not a schedlab result (no \"schema\": "
				 "\"schedlab.result/v1\").",
				 path);
	if (!json_object_object_get_ex(result, "job", &job) ||
	    !json_object_is_type(job, json_type_object))
		return error_set_path(err, ERR_INVALID, "$.job",
				      "Result '%s' has no job to run again.", path);
	_cleanup_job_ struct job *typed = NULL;
	r = job_from_expanded(job, &typed, err);
	if (r < 0) {
		error_prefix(err, "The job of result '%s' cannot be run", path);
		return r;
	}
	*ret_job = TAKE_PTR(typed);
	*ret_result = TAKE_PTR(result);
	return 0;
}

int cli_rerun(int argc, char **argv)
{
	enum { OPT_DRY = CLI_OPT_FIRST_FREE };
	static const struct option table[] = {
	    CLI_RUN_OPTIONS,
	    {"dry-run", no_argument, NULL, OPT_DRY},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct cli_run_opts o = {0};
	bool dry = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qhj:", table, NULL)) != -1) {
		int r = cli_run_option("rerun", c, optarg, &o);
		if (r < 0)
			return EXIT_ERROR;
		if (r > 0)
			continue;
		switch (c) {
		case OPT_DRY:
			dry = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_PASS;
		default:
			usage(stderr);
			return EXIT_ERROR;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_ERROR;
	}
	const char *path = argv[optind];
	struct sl_error err = {0};
	_cleanup_json_ json_object *result = NULL;
	_cleanup_job_ struct job *typed = NULL;
	if (read_result(path, &result, &typed, &err) < 0) {
		fprintf(stderr, "schedlab rerun: %s%s%s\n", err.path[0] ? err.path : "",
			err.path[0] ? ": " : "", err.message);
		return EXIT_ERROR;
	}
	json_object *job = typed->spec;
	int warnings = check_host(result, typed, &o.cfg);
	fprintf(stderr, "schedlab rerun: %d difference%s from the host of '%s'.\n", warnings,
		warnings == 1 ? "" : "s", path);
	if (dry) {
		printf("%s\n", json_object_to_json_string_ext(
				   job, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		return EXIT_PASS;
	}
	return cli_run_expanded("rerun", job, &o);
}
