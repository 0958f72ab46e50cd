/* The service config file: defaults, every setting, and the errors that
 * must not be silent (unknown keys, short tokens, unknown roles, limits out
 * of range, bad JSON); token roles matched in constant time by digest. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/kbuild.h"
#include "server/config.h"
#include "util/fs.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_http_config.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fs_rm_rf(dir, NULL);
	return 0;
}

static int load(const char *text, struct service_config **ret, struct sl_error *err)
{
	_cleanup_free_ char *path = fs_path_join(dir, "config.json");
	assert_int_equal(fs_write_file_atomic(path, text, strlen(text), NULL), 0);
	return service_config_load(path, ret, err);
}

static void test_defaults(void **state)
{
	(void)state;
	struct service_config *c = NULL;
	assert_int_equal(service_config_new(&c, NULL), 0);
	assert_string_equal(c->listen, "127.0.0.1:8080");
	assert_int_equal(c->max_body_bytes, 8 * 1024 * 1024);
	assert_int_equal(c->workers, 2);
	assert_int_equal(c->build_slots, 1);
	assert_true(c->build_sandbox);
	assert_int_equal(c->build_timeout_s, 0);
	assert_true(c->guest_slots >= 1);
	assert_int_equal(c->n_tokens, 0);
	assert_int_equal(c->limits.max_vcpus, job_default_limits()->max_vcpus);
	assert_int_equal(service_config_token_roles(c, "anything-at-all-here"), 0);
	service_config_free(c);
	service_config_free(NULL);
}

static void test_full(void **state)
{
	(void)state;
	struct service_config *c = NULL;
	struct sl_error err = {0};
	int r =
	    load("{\"listen\":\"0.0.0.0:9000\","
		 "\"tokens\":[{\"token\":\"submitter-token-0123456789\",\"roles\":[\"submit\"]},"
		 "{\"token\":\"reader-token-0123456789ab\",\"roles\":[\"read\"]},"
		 "{\"token\":\"default-roles-0123456789\"}],"
		 "\"limits\":{\"max_body_bytes\":2048,\"max_vcpus\":4,\"max_repeat\":5,"
		 "\"max_patches\":2,\"max_patch_bytes\":100,\"max_guest_seconds\":60},"
		 "\"workers\":3,\"build_slots\":2,\"guest_slots\":4,\"cache_dir\":\"/c\","
		 "\"libvirt_uri\":\"qemu+tcp://h/system\",\"accelerator\":\"tcg\"}",
		 &c, &err);
	if (r < 0)
		fail_msg("%s", err.message);
	assert_string_equal(c->listen, "0.0.0.0:9000");
	assert_int_equal(c->max_body_bytes, 2048);
	assert_int_equal(c->limits.max_vcpus, 4);
	assert_int_equal(c->limits.max_repeat, 5);
	assert_int_equal(c->limits.max_patches, 2);
	assert_int_equal(c->limits.max_patch_bytes, 100);
	assert_int_equal(c->limits.max_guest_seconds, 60);
	assert_int_equal(c->workers, 3);
	assert_int_equal(c->build_slots, 2);
	assert_int_equal(c->guest_slots, 4);
	assert_string_equal(c->cache_dir, "/c");
	assert_string_equal(c->libvirt_uri, "qemu+tcp://h/system");
	assert_string_equal(c->accelerator, "tcg");
	assert_int_equal(c->n_tokens, 3);
	assert_int_equal(service_config_token_roles(c, "submitter-token-0123456789"),
			 SERVICE_ROLE_SUBMIT);
	assert_int_equal(service_config_token_roles(c, "reader-token-0123456789ab"),
			 SERVICE_ROLE_READ);
	assert_int_equal(service_config_token_roles(c, "default-roles-0123456789"),
			 SERVICE_ROLE_SUBMIT | SERVICE_ROLE_READ);
	/* Prefixes, extensions and case changes match nothing. */
	assert_int_equal(service_config_token_roles(c, "reader-token-0123456789a"), 0);
	assert_int_equal(service_config_token_roles(c, "reader-token-0123456789abc"), 0);
	assert_int_equal(service_config_token_roles(c, "READER-token-0123456789ab"), 0);
	assert_int_equal(service_config_token_roles(c, ""), 0);
	assert_int_equal(service_config_token_roles(c, NULL), 0);
	/* Tokens are kept as digests only. */
	for (size_t i = 0; i < c->n_tokens; i++)
		assert_int_equal(strlen(c->tokens[i].sha256), 64);
	service_config_free(c);
}

static void expect_error(const char *text, const char *needle)
{
	struct service_config *c = NULL;
	struct sl_error err = {0};
	if (load(text, &c, &err) == 0)
		fail_msg("config %s was accepted", text);
	assert_null(c);
	if (!strstr(err.message, needle))
		fail_msg("message '%s' lacks '%s'", err.message, needle);
}

