/* Running an expanded job from the CLI. See run_common.h. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/run_common.h"
#include "job/debian_bases.h"
#include "job/job.h"
#include "compare/result_model.h"
#include "report/junit.h"
#include "report/report.h"
#include "report/summary.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/parse.h"

struct run_progress {
	bool tty;
	double last_pct;
	char last_phase[16];
	json_object *(*lookup)(void *userdata, const char *run_key);
	void *lookup_userdata;
};

static json_object *on_lookup_run(void *userdata, const char *run_key)
{
	struct run_progress *st = userdata;
	return st->lookup(st->lookup_userdata, run_key);
}

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

char *cli_path_absolute(const char *path)
{
	if (!path || !*path) {
		errno = EINVAL;
		return NULL;
	}
	char cwd[PATH_MAX];
	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return NULL;
	_cleanup_free_ char *joined = path[0] == '/' ? strdup(path) : fs_path_join(cwd, path);
	if (!joined)
		return NULL;
	/* Fold the components in place: the output never outgrows the input. */
	char *out = malloc(strlen(joined) + 2);
	if (!out)
		return NULL;
	size_t n = 0;
	for (char *save = NULL, *c = strtok_r(joined, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		/* ".." stays: folding it would be wrong across a symlink. */
		if (strcmp(c, ".") == 0)
			continue;
		out[n++] = '/';
		size_t l = strlen(c);
		memcpy(out + n, c, l);
		n += l;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return out;
}

char *cli_default_job_dir(const char *name)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	_cleanup_free_ char *rel = NULL;
	if (asprintf(&rel, "build/jobs/%s-%s", name && *name ? name : "job", stamp) < 0)
		return NULL;
	return cli_path_absolute(rel);
}

/* JUnit and the report into their files (when asked), the summary on
 * stdout; the verdict's exit status, or EXIT_ERROR naming what failed. */
