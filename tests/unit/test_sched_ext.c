/* sched_ext variants (docs/sched-ext.md): the scheduler allow-list and its
 * option rules (service/job/sched_ext.c), a job naming one (schema and
 * expansion, errors naming the field), the plan the agent gets
 * (run/run_plan.c) and what a run records from the agent's summary
 * (run/run_record.c): enabled and named, failed to load, ejected. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers/job_fixture.h"
#include "job/sched_ext.h"
#include "job/sched_ext_source.h"
#include "kernel/scx_user_build.h"
#include "run/run_plan.h"
#include "run/run_record.h"

static json_object *get(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

static int check(const char *scx_json, int vcpus, struct sl_error *err)
{
	json_object *o = json_tokener_parse(scx_json);
	assert_non_null(o);
	*err = (struct sl_error){0};
	int r = sched_ext_check(o, "$.variants.v.sched_ext", vcpus, err);
	json_object_put(o);
	return r;
}

static void ok(const char *scx_json)
{
	struct sl_error err;
	if (check(scx_json, 2, &err) < 0)
		fail_msg("%s refused: %s", scx_json, err.message);
}

static void bad(const char *scx_json, const char *path, const char *why)
{
	struct sl_error err;
	if (check(scx_json, 2, &err) == 0)
		fail_msg("%s accepted", scx_json);
	assert_int_equal(err.kind, ERR_INVALID);
	if (strcmp(err.path, path) != 0)
		fail_msg("%s: path '%s', expected '%s'", scx_json, err.path, path);
	if (!strstr(err.message, why))
		fail_msg("%s: '%s' does not say '%s'", scx_json, err.message, why);
}

static void test_args(void **state)
{
	(void)state;
	const char *p = "$.variants.v.sched_ext";
	ok("{\"scheduler\":\"scx_simple\"}");
	ok("{\"scheduler\":\"scx_simple\",\"args\":[\"-f\"]}");
	ok("{\"scheduler\":\"scx_central\",\"args\":[\"-s\",\"20000\",\"-c1\"]}");
	ok("{\"scheduler\":\"scx_qmap\",\"args\":[\"-e\",\"100\",\"-b\",\"8\",\"-H\"]}");
	ok("{\"scheduler\":\"scx_flatcg\",\"args\":[\"-f\",\"-s5000\"]}");
	bad("{\"scheduler\":\"scx_rustland\"}", "$.variants.v.sched_ext.scheduler",
	    "not one schedlab builds");
	bad("{\"scheduler\":\"scx_simple\",\"args\":[\"-v\"]}", "$.variants.v.sched_ext.args[0]",
	    "not one schedlab accepts");
	bad("{\"scheduler\":\"scx_simple\",\"args\":[\"-fv\"]}", "$.variants.v.sched_ext.args[0]",
	    "not one");
	bad("{\"scheduler\":\"scx_qmap\",\"args\":[\"-p\"]}", "$.variants.v.sched_ext.args[0]",
	    "not one");
	bad("{\"scheduler\":\"scx_simple\",\"args\":[\"-f\",\"-f\"]}",
	    "$.variants.v.sched_ext.args[1]", "twice");
	bad("{\"scheduler\":\"scx_central\",\"args\":[\"-c\",\"2\"]}",
	    "$.variants.v.sched_ext.args[1]", "from 0 to 1");
	bad("{\"scheduler\":\"scx_central\",\"args\":[\"-s\"]}", "$.variants.v.sched_ext.args[0]",
	    "needs a number");
	bad("{\"scheduler\":\"scx_central\",\"args\":[\"-s\",\"0\"]}",
	    "$.variants.v.sched_ext.args[1]", "from 1 to 1000000");
	bad("{\"scheduler\":\"scx_central\",\"args\":[\"-s\",\"-5\"]}",
	    "$.variants.v.sched_ext.args[1]", "whole number");
	bad("{\"scheduler\":\"scx_simple\",\"args\":[\"extra\"]}", "$.variants.v.sched_ext.args[0]",
	    "not one");
	(void)p;
	assert_true(sched_ext_scheduler_known("scx_central"));
	assert_false(sched_ext_scheduler_known("central"));
}

#define SCX_JOB(scx)                                                                               \
	"{\"name\":\"t\",\"kernels\":" JOB_FIXTURE_KERNELS ","                                     \
	"\"guest\":{\"vcpus\":2},"                                                                 \
	"\"variants\":{\"baseline\":{\"kernel\":\"k\"},\"scx\":{\"kernel\":\"k\","                 \
	"\"sched_ext\":" scx "}},"                                                                 \
	"\"workloads\":[{\"tool\":\"cyclictest\",\"args\":[\"-D\",\"5\"]}]}"

static void expect_job_error(const char *text, const char *path, const char *why)
{
	json_object *spec = json_tokener_parse(text);
	assert_non_null(spec);
	struct job *job = NULL;
	struct sl_error err = {0};
	int r = job_expand(spec, JOB_ORIGIN_SERVICE, NULL, job_default_limits(), &job, &err);
	json_object_put(spec);
	if (r == 0) {
		job_free(job);
		fail_msg("%s accepted", text);
	}
	if (!strstr(err.path, path) || !strstr(err.message, why))
		fail_msg("%s: error at '%s': '%s' (expected '%s': '%s')", text, err.path,
			 err.message, path, why);
}

static void test_job_and_plan(void **state)
{
	(void)state;
	struct job *job =
	    job_fixture(SCX_JOB("{\"scheduler\":\"scx_central\",\"args\":[\"-c\",\"1\"]}"));
	assert_non_null(job);
	const struct job_variant *v = job_find_variant(job, "scx");
	assert_string_equal(v->scx_scheduler, "scx_central");
	assert_int_equal(v->n_scx_args, 2);
	assert_null(job_find_variant(job, "baseline")->scx_scheduler);

	json_object *plan = NULL;
	struct sl_error err = {0};
	assert_int_equal(plan_build(job, "scx", "r1", &plan, &err), 0);
	json_object *scx = get(plan, "sched_ext");
	assert_string_equal(json_object_get_string(get(scx, "scheduler")), "scx_central");
	json_object *argv = get(scx, "argv");
	assert_int_equal(json_object_array_length(argv), 3);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(argv, 0)),
			    SCHED_EXT_GUEST_DIR "/k/scx_central");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(argv, 2)), "1");
	json_object_put(plan);
	assert_int_equal(plan_build(job, "baseline", "r2", &plan, &err), 0);
	assert_null(get(plan, "sched_ext"));
	json_object_put(plan);
	job_free(job);

	/* the schema's enum, then the option rules, each naming the field */
	expect_job_error(SCX_JOB("{\"scheduler\":\"scx_nope\"}"),
			 "$.variants.scx.sched_ext.scheduler", "is not one of 'scx_simple'");
	expect_job_error(SCX_JOB("{\"args\":[]}"), "$.variants.scx.sched_ext.scheduler",
			 "has no member 'scheduler'");
	expect_job_error(SCX_JOB("{\"scheduler\":\"scx_central\",\"args\":[\"-c\",\"5\"]}"),
			 "$.variants.scx.sched_ext.args[1]", "from 0 to 1");
	expect_job_error(SCX_JOB("{\"scheduler\":\"scx_simple\",\"args\":[\"-v\"]}"),
			 "$.variants.scx.sched_ext.args[0]", "not one schedlab accepts");
}