/* The kernel build keys: the sandbox can be turned off for
 * trusted trees, and the time limit set. */
static void test_build_keys(void **state)
{
	(void)state;
	struct service_config *c = NULL;
	struct sl_error err = {0};
	assert_int_equal(load("{\"build_sandbox\":false,\"build_timeout_s\":900}", &c, &err), 0);
	assert_false(c->build_sandbox);
	assert_int_equal(c->build_timeout_s, 900);
	service_config_free(c);
}

/* The disk budgets: unset, kbuild's default bound and a 2 GiB floor; a
 * cache_max_bytes of 0 is no bound, said explicitly. */
static void test_disk_keys(void **state)
{
	(void)state;
	struct service_config *c = NULL;
	struct sl_error err = {0};
	assert_int_equal(service_config_new(&c, NULL), 0);
	assert_int_equal(c->cache_max_bytes, 0);
	assert_int_equal(c->min_free_bytes, 2ULL << 30);
	assert_int_equal(c->disk_wait_max_s, 3600);
	service_config_free(c);
	assert_int_equal(load("{\"cache_max_bytes\":0,\"min_free_bytes\":0,"
			      "\"disk_wait_max_s\":60}",
			      &c, &err),
			 0);
	assert_true(c->cache_max_bytes == KBUILD_CACHE_UNLIMITED);
	assert_int_equal(c->min_free_bytes, 0);
	assert_int_equal(c->disk_wait_max_s, 60);
	service_config_free(c);
	assert_int_equal(load("{\"cache_max_bytes\":1000000000}", &c, &err), 0);
	assert_int_equal(c->cache_max_bytes, 1000000000);
	service_config_free(c);
	c = NULL;
	assert_true(load("{\"min_free_bytes\":-1}", &c, &err) < 0);
	assert_non_null(strstr(err.message, "'min_free_bytes'"));
	assert_true(load("{\"cache_max_bytes\":\"50%\"}", &c, &err) < 0);
	assert_non_null(strstr(err.message, "must be an integer"));
}

/* Tokens carry a name (jobs record it as their owner) and may
 * have the admin role; a known token with "roles": [] is found (403 for it,
 * not 401). */
static void test_token_names_and_admin(void **state)
{
	(void)state;
	_cleanup_json_ json_object *o = json_tokener_parse(
	    "{\"tokens\":[{\"token\":\"admin-token-0123456789\",\"name\":\"ops\","
	    "\"roles\":[\"admin\",\"submit\"]},{\"token\":\"no-roles-token-0123456\",\"roles\":[]}]"
	    ","
	    "\"quotas\":{\"max_queued_per_token\":5,\"guest_seconds_per_day\":3600},"
	    "\"retention\":{\"finished_max_age_s\":60,\"drop_results\":true},"
	    "\"limits\":{\"max_memory_mb\":2048,\"max_total_vcpus\":8},\"workers\":0}");
	struct service_config *c = NULL;
	struct sl_error err = {0};
	assert_int_equal(service_config_new(&c, &err), 0);
	assert_int_equal(service_config_apply(c, o, &err), 0);
	const struct service_token *t = service_config_token_find(c, "admin-token-0123456789");
	assert_non_null(t);
	assert_string_equal(t->name, "ops");
	assert_int_equal(t->roles, SERVICE_ROLE_ADMIN | SERVICE_ROLE_SUBMIT);
	t = service_config_token_find(c, "no-roles-token-0123456");
	assert_non_null(t);
	assert_int_equal(t->roles, 0);
	assert_int_equal(strncmp(t->name, "sha256:", 7), 0);
	assert_null(service_config_token_find(c, "no-roles-token-012345"));
	assert_int_equal(c->quotas.max_queued_per_token, 5);
	assert_int_equal(c->quotas.guest_seconds_per_day, 3600);
	assert_int_equal(c->retention.finished_max_age_s, 60);
	assert_true(c->retention.drop_results);
	assert_int_equal(c->limits.max_memory_mb, 2048);
	assert_int_equal(c->limits.max_total_vcpus, 8);
	assert_int_equal(c->workers, 0);
	service_config_free(c);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("{\"listen\":", "not valid JSON");
	expect_error("[]", "must be a JSON object");
	expect_error("{\"tokenz\":[]}", "Unknown setting 'tokenz'");
	expect_error("{\"limits\":{\"max_cpus\":2}}", "Unknown setting 'limits.max_cpus'");
	expect_error("{\"limits\":{\"max_body_bytes\":1}}", "outside");
	expect_error("{\"limits\":{\"max_repeat\":\"5\"}}", "must be an integer");
	expect_error("{\"workers\":-1}", "outside");
	expect_error("{\"tokens\":[{\"token\":\"short\"}]}", "at least 16");
	expect_error("{\"tokens\":[{\"token\":\"long-enough-token-000\",\"roles\":[\"root\"]}]}",
		     "Role 'root'");
	expect_error("{\"tokens\":{}}", "must be an array");
	expect_error("{\"tokens\":[{\"token\":\"long-enough-token-000\",\"name\":\"a b\"}]}",
		     "name' must be");
	expect_error("{\"tokens\":[{\"token\":\"long-enough-token-000\",\"name\":\"a\"},"
		     "{\"token\":\"long-enough-token-001\",\"name\":\"a\"}]}",
		     "used twice");
	expect_error("{\"quotas\":{\"max_queued\":1}}", "Unknown setting 'quotas.max_queued'");
	expect_error("{\"retention\":{\"drop_results\":1}}", "true or false");
	expect_error("{\"accelerator\":\"hvf\"}", "not auto, kvm or tcg");
	expect_error("{\"build_sandbox\":\"no\"}", "'build_sandbox' must be true or false");
	expect_error("{\"build_timeout_s\":0}", "outside");
	struct service_config *c = NULL;
	struct sl_error err = {0};
	assert_true(service_config_load("/nonexistent/schedlab.json", &c, &err) < 0);
	assert_int_equal(err.kind, ERR_NOT_FOUND);
}

