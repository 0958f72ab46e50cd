/* job_expand_json(): the examples, the CI shorthand, defaults, and the errors
 * that name a JSON path; job_expand() and job_from_expanded(): the typed job
 * built from them. Uses the real results-schema/job.schema.json. */
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "job/job.h"
#include "job/job-internal.h"
#include "util/fs.h"

static json_object *field(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

static json_object *load_example(const char *name)
{
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *ex = fs_path_join(root, "examples");
	_cleanup_free_ char *path = fs_path_join(ex, name);
	json_object *o = json_object_from_file(path);
	assert_non_null(o);
	return o;
}

static void expect_error(const char *text, enum job_origin origin, const char *path,
			 const char *needle)
{
	json_object *spec = json_tokener_parse(text);
	assert_non_null(spec);
	json_object *out = NULL;
	struct sl_error err = {0};
	int r = job_expand_json(spec, origin, ".", NULL, &out, &err);
	if (r == 0)
		fail_msg("expected an error at %s for %s", path, text);
	assert_null(out);
	if (strcmp(err.path, path) != 0)
		fail_msg("error path '%s' (message '%s'), expected '%s'", err.path, err.message,
			 path);
	if (needle && !strstr(err.message, needle))
		fail_msg("message '%s' lacks '%s'", err.message, needle);
	json_object_put(spec);
}

#define KERNEL "{\"source\":\"debian:linux-source-6.1\",\"patches\":[{\"series\":\"linux-6.1\"}]}"
#define WL     "[{\"tool\":\"rt-migrate-test\",\"args\":[\"-p\",\"60\",\"3\"]}]"
#define JOB(variants, extra)                                                                       \
	"{\"name\":\"t\",\"kernels\":{\"k\":" KERNEL "},\"variants\":" variants                    \
	",\"baseline\":\"a\",\"workloads\":" WL extra "}"

/* The job text expands as a service job (the test fails naming the field
 * and reason otherwise); the caller frees it. */
static struct job *expand_text(const char *text)
{
	json_object *spec = json_tokener_parse(text);
	assert_non_null(spec);
	struct job *job = NULL;
	struct sl_error err = {0};
	if (job_expand(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &job, &err) < 0)
		fail_msg("%s: %s", err.path, err.message);
	json_object_put(spec);
	return job;
}

static void test_examples_expand(void **state)
{
	(void)state;
	const char *names[] = {"seed-reproduction.json", "seed-reproduction-short.json",
			       "ablation.json", "ci-shorthand.json"};
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		json_object *spec = load_example(names[i]);
		json_object *out = NULL;
		struct sl_error err = {0};
		if (job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &out, &err) < 0)
			fail_msg("%s: %s: %s", names[i], err.path, err.message);
		assert_non_null(field(out, "variants"));
		assert_non_null(field(out, "baseline"));
		assert_int_equal(json_object_get_int(field(field(out, "guest"), "vcpus")), 2);
		json_object_put(out);
		json_object_put(spec);
	}
}

static void test_shorthand_and_defaults(void **state)
{
	(void)state;
	json_object *spec = json_tokener_parse(
	    "{\"name\":\"ci\",\"base\":" KERNEL ",\"patches\":[{\"name\":\"fix.patch\","
	    "\"content\":\"--- a/x\\n+++ b/x\\n\"}],\"workloads\":" WL "}");
	json_object *out = NULL;
	struct sl_error err = {0};
	assert_int_equal(job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &out, &err), 0);
	json_object *kernels = field(out, "kernels");
	assert_int_equal(json_object_array_length(field(field(kernels, "base"), "patches")), 1);
	json_object *pp = field(field(kernels, "patched"), "patches");
	assert_int_equal(json_object_array_length(pp), 2);
	assert_string_equal(json_object_get_string(field(json_object_array_get_idx(pp, 1), "name")),
			    "fix.patch");
	assert_string_equal(json_object_get_string(field(out, "baseline")), "baseline");
	assert_string_equal(
	    json_object_get_string(field(field(field(out, "variants"), "patched"), "kernel")),
	    "patched");
	json_object *w = json_object_array_get_idx(field(out, "workloads"), 0);
	assert_string_equal(json_object_get_string(field(w, "name")), "rt-migrate-test");
	assert_int_equal(json_object_get_int(field(w, "timeout_s")), 120);
	assert_int_equal(json_object_get_int(field(out, "repeat")), 3);
	assert_int_equal(json_object_get_int(field(field(out, "guest"), "memory_mb")), 512);
	json_object_put(out);
	json_object_put(spec);
}