static int write_and_print(const char *cmd, const struct model_result *m, const char *output,
			   const char *junit_path, const char *report_path)
{
	struct sl_error err = {0};
	if (junit_path) {
		_cleanup_free_ char *xml = NULL;
		if (junit_from_model(m, &xml) < 0)
			error_set(&err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		if (!xml || fs_write_file_atomic(junit_path, xml, strlen(xml), &err) < 0) {
			fprintf(stderr, "schedlab %s: cannot write JUnit XML to '%s': %s\n", cmd,
				junit_path, err.message);
			return EXIT_ERROR;
		}
	}
	if (report_path) {
		_cleanup_free_ char *html = NULL;
		if (report_html_model(m, &html, &err) < 0 ||
		    fs_write_file_atomic(report_path, html, strlen(html), &err) < 0) {
			fprintf(stderr, "schedlab %s: cannot write the report to '%s': %s\n", cmd,
				report_path, err.message);
			return EXIT_ERROR;
		}
	}
	summary_print_model(stdout, m);
	printf("result: %s\n", output);
	return summary_exit_code_model(m);
}

/* *ret = the absolute form of path (NULL stays NULL); a message on failure. */
static int absolute_or_report(const char *cmd, const char *what, const char *path, char **ret)
{
	*ret = NULL;
	if (!path)
		return 0;
	*ret = cli_path_absolute(path);
	if (!*ret) {
		fprintf(stderr, "schedlab %s: cannot make the %s '%s' absolute: %s.\n", cmd, what,
			path, strerror(errno));
		return -1;
	}
	return 0;
}

int cli_run_in(const struct cli_run_ctx *ctx, json_object *expanded, const char *job_dir,
	       json_object *(*lookup_run)(void *userdata, const char *run_key), void *userdata,
	       json_object **ret_result)
{
	struct sl_error err = {0};
	struct run_progress st = {.tty = isatty(STDERR_FILENO), .last_pct = -100};
	struct runner_hooks hooks = {
	    .userdata = &st,
	    .progress = ctx->quiet ? NULL : on_progress,
	};
	/* The runner gives every hook one userdata: the progress state. The
	 * lookup goes through it. */
	st.lookup = lookup_run;
	st.lookup_userdata = userdata;
	if (lookup_run)
		hooks.lookup_run = on_lookup_run;
	if (runner_run_job(&ctx->cfg, expanded, job_dir, &hooks, ret_result, &err) < 0) {
		/* a refused variant (sched names, sched_ext) names its field */
		fprintf(stderr, "schedlab %s: %s%s%s\n", ctx->cmd, err.path,
			err.path[0] ? ": " : "", err.message);
		fprintf(stderr, "schedlab %s: logs are in '%s'.\n", ctx->cmd, job_dir);
		return -1;
	}
	return 0;
}

int cli_run_expanded(const char *cmd, json_object *expanded, const struct cli_run_opts *o)
{
	return cli_run_expanded_then(cmd, expanded, o, NULL, NULL);
}

int cli_run_expanded_then(const char *cmd, json_object *expanded, const struct cli_run_opts *o,
			  cli_result_fn then, void *userdata)
{
	struct sl_error err = {0};
	/* Every path is fixed before anything runs: the builds run `patch`
	 * inside the source tree, and a relative job dir would point there. */
	_cleanup_free_ char *output = NULL, *junit_path = NULL, *report_path = NULL,
			    *job_dir = NULL, *cache_dir = NULL, *data_dir = NULL;
	if (absolute_or_report(cmd, "output file", o->output, &output) < 0 ||
	    absolute_or_report(cmd, "JUnit file", o->junit_path, &junit_path) < 0 ||
	    absolute_or_report(cmd, "report file", o->report_path, &report_path) < 0 ||
	    absolute_or_report(cmd, "job directory", o->job_dir, &job_dir) < 0 ||
	    absolute_or_report(cmd, "cache directory", o->cfg.cache_dir, &cache_dir) < 0 ||
	    absolute_or_report(cmd, "data directory", o->cfg.data_dir, &data_dir) < 0)
		return EXIT_ERROR;
	if (!job_dir) {
		json_object *name = NULL;
		json_object_object_get_ex(expanded, "name", &name);
		job_dir = cli_default_job_dir(json_object_get_string(name));
		if (!job_dir) {
			fprintf(stderr, "schedlab %s: cannot name the job directory: %s.\n", cmd,
				strerror(errno));
			return EXIT_ERROR;
		}
	}
	_cleanup_free_ char *default_out = fs_path_join(job_dir, "result.json");
	if (!output)
		output = TAKE_PTR(default_out);

	struct cli_run_ctx ctx = {.cmd = cmd, .job_dir = job_dir, .cfg = o->cfg, .quiet = o->quiet};
	ctx.cfg.cache_dir = cache_dir;
	ctx.cfg.data_dir = data_dir;
	_cleanup_json_ json_object *result = NULL;
	if (cli_run_in(&ctx, expanded, job_dir, NULL, NULL, &result) < 0)
		return EXIT_ERROR;
	if (then && then(userdata, &ctx, result) < 0)
		return EXIT_ERROR;
	const char *js = json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (fs_write_file_atomic(output, js, strlen(js), &err) < 0) {
		fprintf(stderr, "schedlab %s: %s\n", cmd, err.message);
		return EXIT_ERROR;
	}
	/* One parse for every output: JUnit, the report, the summary and the
	 * exit status all read the same typed result. */
	struct model_result m = {0};
	if (model_result_parse(result, &m, &err) < 0) {
		fprintf(stderr, "schedlab %s: %s\n", cmd, err.message);
		return EXIT_ERROR;
	}
	int code = write_and_print(cmd, &m, output, junit_path, report_path);
	model_result_free(&m);
	return code;
}

int cli_run_option(const char *cmd, int c, const char *arg, struct cli_run_opts *o)
{
	long jobs = 0;
	switch (c) {
	case 'o':
		o->output = arg;
		return 1;
	case 'q':
		o->quiet = true;
		return 1;
	case CLI_OPT_JOB_DIR:
		o->job_dir = arg;
		return 1;
	case CLI_OPT_CACHE_DIR:
		o->cfg.cache_dir = arg;
		return 1;
	case CLI_OPT_URI:
		o->cfg.libvirt_uri = arg;
		return 1;
	case CLI_OPT_JUNIT:
		o->junit_path = arg;
		return 1;
	case CLI_OPT_REPORT:
		o->report_path = arg;
		return 1;
	case CLI_OPT_ACCEL:
		if (strcmp(arg, "auto") && strcmp(arg, "kvm") && strcmp(arg, "tcg")) {
			fprintf(stderr,
				"schedlab %s: --accel must be auto, kvm or tcg, not '%s'.\n", cmd,
				arg);
			return -1;
		}
		o->cfg.accel = arg;
		return 1;
	case CLI_OPT_NO_SANDBOX:
		o->cfg.build_no_sandbox = true;
		return 1;
	case CLI_OPT_BUILD_TIMEOUT:
		if (parse_int(arg, 1, 86400, &jobs) < 0) {
			fprintf(stderr, "schedlab %s: --build-timeout '%s' is not 1..86400 s.\n",
				cmd, arg);
			return -1;
		}
		o->cfg.build_timeout_s = (int)jobs;
		return 1;
	case CLI_OPT_BUILD_SLOTS:
		if (parse_int(arg, 1, 8, &jobs) < 0) {
			fprintf(stderr, "schedlab %s: --build-slots '%s' is not 1..8.\n", cmd, arg);
			return -1;
		}
		o->cfg.build_slots = (int)jobs;
		return 1;
	case 'j':
		if (parse_int(arg, 1, 1024, &jobs) < 0) {
			fprintf(stderr, "schedlab %s: --jobs '%s' is not 1..1024.\n", cmd, arg);
			return -1;
		}
		o->cfg.build_jobs = (int)jobs;
		return 1;
	default:
		return 0;
	}
}

/* {key: name}: a built-in series or config under guest-kernel/. */
static json_object *builtin_file(const char *key, const char *name)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, key, json_object_new_string(name));
	return o;
}