/* The connection and TLS block: values, bounds, the TLS pair, and which
 * token matched (for the per-token stream cap). */
static void test_connections(void **state)
{
	(void)state;
	struct service_config *c = NULL;
	struct sl_error err = {0};
	assert_int_equal(service_config_new(&c, NULL), 0);
	assert_int_equal(c->max_connections, 512);
	assert_int_equal(c->max_connections_per_ip, 32);
	assert_int_equal(c->request_deadline_s, 30);
	assert_int_equal(c->max_streams_per_token, 16);
	assert_int_equal(c->http_threads, 4);
	assert_null(c->tls_cert);
	service_config_free(c);
	c = NULL;
	assert_int_equal(load("{\"max_connections\": 100, \"max_connections_per_ip\": 4, "
			      "\"request_deadline_s\": 5, \"idle_timeout_s\": 9, "
			      "\"max_streams_per_token\": 2, \"http_threads\": 3, \"tokens\": ["
			      "{\"token\": \"first-token-0123456789\"},"
			      "{\"token\": \"second-token-0123456789\"}]}",
			      &c, &err),
			 0);
	assert_int_equal(c->max_connections, 100);
	assert_int_equal(c->max_connections_per_ip, 4);
	assert_int_equal(c->request_deadline_s, 5);
	assert_int_equal(c->idle_timeout_s, 9);
	assert_int_equal(c->max_streams_per_token, 2);
	assert_int_equal(c->http_threads, 3);
	int index = 7;
	assert_true(service_config_token_match(c, "second-token-0123456789", &index) != 0);
	assert_int_equal(index, 1);
	assert_true(service_config_token_match(c, "first-token-0123456789", &index) != 0);
	assert_int_equal(index, 0);
	assert_int_equal(service_config_token_match(c, "third-token-0123456789", &index), 0);
	assert_int_equal(index, -1);
	service_config_free(c);
	c = NULL;
	assert_true(load("{\"request_deadline_s\": 0}", &c, &err) < 0);
	assert_non_null(strstr(err.path, "request_deadline_s"));
	assert_true(load("{\"http_threads\": 65}", &c, &err) < 0);
	assert_true(load("{\"http_threads\": 16, \"max_connections\": 8}", &c, &err) < 0);
	assert_string_equal(err.path, "max_connections");
	/* TLS: both files or neither; PEM text; the error names the key. */
	_cleanup_free_ char *pem = fs_path_join(dir, "cert.pem");
	const char *text = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
	assert_int_equal(fs_write_file_atomic(pem, text, strlen(text), NULL), 0);
	char cfg[512];
	snprintf(cfg, sizeof(cfg), "{\"tls_cert\": \"%s\"}", pem);
	assert_true(load(cfg, &c, &err) < 0);
	assert_string_equal(err.path, "tls_key");
	snprintf(cfg, sizeof(cfg), "{\"tls_cert\": \"%s\", \"tls_key\": \"%s/none.pem\"}", pem,
		 dir);
	assert_true(load(cfg, &c, &err) < 0);
	assert_string_equal(err.path, "tls_key");
	snprintf(cfg, sizeof(cfg), "{\"tls_cert\": \"%s\", \"tls_key\": \"%s\"}", pem, pem);
	assert_int_equal(load(cfg, &c, &err), 0);
	assert_non_null(strstr(c->tls_cert, "BEGIN CERTIFICATE"));
	service_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test_setup_teardown(test_full, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_build_keys, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_disk_keys, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_connections, setup, teardown),
	    cmocka_unit_test(test_token_names_and_admin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