static void test_cli_path_is_inlined(void **state)
{
	(void)state;
	char dir[] = "/tmp/schedlab-test-job-XXXXXX";
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *p = fs_path_join(dir, "my.patch");
	assert_int_equal(fs_write_file_atomic(p, "hello\n", 6, NULL), 0);
	json_object *spec = json_tokener_parse("{\"name\":\"ci\",\"base\":" KERNEL
					       ",\"patches\":[{\"path\":\"my.patch\"}],"
					       "\"workloads\":" WL "}");
	json_object *out = NULL;
	struct sl_error err = {0};
	assert_int_equal(job_expand_json(spec, JOB_ORIGIN_CLI, dir, NULL, &out, &err), 0);
	json_object *pp = field(field(field(out, "kernels"), "patched"), "patches");
	json_object *item = json_object_array_get_idx(pp, 1);
	assert_string_equal(json_object_get_string(field(item, "name")), "my.patch");
	assert_string_equal(json_object_get_string(field(item, "content")), "hello\n");
	json_object_put(out);
	/* The service never reads local files. */
	assert_true(job_expand_json(spec, JOB_ORIGIN_SERVICE, dir, NULL, &out, &err) < 0);
	assert_non_null(strstr(err.message, "Local file paths"));
	json_object_put(spec);
	fs_rm_rf(dir, NULL);
}

static void test_errors_name_the_path(void **state)
{
	(void)state;
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"nope\"}}", ""),
		     JOB_ORIGIN_SERVICE, "$.variants.b", "'nope'");
	expect_error("{\"name\":\"t\",\"kernels\":{\"k\":" KERNEL "},\"variants\":{\"x\":{"
		     "\"kernel\":\"k\"},\"y\":{\"kernel\":\"k\"}},\"baseline\":\"a\","
		     "\"workloads\":" WL "}",
		     JOB_ORIGIN_SERVICE, "$.baseline", "'a'");
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"}}", ""), JOB_ORIGIN_SERVICE, "$.variants",
		     "at least one other variant");
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			 ",\"gates\":[{\"workload\":\"cyclictest\",\"metric\":\"x\","
			 "\"threshold\":1}]"),
		     JOB_ORIGIN_SERVICE, "$.gates[0].workload", "'cyclictest'");
	expect_error("{\"name\":\"ci\",\"base\":" KERNEL ",\"patches\":[{\"name\":\"../../etc/"
		     "passwd\",\"content\":\"x\"}],\"workloads\":" WL "}",
		     JOB_ORIGIN_SERVICE, "$.patches[0].name", NULL);
	expect_error(
	    JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}", ",\"guest\":{\"vcpus\":65}"),
	    JOB_ORIGIN_SERVICE, "$.guest.vcpus", NULL);
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			 ",\"repeat\":50,\"bogus\":1"),
		     JOB_ORIGIN_SERVICE, "$.bogus", "not an allowed member");
}

static void test_variant_settings_are_checked(void **state)
{
	(void)state;
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"uid_shares\":"
			 "{\"70000\":1024}}}",
			 ""),
		     JOB_ORIGIN_SERVICE, "$.variants.b.uid_shares.70000", "70000");
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"uid_shares\":"
			 "{\"1000\":0}}}",
			 ""),
		     JOB_ORIGIN_SERVICE, "$.variants.b.uid_shares.1000", NULL);
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"sched_tunables\":"
			 "{\"bogusNs\":1}}}",
			 ""),
		     JOB_ORIGIN_SERVICE, "$.variants.b.sched_tunables.bogusNs", "bogusNs");
	expect_error(
	    JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"hrtick\":\"yes\"}}", ""),
	    JOB_ORIGIN_SERVICE, "$.variants.b.hrtick", NULL);
}