#define OWN_SRC(name, bpf, loader)                                                                 \
	"{\"source\":{\"name\":\"" name "\",\"bpf\":\"" bpf "\",\"loader\":\"" loader "\"}"

/* A user's own scheduler: the source object's checks, each naming its
 * field, the plan (its loader under a content tag, "own": true), the tag and
 * the build key. */
static void test_own_source(void **state)
{
	(void)state;
	const char *p = "$.variants.v.sched_ext";
	ok(OWN_SRC("scx_mine", "int x;", "int main(void){}") "}");
	ok(OWN_SRC("gfifo2", "a", "b") ",\"args\":[\"-s\",\"5000\",\"--verbose=1\"]}");
	bad(OWN_SRC("Mine", "a", "b") "}", "$.variants.v.sched_ext.source.name", "[a-z0-9_]");
	bad(OWN_SRC("1abc", "a", "b") "}", "$.variants.v.sched_ext.source.name", "letter");
	bad(OWN_SRC("a_name_that_is_far_too_long_for_it_x", "a", "b") "}",
	    "$.variants.v.sched_ext.source.name", "1 to 32");
	bad(OWN_SRC("scx_simple", "a", "b") "}", "$.variants.v.sched_ext.source.name",
	    "one of the tree's examples");
	bad("{\"source\":{\"name\":\"mine\",\"loader\":\"b\"}}",
	    "$.variants.v.sched_ext.source.bpf", "needs");
	bad("{\"source\":{\"name\":\"mine\",\"bpf\":\"a\"}}",
	    "$.variants.v.sched_ext.source.loader", "needs");
	bad(OWN_SRC("mine", "", "b") "}", "$.variants.v.sched_ext.source.bpf", "empty");
	bad(OWN_SRC("mine", "a\\u0000b", "b") "}", "$.variants.v.sched_ext.source.bpf", "NUL");
	bad(OWN_SRC("mine", "a", "b") ",\"args\":[\"two words\"]}",
	    "$.variants.v.sched_ext.args[0]", "printable ASCII");
	bad(OWN_SRC("mine", "a", "b") ",\"args\":[\"\"]}", "$.variants.v.sched_ext.args[0]",
	    "printable");
	bad(OWN_SRC("mine", "a", "b") ",\"scheduler\":\"scx_simple\"}", p, "not both");
	/* the size bound */
	char *big = malloc(SCHED_EXT_SOURCE_MAX + 200);
	assert_non_null(big);
	int n = snprintf(big, 100, "{\"source\":{\"name\":\"mine\",\"loader\":\"b\",\"bpf\":\"");
	memset(big + n, 'x', SCHED_EXT_SOURCE_MAX + 1);
	strcpy(big + n + SCHED_EXT_SOURCE_MAX + 1, "\"}}");
	struct sl_error err;
	assert_true(check(big, 2, &err) < 0);
	assert_string_equal(err.path, "$.variants.v.sched_ext.source.bpf");
	assert_int_equal(err.kind, ERR_TOO_LARGE);
	free(big);

	/* the job: its schema takes it, the service refuses paths */
	struct job *job = job_fixture(
	    SCX_JOB(OWN_SRC("scx_mine", "int x;", "int main(void){}") ",\"args\":[\"-s\",\"5\"]}"));
	assert_non_null(job);
	const struct job_variant *v = job_find_variant(job, "scx");
	assert_string_equal(v->scx_scheduler, "scx_mine");
	assert_string_equal(v->scx_bpf, "int x;");
	assert_string_equal(v->scx_loader, "int main(void){}");
	json_object *plan = NULL;
	assert_int_equal(plan_build(job, "scx", "r1", &plan, &err), 0);
	json_object *scx = get(plan, "sched_ext");
	assert_string_equal(json_object_get_string(get(scx, "scheduler")), "scx_mine");
	assert_true(json_object_get_boolean(get(scx, "own")));
	char tag[SCHED_EXT_TAG_LEN + 1], want[256];
	sched_ext_source_tag("scx_mine", "int x;", "int main(void){}", tag);
	snprintf(want, sizeof(want), SCHED_EXT_GUEST_DIR "/k/%s/scx_mine", tag);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(get(scx, "argv"), 0)),
			    want);
	json_object_put(plan);
	job_free(job);
	expect_job_error(SCX_JOB("{\"source\":{\"name\":\"mine\",\"bpf_path\":\"a.bpf.c\","
				 "\"loader\":\"b\"}}"),
			 "$.variants.scx.sched_ext.source.bpf_path", "not accepted by the service");
	expect_job_error(SCX_JOB("{\"source\":{\"name\":\"mine\",\"bpf\":\"a\",\"loader\":\"b\","
				 "\"extra\":1}}"),
			 "$.variants.scx.sched_ext.source.extra",
			 "is not an allowed member of $.variants.scx.sched_ext.source");

	/* the CLI: paths relative to the job file's directory, read and inlined */
	char dir[] = "/tmp/test_sched_ext.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char fb[300], fl[300];
	snprintf(fb, sizeof(fb), "%s/mine.bpf.c", dir);
	snprintf(fl, sizeof(fl), "%s/mine.c", dir);
	FILE *f = fopen(fb, "w");
	assert_non_null(f);
	fputs("/* bpf */\n", f);
	fclose(f);
	f = fopen(fl, "w");
	assert_non_null(f);
	fputs("/* loader */\n", f);
	fclose(f);
	const char *cli = SCX_JOB("{\"source\":{\"name\":\"mine\",\"bpf_path\":\"mine.bpf.c\","
				  "\"loader_path\":\"mine.c\"}}");
	json_object *spec = json_tokener_parse(cli);
	job = NULL;
	assert_int_equal(job_expand(spec, JOB_ORIGIN_CLI, dir, job_default_limits(), &job, &err),
			 0);
	v = job_find_variant(job, "scx");
	assert_string_equal(v->scx_bpf, "/* bpf */\n");
	assert_string_equal(v->scx_loader, "/* loader */\n");
	job_free(job);
	json_object_put(spec);
	/* a missing file names its field */
	spec =
	    json_tokener_parse(SCX_JOB("{\"source\":{\"name\":\"mine\",\"bpf_path\":\"nope.bpf.c\","
				       "\"loader_path\":\"mine.c\"}}"));
	job = NULL;
	assert_true(job_expand(spec, JOB_ORIGIN_CLI, dir, job_default_limits(), &job, &err) < 0);
	assert_string_equal(err.path, "$.variants.scx.sched_ext.source.bpf_path");
	json_object_put(spec);
	unlink(fb);
	unlink(fl);
	rmdir(dir);

	/* the tag: content-addressed, each input counts */
	char t2[SCHED_EXT_TAG_LEN + 1];
	sched_ext_source_tag("scx_mine", "int x;", "int main(void){}", t2);
	assert_string_equal(tag, t2);
	sched_ext_source_tag("scx_mine", "int x; ", "int main(void){}", t2);
	assert_string_not_equal(tag, t2);
	sched_ext_source_tag("scx_mine", "int x;i", "nt main(void){}", t2);
	assert_string_not_equal(tag, t2);

	/* the build key: every input counts */
	struct scx_user_source a = {"mine", "bpf", "loader"};
	char k0[HASH_HEX_LEN], k1[HASH_HEX_LEN];
	scx_user_key("kkey", "clang 16", &a, k0);
	scx_user_key("kkey", "clang 16", &a, k1);
	assert_string_equal(k0, k1);
	scx_user_key("kkey2", "clang 16", &a, k1);
	assert_string_not_equal(k0, k1);
	scx_user_key("kkey", "clang 16.0.6", &a, k1);
	assert_string_not_equal(k0, k1);
	struct scx_user_source b = {"mine", "bpf ", "loader"}, c = {"mine", "bpf", "loader\n"},
			       d = {"mine2", "bpf", "loader"};
	scx_user_key("kkey", "clang 16", &b, k1);
	assert_string_not_equal(k0, k1);
	scx_user_key("kkey", "clang 16", &c, k1);
	assert_string_not_equal(k0, k1);
	scx_user_key("kkey", "clang 16", &d, k1);
	assert_string_not_equal(k0, k1);
}