/* {"path": rel} items made absolute against dir, in place. */
static int paths_absolute(json_object *item, const char *dir)
{
	json_object *p = NULL;
	if (!json_object_is_type(item, json_type_object) ||
	    !json_object_object_get_ex(item, "path", &p) ||
	    !json_object_is_type(p, json_type_string) || json_object_get_string(p)[0] == '/')
		return 0;
	_cleanup_free_ char *joined = fs_path_join(dir, json_object_get_string(p));
	_cleanup_free_ char *abs = cli_path_absolute(joined);
	if (!abs)
		return -ENOMEM;
	json_object_object_add(item, "path", json_object_new_string(abs));
	return 0;
}

int cli_base_from_arg(const char *arg, json_object **ret, struct sl_error *err)
{
	_cleanup_json_ json_object *k = NULL;
	if (!arg || strcmp(arg, "builtin") == 0) {
		k = json_object_new_object();
		json_object_object_add(k, "source",
				       json_object_new_string("debian:linux-source-6.1"));
		json_object *patches = json_object_new_array();
		json_object_array_add(patches, builtin_file("series", "linux-6.1"));
		json_object_object_add(k, "patches", patches);
		json_object_object_add(k, "config", builtin_file("builtin", "linux-6.1"));
	} else if (strncmp(arg, "debian:", 7) == 0 || strncmp(arg, "tarball:", 8) == 0 ||
		   strncmp(arg, "git:", 4) == 0) {
		if (strncmp(arg, "git:", 4) == 0 && !strchr(arg + 4, '@'))
			return error_set_path(err, ERR_INVALID, "--base",
					      "--base '%s' must look like 'git:PATH@REF'.", arg);
		_cleanup_free_ char *src = job_source_absolute(arg, NULL);
		if (!src)
			return error_set(err, ERR_INTERNAL, errno,
					 "Cannot resolve --base '%s': %s.", arg, strerror(errno));
		if (strncmp(src, "tarball:", 8) == 0 && !fs_exists(src + 8))
			return error_set_path(err, ERR_NOT_FOUND, "--base",
					      "--base tarball '%s' does not exist.", src + 8);
		k = json_object_new_object();
		json_object_object_add(k, "source", json_object_new_string(src));
		json_object_object_add(k, "patches", json_object_new_array());
		/* debian:linux-source-6.12 gets guest-kernel/linux-6.12/'s fragment */
		json_object_object_add(k, "config",
				       builtin_file("builtin", debian_base_default_config(src)));
	} else {
		size_t n = strlen(arg);
		if (n < 5 || strcmp(arg + n - 5, ".json") != 0)
			return error_set_path(
			    err, ERR_INVALID, "--base",
			    "--base '%s' is not 'builtin', 'debian:PACKAGE', "
			    "'tarball:PATH', 'git:PATH@REF' or a FILE.json kernel.",
			    arg);
		int r = json_read_file_strict(arg, 1 << 20, "--base file", &k, err);
		if (r < 0)
			return r;
		if (!json_object_is_type(k, json_type_object))
			return error_set_path(err, ERR_INVALID, "--base",
					      "--base file '%s' must hold a kernel object "
					      "{\"source\", \"patches\", \"config\"}.",
					      arg);
		_cleanup_free_ char *copy = strdup(arg);
		_cleanup_free_ char *dir = copy ? cli_path_absolute(dirname(copy)) : NULL;
		if (!dir)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		json_object *patches = NULL, *config = NULL;
		if (json_object_object_get_ex(k, "patches", &patches) &&
		    json_object_is_type(patches, json_type_array))
			for (size_t i = 0; i < json_object_array_length(patches); i++)
				if (paths_absolute(json_object_array_get_idx(patches, i), dir) < 0)
					return error_set(err, ERR_INTERNAL, ENOMEM,
							 "Out of memory.");
		if (json_object_object_get_ex(k, "config", &config) &&
		    paths_absolute(config, dir) < 0)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		json_object *src = NULL;
		if (json_object_object_get_ex(k, "source", &src) &&
		    json_object_is_type(src, json_type_string)) {
			char *abs = job_source_absolute(json_object_get_string(src), dir);
			if (!abs)
				return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
			json_object_object_add(k, "source", json_object_new_string(abs));
			free(abs);
		}
	}
	*ret = TAKE_PTR(k);
	return 0;
}