static void test_guest_time_budget(void **state)
{
	(void)state;
	struct job_limits lim = *job_default_limits();
	lim.max_guest_seconds = 100;
	json_object *spec = json_tokener_parse(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":"
						   "\"k\"}}",
						   ",\"repeat\":2"));
	json_object *out = NULL;
	struct sl_error err = {0};
	assert_true(job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, &lim, &out, &err) < 0);
	assert_string_equal(err.path, "$.repeat");
	assert_non_null(strstr(err.message, "over the limit of 100 s"));
	json_object_put(spec);
}

/* The budget once undercounted: 16 variants x 17 repeats x 16 one-second
 * workloads was budgeted at 20,672 s (60 s + timeouts per run) and could run 50,592 s. The budget
 * is the runner's own deadline (90 + sum(timeout + 5) per run under TCG)
 * plus a build estimate per kernel, so it is over the 6 h default. */
static void test_budget_is_the_real_deadline(void **state)
{
	(void)state;
	_cleanup_json_ json_object *spec = json_object_new_object();
	json_object *kernels = json_object_new_object(), *variants = json_object_new_object();
	json_object_object_add(kernels, "k", json_tokener_parse(KERNEL));
	for (int i = 0; i < 16; i++) {
		char name[16];
		snprintf(name, sizeof(name), "v%d", i);
		json_object_object_add(variants, name, json_tokener_parse("{\"kernel\":\"k\"}"));
	}
	json_object *wls = json_object_new_array();
	for (int i = 0; i < 16; i++) {
		char w[128];
		snprintf(w, sizeof(w),
			 "{\"tool\":\"rt-migrate-test\",\"name\":\"w%d\",\"timeout_s\":1}", i);
		json_object_array_add(wls, json_tokener_parse(w));
	}
	json_object_object_add(spec, "name", json_object_new_string("budget"));
	json_object_object_add(spec, "kernels", kernels);
	json_object_object_add(spec, "variants", variants);
	json_object_object_add(spec, "baseline", json_object_new_string("v0"));
	json_object_object_add(spec, "workloads", wls);
	json_object_object_add(spec, "repeat", json_object_new_int(17));
	json_object_object_add(spec, "guest", json_tokener_parse("{\"vcpus\":2}"));
	struct job_limits lim = *job_default_limits();
	lim.max_guest_seconds = 1000000;
	_cleanup_json_ json_object *out = NULL;
	struct sl_error err = {0};
	if (job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, &lim, &out, &err) < 0)
		fail_msg("%s: %s", err.path, err.message);
	assert_int_equal(job_run_deadline_s(field(out, "workloads"), true), 90 + 16 * 6);
	assert_int_equal(job_run_deadline_s(field(out, "workloads"), false), 45 + 16 * 6);
	assert_int_equal(job_budget_s(out), 50592 + JOB_BUILD_ESTIMATE_S);
	/* The default limit refuses it, naming the formula. */
	json_object *out2 = NULL;
	assert_true(job_expand_json(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &out2, &err) < 0);
	assert_string_equal(err.path, "$.repeat");
	assert_non_null(strstr(err.message, "51492 s"));
}

/* memory_mb has a limit (65536 was accepted), and so do the vCPUs of a
 * job's guests together; NUL bytes in inline content are refused with the
 * field. */
static void test_guest_shape_and_nul_limits(void **state)
{
	(void)state;
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"}}", ",\"guest\":{\"memory_mb\":65536}"),
		     JOB_ORIGIN_SERVICE, "$.guest.memory_mb", "between 128 and 4096");
	expect_error(
	    JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}", ",\"guest\":{\"vcpus\":64}"),
	    JOB_ORIGIN_SERVICE, "$.guest.vcpus", "128 vCPUs at once");
	expect_error("{\"name\":\"t\",\"kernels\":{\"k\":{\"source\":\"debian:linux-source-6.1\","
		     "\"patches\":[{\"name\":\"a.patch\",\"content\":\"x\\u0000y\"}]}},"
		     "\"variants\":{\"a\":{\"kernel\":\"k\"}},\"baseline\":\"a\",\"workloads\":" WL
		     "}",
		     JOB_ORIGIN_SERVICE, "$.kernels.k.patches[0].content", "NUL bytes");
}