/* Which of the user's files a failed build names (docs/sched-ext.md, "Your
 * own scheduler"): only clang's error in NAME.bpf.c or NAME.c is the job's
 * field; the skeleton, the object, the tree's headers and failures before
 * any compile stay the build's. */
static void test_build_error_file(void **state)
{
	(void)state;
	const char *name = "scx_mine";
	assert_int_equal(sched_ext_source_error_file(
			     name, "scx_mine.bpf.c:12:3: error: use of undeclared identifier 'x'\n"
				   "   12 |   x = 1;"),
			 SCHED_EXT_FILE_BPF);
	assert_int_equal(
	    sched_ext_source_error_file(name, "scx_mine.c:40:9: error: implicit declaration"),
	    SCHED_EXT_FILE_LOADER);
	/* the skeleton and the object start with NAME too, and are not NAME.c */
	assert_int_equal(sched_ext_source_error_file(
			     name, "scx_mine.bpf.skel.h:88:1: error: unknown type name 'x'"),
			 SCHED_EXT_FILE_NONE);
	assert_int_equal(sched_ext_source_error_file(
			     name, "<build>/out/build/obj/sched_ext/scx_mine.bpf.skel.h:88:1: "
				   "error: unknown type name 'x'"),
			 SCHED_EXT_FILE_NONE);
	assert_int_equal(sched_ext_source_error_file(name, "scx_mine.bpf.o: error: bad ELF"),
			 SCHED_EXT_FILE_NONE);
	/* another scheduler whose name starts with NAME, a tree's header */
	assert_int_equal(sched_ext_source_error_file(name, "scx_mine2.c:1:1: error: x"),
			 SCHED_EXT_FILE_NONE);
	assert_int_equal(
	    sched_ext_source_error_file(name, "include/scx/common.bpf.h:5:1: error: x"),
	    SCHED_EXT_FILE_NONE);
	/* a failure that is no compile error: no first error line, or make's own */
	assert_int_equal(sched_ext_source_error_file(name, NULL), SCHED_EXT_FILE_NONE);
	assert_int_equal(sched_ext_source_error_file(name, ""), SCHED_EXT_FILE_NONE);
	assert_int_equal(
	    sched_ext_source_error_file(name, "error: no vmlinux with BTF in the kernel image"),
	    SCHED_EXT_FILE_NONE);

	/* the builder: a failure before make (here clang-16 missing from PATH)
	 * is ERR_BUILD and names no file, whatever the caller had */
	char empty[] = "/tmp/test_sched_ext_path.XXXXXX";
	assert_non_null(mkdtemp(empty));
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	setenv("PATH", empty, 1);
	struct kbuild_opts o = {.log_fd = -1};
	struct kbuild_artifact art = {0};
	struct scx_user_source src = {name, "int x;", "int main(void){}"};
	enum sched_ext_source_file file = SCHED_EXT_FILE_BPF;
	char *loader = NULL;
	struct sl_error err = {0};
	int r = scx_user_build(&o, NULL, &art, &src, &loader, &file, &err);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
	rmdir(empty);
	assert_true(r < 0);
	assert_null(loader);
	assert_int_equal(err.kind, ERR_BUILD);
	assert_non_null(strstr(err.message, "clang-16"));
	assert_int_equal(file, SCHED_EXT_FILE_NONE);
}