/* The service builds both Debian bases and nothing else; a kernel naming
 * one and no config gets that base's fragment. */
/* guest.topology: vcpus follows the topology when left out, the typed job
 * carries it, and a product that is not vcpus (or a count out of range) is
 * refused naming $.guest.topology. */
static void test_guest_topology(void **state)
{
	(void)state;
	struct job *job =
	    expand_text(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			    ",\"guest\":{\"topology\":{\"sockets\":2,\"cores\":2,\"threads\":2}}"));
	assert_int_equal(job->guest.vcpus, 8);
	assert_int_equal(job->guest.sockets, 2);
	assert_int_equal(job->guest.cores, 2);
	assert_int_equal(job->guest.threads, 2);
	job_free(job);
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			 ",\"guest\":{\"vcpus\":4,\"topology\":{\"sockets\":3}}"),
		     JOB_ORIGIN_SERVICE, "$.guest.topology", "3 CPUs, not the guest's 4 vcpus");
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			 ",\"guest\":{\"topology\":{\"cores\":0}}"),
		     JOB_ORIGIN_SERVICE, "$.guest.topology.cores", NULL);
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			 ",\"guest\":{\"topology\":{\"dies\":2}}"),
		     JOB_ORIGIN_SERVICE, "$.guest.topology.dies", NULL);
}

/* guest.numa: expanded with each list in its shortest form, the typed job
 * carries the nodes and every kernel is marked numa; lists that leave a
 * vCPU out, name one twice or beyond the guest, and memory that does not
 * add up are refused naming the node. */
static void test_guest_numa(void **state)
{
	(void)state;
	struct job *job = expand_text(
	    JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
		",\"guest\":{\"memory_mb\":512,\"topology\":{\"sockets\":2,\"cores\":2},"
		"\"numa\":[{\"cpus\":\"0,1\",\"memory_mb\":256},{\"cpus\":\"2-3\",\"memory_mb\":"
		"256}]}"));
	assert_int_equal(job->guest.n_numa, 2);
	assert_true(job->guest.numa[0].cpus == 3 && job->guest.numa[1].cpus == 12);
	assert_int_equal(job->guest.numa[1].memory_mb, 256);
	assert_true(job->kernels[0].numa);
	job_free(job);
#define NUMA_JOB(cells)                                                                            \
	JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",                                 \
	    ",\"guest\":{\"vcpus\":4,\"memory_mb\":512,\"numa\":" cells "}")
	expect_error(
	    NUMA_JOB("[{\"cpus\":\"0-1\",\"memory_mb\":256},{\"cpus\":\"2\",\"memory_mb\":256}]"),
	    JOB_ORIGIN_SERVICE, "$.guest.numa", "Every one of the guest's 4 vCPUs");
	expect_error(
	    NUMA_JOB("[{\"cpus\":\"0-2\",\"memory_mb\":256},{\"cpus\":\"2-3\",\"memory_mb\":256}]"),
	    JOB_ORIGIN_SERVICE, "$.guest.numa[1].cpus", "a vCPU of an earlier node");
	expect_error(
	    NUMA_JOB("[{\"cpus\":\"0-1\",\"memory_mb\":256},{\"cpus\":\"2-4\",\"memory_mb\":256}]"),
	    JOB_ORIGIN_SERVICE, "$.guest.numa[1].cpus", "the guest's 4 do not have");
	expect_error(
	    NUMA_JOB("[{\"cpus\":\"0-1\",\"memory_mb\":256},{\"cpus\":\"2-3\",\"memory_mb\":128}]"),
	    JOB_ORIGIN_SERVICE, "$.guest.numa", "add up to 384, not the guest's 512");
	expect_error(NUMA_JOB("[{\"cpus\":\"1-0\",\"memory_mb\":256}]"), JOB_ORIGIN_SERVICE,
		     "$.guest.numa[0].cpus", NULL);
	expect_error(NUMA_JOB("[]"), JOB_ORIGIN_SERVICE, "$.guest.numa", NULL);
	expect_error(NUMA_JOB("[{\"cpus\":\"0-3\",\"memory_mb\":512,\"distance\":1}]"),
		     JOB_ORIGIN_SERVICE, "$.guest.numa[0].distance", NULL);
#undef NUMA_JOB
}

/* guest.pinning: kept in the expanded guest only when set ("auto" or "off";
 * a job without it expands as before), "off" reaches the typed job; any
 * other value or type is refused naming the field. */
static void test_guest_pinning(void **state)
{
	(void)state;
	const char *values[] = {NULL, "auto", "off"};
	const char *texts[] = {
	    JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}", ""),
	    JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
		",\"guest\":{\"pinning\":\"auto\"}"),
	    JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
		",\"guest\":{\"pinning\":\"off\"}"),
	};
	for (size_t i = 0; i < ELEMENTSOF(values); i++) {
		struct job *job = expand_text(texts[i]);
		json_object *g = json_object_object_get(job->spec, "guest");
		json_object *p = json_object_object_get(g, "pinning");
		if (values[i])
			assert_string_equal(json_object_get_string(p), values[i]);
		else
			assert_null(p);
		assert_int_equal(job->guest.pinning_off, i == 2);
		job_free(job);
	}
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			 ",\"guest\":{\"pinning\":\"yes\"}"),
		     JOB_ORIGIN_SERVICE, "$.guest.pinning", NULL);
	expect_error(JOB("{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}}",
			 ",\"guest\":{\"pinning\":true}"),
		     JOB_ORIGIN_SERVICE, "$.guest.pinning", NULL);
}

static void test_debian_bases(void **state)
{
	(void)state;
	const char *sources[] = {"debian:linux-source-6.1", "debian:linux-source-6.12"};
	const char *configs[] = {"linux-6.1", "linux-6.12"};
	for (size_t i = 0; i < ELEMENTSOF(sources); i++) {
		char text[1024];
		snprintf(text, sizeof(text),
			 "{\"name\":\"t\",\"kernels\":{\"k\":{\"source\":\"%s\"}},"
			 "\"variants\":{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\"}},"
			 "\"baseline\":\"a\",\"workloads\":" WL "}",
			 sources[i]);
		struct job *job = expand_text(text);
		const struct job_kernel *k = job_find_kernel(job, "k");
		assert_string_equal(k->source, sources[i]);
		assert_int_equal(k->config.kind, JOB_FILE_BUILTIN);
		assert_string_equal(k->config.builtin, configs[i]);
		job_free(job);
	}
	expect_error("{\"name\":\"t\",\"kernels\":{\"k\":{\"source\":\"debian:linux-source-6.6\"}},"
		     "\"variants\":{\"a\":{\"kernel\":\"k\"}},\"baseline\":\"a\",\"workloads\":" WL
		     "}",
		     JOB_ORIGIN_SERVICE, "$.kernels.k.source", "'debian:linux-source-6.12'");
}

/* Every example in examples/ expands into a typed job that agrees with the
 * expanded JSON it holds. */