static json_object *frames_with(const char *scx_json)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "[{\"kind\":\"workload\",\"payload\":{\"index\":0,\"exit_code\":0,"
		 "\"timed_out\":false,\"stdout\":\"\",\"stderr\":\"\",\"json_file\":null}},"
		 "{\"kind\":\"summary\",\"payload\":{\"uname\":\"6.12\",\"features\":"
		 "{\"applied\":[],\"errors\":[]},\"errors\":[]%s%s}}]",
		 scx_json ? ",\"sched_ext\":" : "", scx_json ? scx_json : "");
	json_object *f = json_tokener_parse(text);
	assert_non_null(f);
	return f;
}

static json_object *record(struct job *job, const char *key, const char *scx_json)
{
	json_object *run = json_object_new_object();
	json_object_object_add(run, "key", json_object_new_string(key));
	json_object_object_add(run, "status", json_object_new_string("ok"));
	json_object *frames = frames_with(scx_json);
	run_record_fill(run, job, frames);
	json_object_put(frames);
	return run;
}

static void test_run_record(void **state)
{
	(void)state;
	struct job *job = job_fixture(SCX_JOB("{\"scheduler\":\"scx_simple\"}"));
	assert_non_null(job);

	/* enabled and named: the run keeps what was read back */
	json_object *run = record(job, "scx#0",
				  "{\"scheduler\":\"scx_simple\",\"state\":\"enabled\","
				  "\"ops\":\"simple\",\"state_end\":\"enabled\",\"enable_ms\":812,"
				  "\"exit_reason\":\"unregistered from user space\","
				  "\"loader_exit\":\"exit 0\",\"error\":null}");
	json_object *scx = get(run, "sched_ext");
	assert_string_equal(json_object_get_string(get(scx, "state")), "enabled");
	assert_string_equal(json_object_get_string(get(scx, "ops")), "simple");
	assert_string_equal(json_object_get_string(get(scx, "exit_reason")),
			    "unregistered from user space");
	/* the workload has no rt-tests output here: the run fails for that, not sched_ext */
	assert_string_not_equal(json_object_get_string(get(run, "status")), "sched_ext_failed");
	json_object_put(run);

	/* ejected during the run: a status of its own with the kernel's reason */
	run = record(job, "scx#1",
		     "{\"scheduler\":\"scx_simple\",\"state\":\"enabled\",\"ops\":\"simple\","
		     "\"state_end\":\"disabled\",\"exit_reason\":\"runnable task stall (watchdog "
		     "failed to check in for 30000ms)\",\"error\":\"sched_ext ejected the "
		     "scheduler 'scx_simple' during the run (state 'disabled' after the "
		     "workloads): runnable task stall (watchdog failed to check in for "
		     "30000ms)\"}");
	assert_string_equal(json_object_get_string(get(run, "status")), "sched_ext_failed");
	assert_non_null(strstr(json_object_get_string(get(run, "reason")), "runnable task stall"));
	assert_string_equal(json_object_get_string(get(get(run, "sched_ext"), "state_end")),
			    "disabled");
	json_object_put(run);

	/* the summary has no sched_ext section though the variant asked for one */
	run = record(job, "scx#2", NULL);
	assert_string_equal(json_object_get_string(get(run, "status")), "sched_ext_failed");
	assert_non_null(strstr(json_object_get_string(get(run, "reason")), "did not start"));
	json_object_put(run);

	/* the baseline runs no scheduler and records none */
	run = record(job, "baseline#0", NULL);
	assert_null(get(run, "sched_ext"));
	json_object_put(run);
	job_free(job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_args),
	    cmocka_unit_test(test_job_and_plan),
	    cmocka_unit_test(test_run_record),
	    cmocka_unit_test(test_own_source),
	    cmocka_unit_test(test_build_error_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