static void test_typed_examples(void **state)
{
	(void)state;
	_cleanup_free_ char *root = fs_data_dir();
	_cleanup_free_ char *ex = fs_path_join(root, "examples");
	DIR *d = opendir(ex);
	assert_non_null(d);
	int n_examples = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		n_examples++;
		json_object *spec = load_example(e->d_name);
		_cleanup_job_ struct job *job = NULL;
		struct sl_error err = {0};
		if (job_expand(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &job, &err) < 0)
			fail_msg("%s: %s: %s", e->d_name, err.path, err.message);
		json_object_put(spec);
		json_object *x = job->spec;
		assert_non_null(x);
		assert_string_equal(job->name, json_object_get_string(field(x, "name")));
		assert_int_equal(job->n_kernels, json_object_object_length(field(x, "kernels")));
		assert_int_equal(job->n_variants, json_object_object_length(field(x, "variants")));
		assert_int_equal(job->n_workloads, json_object_array_length(field(x, "workloads")));
		assert_int_equal(job->n_gates, json_object_array_length(field(x, "gates")));
		assert_string_equal(job->baseline->name,
				    json_object_get_string(field(x, "baseline")));
		assert_int_equal(job->repeat, json_object_get_int(field(x, "repeat")));
		assert_int_equal(job->guest.vcpus,
				 json_object_get_int(field(field(x, "guest"), "vcpus")));
		for (size_t i = 0; i < job->n_variants; i++) {
			const struct job_variant *v = &job->variants[i];
			assert_ptr_equal(job_find_variant(job, v->name), v);
			assert_ptr_equal(job_find_kernel(job, v->kernel->name), v->kernel);
		}
		for (size_t i = 0; i < job->n_kernels; i++) {
			const struct job_kernel *k = &job->kernels[i];
			assert_non_null(k->source);
			for (size_t j = 0; j < k->n_patches; j++)
				assert_true(k->patches[j].kind == JOB_FILE_BUILTIN
						? k->patches[j].builtin != NULL
						: k->patches[j].content != NULL);
		}
		for (size_t i = 0; i < job->n_gates; i++)
			assert_non_null(job_find_workload(job, job->gates[i].workload));
		/* The stored form builds the same job. */
		_cleanup_job_ struct job *again = NULL;
		assert_int_equal(job_from_expanded(job->spec, &again, &err), 0);
		assert_int_equal(again->n_variants, job->n_variants);
		assert_string_equal(again->baseline->name, job->baseline->name);
	}
	closedir(d);
	assert_true(n_examples >= 6);
}

static void test_typed_shorthand(void **state)
{
	(void)state;
	json_object *spec = json_tokener_parse(
	    "{\"name\":\"ci\",\"base\":" KERNEL ",\"patches\":[{\"name\":\"fix.patch\","
	    "\"content\":\"--- a/x\\n+++ b/x\\n\"}],\"workloads\":" WL "}");
	_cleanup_job_ struct job *job = NULL;
	struct sl_error err = {0};
	assert_int_equal(job_expand(spec, JOB_ORIGIN_SERVICE, NULL, NULL, &job, &err), 0);
	json_object_put(spec);

	assert_string_equal(job->name, "ci");
	assert_null(job->description);
	assert_int_equal(job->n_kernels, 2);
	const struct job_kernel *base = job_find_kernel(job, "base");
	const struct job_kernel *patched = job_find_kernel(job, "patched");
	assert_non_null(base);
	assert_non_null(patched);
	assert_string_equal(base->source, "debian:linux-source-6.1");
	assert_int_equal(base->n_patches, 1);
	assert_int_equal(base->patches[0].kind, JOB_FILE_BUILTIN);
	assert_string_equal(base->patches[0].builtin, "linux-6.1");
	assert_int_equal(patched->n_patches, 2);
	assert_int_equal(patched->patches[1].kind, JOB_FILE_INLINE);
	assert_string_equal(patched->patches[1].name, "fix.patch");
	assert_int_equal(patched->patches[1].content_len, strlen("--- a/x\n+++ b/x\n"));
	/* No config given: the built-in fragment. */
	assert_int_equal(patched->config.kind, JOB_FILE_BUILTIN);
	assert_string_equal(patched->config.builtin, "linux-6.1");

	assert_int_equal(job->n_variants, 2);
	assert_string_equal(job->baseline->name, "baseline");
	assert_ptr_equal(job->baseline->kernel, base);
	assert_ptr_equal(job_find_variant(job, "patched")->kernel, patched);
	assert_int_equal(job->baseline->n_features, 0);
	assert_int_equal(job->baseline->hrtick, JOB_HRTICK_DEFAULT);

	assert_int_equal(job->n_workloads, 1);
	const struct job_workload *w = &job->workloads[0];
	assert_string_equal(w->name, "rt-migrate-test");
	assert_string_equal(w->tool, "rt-migrate-test");
	assert_int_equal(w->n_args, 3);
	assert_string_equal(w->args[2], "3");
	assert_int_equal(w->timeout_s, 120);
	assert_int_equal(w->uid, 0);
	assert_int_equal(w->maxerr_us, -1);
	assert_int_equal(job->repeat, 3);
	assert_int_equal(job->guest.vcpus, 2);
	assert_int_equal(job->guest.memory_mb, 512);
	assert_string_equal(job->accelerator, "auto");
	assert_false(job->has_placement);
	/* No gates named: the workload's default gate. */
	assert_int_equal(job->n_gates, 1);
	assert_string_equal(job->gates[0].metric, "inversions");
	assert_true(job->gates[0].is_default);
	assert_false(job->gates_opt_out);
	assert_null(job->suite);
	assert_int_equal(job->n_host_labels, 0);
	assert_null(job_find_workload(job, "cyclictest"));
}

static void test_typed_variant_settings(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job = expand_text(JOB(
	    "{\"a\":{\"kernel\":\"k\"},\"b\":{\"kernel\":\"k\",\"features\":[\"NO_RT_PUSH\","
	    "\"HRTICK\"],\"hrtick\":false,\"uid_shares\":{\"1000\":2048,\"0\":512},"
	    "\"sched_tunables\":{\"latency_ns\":4294967295}}}",
	    ",\"gates\":[{\"workload\":\"rt-migrate-test\",\"metric\":\"inversions\","
	    "\"threshold\":0.5,\"relative\":true},{\"workload\":\"rt-migrate-test\","
	    "\"metric\":\"max_delay_us\"}],\"placement\":\"spread\",\"host_labels\":[\"cpu=epyc\"],"
	    "\"accelerator\":\"tcg\",\"guest\":{\"vcpus\":4,\"memory_mb\":1024}"));

	const struct job_variant *b = job_find_variant(job, "b");
	assert_non_null(b);
	assert_int_equal(b->n_features, 2);
	assert_string_equal(b->features[0], "NO_RT_PUSH");
	assert_int_equal(b->hrtick, JOB_HRTICK_OFF);
	assert_int_equal(b->n_uid_shares, 2);
	assert_int_equal(b->uid_shares[0].uid, 1000);
	assert_int_equal(b->uid_shares[0].share, 2048);
	assert_int_equal(b->uid_shares[1].uid, 0);
	assert_int_equal(b->n_sched_tunables, 1);
	assert_string_equal(b->sched_tunables[0].name, "latency_ns");
	assert_true(b->sched_tunables[0].value == 4294967295LL);
	assert_string_equal(job->baseline->name, "a");

	assert_int_equal(job->n_gates, 2);
	assert_true(job->gates[0].has_threshold);
	assert_true(job->gates[0].threshold == 0.5);
	assert_true(job->gates[0].relative);
	assert_false(job->gates[1].has_threshold);
	assert_false(job->gates[1].relative);
	assert_string_equal(job->gates[1].metric, "max_delay_us");
	assert_true(job->has_placement);
	assert_int_equal(job->placement, JOB_PLACEMENT_SPREAD);
	assert_int_equal(job->n_host_labels, 1);
	assert_string_equal(job->host_labels[0], "cpu=epyc");
	assert_string_equal(job->accelerator, "tcg");
	assert_int_equal(job->guest.vcpus, 4);
	assert_int_equal(job->guest.memory_mb, 1024);
}

/* A stored spec that is not in the expanded form is an error, not a crash. */
/* JSON Schema's integers include 4.0: the schema passes them, so the typed
 * job must read them as 4, not fall back to a default (fuzz_job found
 * "uid_shares": {"1001": 102.}). Adaptive repeats and alpha come through. */
static void test_integral_doubles_and_repeat_bounds(void **state)
{
	(void)state;
	_cleanup_job_ struct job *job =
	    expand_text("{\"name\":\"ci\",\"base\":" KERNEL ",\"patches\":[],\"workloads\":" WL
			",\"repeat\":{\"min\":3,\"max\":9},\"alpha\":0.01}");
	assert_int_equal(job->repeat_min, 3);
	assert_int_equal(job->repeat, 9);

	json_object *e = json_tokener_parse(
	    "{\"name\":\"t\",\"guest\":{\"vcpus\":4.0,\"memory_mb\":512},\"repeat\":5.0}");
	assert_int_equal(json_member_int(json_member(e, "guest"), "vcpus", 2), 4);
	assert_int_equal(json_member_int(e, "repeat", 3), 5);
	json_object_object_add(e, "repeat", json_object_new_double(2.5));
	assert_int_equal(json_member_int(e, "repeat", 3), 3);
	json_object_put(e);
}

static void test_from_expanded_rejects_garbage(void **state)
{
	(void)state;
	const char *bad[] = {
	    "[]",
	    "{}",
	    "{\"name\":\"x\"}",
	    "{\"name\":\"x\",\"kernels\":{\"k\":{\"source\":\"s\",\"patches\":[{}]}}}",
	    "{\"name\":\"x\",\"kernels\":{\"k\":{\"source\":\"s\",\"config\":{\"builtin\":\"b\"}}},"
	    "\"guest\":{\"vcpus\":1,\"memory_mb\":128},\"variants\":{\"a\":{\"kernel\":\"k\","
	    "\"features\":[1]}}}",
	    "{\"name\":\"x\",\"kernels\":{\"k\":{\"source\":\"s\",\"config\":{\"builtin\":\"b\"}}},"
	    "\"guest\":{\"vcpus\":1,\"memory_mb\":128},\"variants\":{\"a\":{\"kernel\":\"k\","
	    "\"uid_shares\":{\"x\":1}}}}",
	    "{\"name\":\"x\",\"kernels\":{\"k\":{\"source\":\"s\",\"config\":{\"builtin\":\"b\"}}},"
	    "\"guest\":{\"vcpus\":1,\"memory_mb\":128},\"variants\":{\"a\":{\"kernel\":\"k\"}},"
	    "\"baseline\":\"a\",\"workloads\":[{\"tool\":\"x\",\"name\":\"x\",\"timeout_s\":1,"
	    "\"args\":[\"a\",null]}]}",
	    "{\"name\":\"x\",\"kernels\":{\"k\":{\"source\":\"s\",\"config\":{\"builtin\":\"b\"}}},"
	    "\"guest\":{\"vcpus\":1,\"memory_mb\":128},\"variants\":{\"a\":{\"kernel\":\"k\"}},"
	    "\"baseline\":\"a\",\"workloads\":[],\"repeat\":1,\"gates\":[{\"metric\":\"m\"}]}",
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		json_object *o = json_tokener_parse(bad[i]);
		struct job *job = NULL;
		struct sl_error err = {0};
		if (job_from_expanded(o, &job, &err) == 0)
			fail_msg("accepted %s", bad[i]);
		assert_null(job);
		assert_true(err.message[0] != '\0');
		json_object_put(o);
	}
	assert_null(job_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_examples_expand),
	    cmocka_unit_test(test_shorthand_and_defaults),
	    cmocka_unit_test(test_cli_path_is_inlined),
	    cmocka_unit_test(test_errors_name_the_path),
	    cmocka_unit_test(test_variant_settings_are_checked),
	    cmocka_unit_test(test_guest_time_budget),
	    cmocka_unit_test(test_budget_is_the_real_deadline),
	    cmocka_unit_test(test_guest_shape_and_nul_limits),
	    cmocka_unit_test(test_debian_bases),
	    cmocka_unit_test(test_guest_topology),
	    cmocka_unit_test(test_guest_numa),
	    cmocka_unit_test(test_guest_pinning),
	    cmocka_unit_test(test_typed_examples),
	    cmocka_unit_test(test_typed_shorthand),
	    cmocka_unit_test(test_typed_variant_settings),
	    cmocka_unit_test(test_integral_doubles_and_repeat_bounds),
	    cmocka_unit_test(test_from_expanded_rejects_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
