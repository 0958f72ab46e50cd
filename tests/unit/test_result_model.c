/* The typed result model (service/compare/result_model.c): every golden
 * result in tests/data round-trips parse -> emit to an equal document, the
 * types know exactly the properties the schema names, and a malformed
 * result is refused naming the member. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "compare/result_model.h"
#include "util/json.h"

/* The golden results: find tests/data -name '*.json' | xargs grep -l
 * '"comparisons"'. */
static const char *const goldens[] = {
    "data/result-example.json",
    "data/report/result.json",
    "data/report/real-rtmigrate.json",
    "data/report/hostile.json",
};

static json_object *load(const char *path)
{
	json_object *o = NULL;
	struct sl_error err = {0};
	if (json_read_file_strict(path, 16 << 20, "golden result", &o, &err) < 0)
		fail_msg("%s", err.message);
	return o;
}

static void test_round_trip(void **state)
{
	(void)state;
	for (size_t g = 0; g < sizeof(goldens) / sizeof(goldens[0]); g++) {
		_cleanup_json_ json_object *doc = load(goldens[g]);
		struct model_result m;
		struct sl_error err = {0};
		if (model_result_parse(doc, &m, &err) < 0)
			fail_msg("%s: %s", goldens[g], err.message);
		assert_true(m.n_variants > 0);
		_cleanup_json_ json_object *out = model_result_emit(&m);
		assert_non_null(out);
		if (!json_object_equal(doc, out))
			fail_msg("%s: parse -> emit changed the document", goldens[g]);
		/* The emitted document is the model's own: freeing the model
		 * and the source leaves it whole. */
		model_result_free(&m);
		json_object_put(doc);
		doc = NULL;
		assert_non_null(json_object_to_json_string(out));
	}
}

/* A typed field is read as its type: a golden's first comparison. */
static void test_typed_fields(void **state)
{
	(void)state;
	_cleanup_json_ json_object *doc = load("data/result-example.json");
	struct model_result m;
	struct sl_error err = {0};
	assert_int_equal(model_result_parse(doc, &m, &err), 0);
	assert_true(m.n_comparisons > 0);
	const struct model_comparison *c = &m.comparisons[0];
	json_object *jc = json_object_array_get_idx(json_object_object_get(doc, "comparisons"), 0);
	assert_string_equal(c->metric,
			    json_object_get_string(json_object_object_get(jc, "metric")));
	assert_string_equal(c->verdict,
			    json_object_get_string(json_object_object_get(jc, "verdict")));
	assert_int_equal(c->gated, json_object_get_boolean(json_object_object_get(jc, "gated")));
	assert_true(model_has(MODEL_COMPARISON, &c->has, "metric"));
	assert_true(m.variants[0].n_runs > 0);
	assert_non_null(m.variants[0].runs[0].status);
	model_result_free(&m);
}

/* Every property the schema gives a type is a field the C type knows, and
 * every field the type knows is a schema property. */
static void expect_same(json_object *props, enum model_type type, const char *what)
{
	assert_non_null(props);
	json_object_object_foreach(props, key, val)
	{
		(void)val;
		size_t i = 0;
		while (model_field_name(type, i) && strcmp(model_field_name(type, i), key) != 0)
			i++;
		if (!model_field_name(type, i))
			fail_msg("the schema's %s has '%s', which the C type does not know", what,
				 key);
	}
	for (size_t i = 0; model_field_name(type, i); i++)
		if (!json_object_object_get_ex(props, model_field_name(type, i), NULL))
			fail_msg("the C type of %s has '%s', which the schema does not", what,
				 model_field_name(type, i));
}

static void test_schema_agrees(void **state)
{
	(void)state;
	_cleanup_json_ json_object *s = load("../results-schema/result.schema.json");
	json_object *defs = json_object_object_get(s, "$defs");
	expect_same(json_object_object_get(s, "properties"), MODEL_RESULT, "result");
#define DEF(name) json_object_object_get(json_object_object_get(defs, name), "properties")
	expect_same(DEF("variant"), MODEL_VARIANT, "variant");
	expect_same(DEF("run"), MODEL_RUN, "run");
	expect_same(DEF("workload"), MODEL_WORKLOAD, "workload");
	expect_same(DEF("comparison"), MODEL_COMPARISON, "comparison");
	expect_same(DEF("signature_ref"), MODEL_SIGNATURE_REF, "signature_ref");
	expect_same(DEF("signature"), MODEL_SIGNATURE, "signature");
	json_object *first = json_object_object_get(DEF("signature"), "first");
	expect_same(json_object_object_get(first, "properties"), MODEL_SIGNATURE_FIRST,
		    "signature's first");
	json_object *events = json_object_object_get(DEF("run"), "kernel_events");
	expect_same(json_object_object_get(json_object_object_get(events, "items"), "properties"),
		    MODEL_KERNEL_EVENT, "run's kernel_events item");
#undef DEF
}

/* Kernel events with their signatures, and the signatures across runs, from
 * real 6.1 consoles (tests/data/compare/signatures.json, the golden of
 * test_signatures): every run and the signatures array round-trip, and the
 * typed fields read as written. */
static void test_signatures_round_trip(void **state)
{
	(void)state;
	_cleanup_json_ json_object *doc = load("data/compare/signatures.json");
	json_object *sigs = json_object_object_get(doc, "signatures");
	struct model_signature *s = NULL;
	size_t n = 0;
	struct sl_error err = {0};
	if (model_signatures_parse(sigs, &s, &n, &err) < 0)
		fail_msg("%s", err.message);
	assert_int_equal(n, json_object_array_length(sigs));
	size_t events = 0;
	for (size_t i = 0; i < n; i++) {
		_cleanup_json_ json_object *out = model_signature_emit(&s[i]);
		assert_true(json_object_equal(out, json_object_array_get_idx(sigs, i)));
		assert_true(s[i].runs >= 1 && s[i].reports >= s[i].runs);
		assert_non_null(s[i].first.variant);
	}
	json_object_object_foreach(json_object_object_get(doc, "variants"), vname, v)
	{
		json_object *runs = json_object_object_get(v, "runs");
		for (size_t i = 0; i < json_object_array_length(runs); i++) {
			json_object *run = json_object_array_get_idx(runs, i);
			struct model_run r;
			if (model_run_parse(run, &r, &err) < 0)
				fail_msg("%s: %s", vname, err.message);
			for (size_t k = 0; k < r.n_kernel_events; k++) {
				const struct model_kernel_event *ev = &r.kernel_events[k];
				assert_non_null(ev->kind);
				if (model_has(MODEL_KERNEL_EVENT, &ev->has, "signature"))
					assert_int_equal(strlen(ev->signature.id), 16);
			}
			events += r.n_kernel_events;
			_cleanup_json_ json_object *out = model_run_emit(&r);
			assert_true(json_object_equal(out, run));
			model_run_free(&r);
		}
	}
	assert_true(events > n);
	model_signatures_free(s, n);

	/* A signature whose first is not an object is refused naming it. */
	_cleanup_json_ json_object *bad = json_tokener_parse(
	    "[{\"id\":\"0123456789abcdef\",\"kind\":\"warn\",\"title\":\"t\",\"runs\":1,"
	    "\"reports\":1,\"variants\":{},\"first\":7,\"in_baseline\":false,\"new_in\":[]}]");
	assert_int_equal(model_signatures_parse(bad, &s, &n, &err), -EINVAL);
	assert_non_null(strstr(err.message, "signatures[0].first"));
}

static void expect_refused(const char *json, const char *fragment)
{
	_cleanup_json_ json_object *doc = json_tokener_parse(json);
	assert_non_null(doc);
	struct model_result m;
	struct sl_error err = {0};
	assert_int_equal(model_result_parse(doc, &m, &err), -EINVAL);
	assert_int_equal(err.kind, ERR_INVALID);
	if (!strstr(err.message, fragment))
		fail_msg("'%s' does not name '%s'", err.message, fragment);
	assert_null(m.doc);
}

#define HEAD                                                                                       \
	"{\"schema\":\"x\",\"job\":{},\"environment\":{},\"verdict\":\"pass\",\"verdict_"          \
	"reasons\":[],"
#define RUN "{\"key\":\"base#0\",\"repeat\":0,\"status\":\"ok\"}"

static void test_refuses_malformed(void **state)
{
	(void)state;
	expect_refused("[]", "is an array, not an object");
	expect_refused(HEAD "\"comparisons\":[]}", "variants is missing");
	expect_refused(HEAD "\"variants\":{\"base\":{\"kernel\":\"k\",\"runs\":[" RUN
			    ",{\"key\":\"base#1\",\"repeat\":\"1\",\"status\":\"ok\"}]}},"
			    "\"comparisons\":[]}",
		       "variants.base.runs[1].repeat is a string, not an integer");
	expect_refused(HEAD "\"variants\":{\"base\":{\"kernel\":\"k\",\"runs\":[" RUN "]}},"
			    "\"comparisons\":[{\"variant\":\"v\"}]}",
		       "comparisons[0].workload is missing");
	expect_refused(HEAD "\"variants\":{\"base\":{\"kernel\":\"k\",\"runs\":[{\"key\":\"b\","
			    "\"repeat\":0,\"status\":\"ok\",\"workloads\":[{\"name\":\"w\","
			    "\"tool\":\"t\",\"status\":null}]}]}},\"comparisons\":[]}",
		       "variants.base.runs[0].workloads[0].status is null");
	/* a nullable field's null is data, kept */
	_cleanup_json_ json_object *doc =
	    json_tokener_parse(HEAD "\"variants\":{\"base\":{\"kernel\":\"k\",\"runs\":[{\"key\":"
				    "\"b\",\"repeat\":0,\"status\":\"ok\",\"reason\":null}]}},"
				    "\"comparisons\":[]}");
	struct model_result m;
	struct sl_error err = {0};
	assert_int_equal(model_result_parse(doc, &m, &err), 0);
	assert_false(model_has(MODEL_RUN, &m.variants[0].runs[0].has, "reason"));
	_cleanup_json_ json_object *out = model_result_emit(&m);
	assert_true(json_object_equal(doc, out));
	model_result_free(&m);
}

/* model_result_read() and model_run_read(): a partial document reads,
 * its missing required members absent; a wrong type is still refused. */
static void test_partial_read(void **state)
{
	(void)state;
	struct sl_error err = {0};
	_cleanup_json_ json_object *res = json_tokener_parse("{\"verdict\": \"pass\"}");
	struct model_result m;
	assert_true(model_result_parse(res, &m, &err) < 0);
	assert_int_equal(model_result_read(res, &m, &err), 0);
	assert_string_equal(m.verdict, "pass");
	assert_int_equal(m.n_variants, 0);
	assert_int_equal(m.n_comparisons, 0);
	model_result_free(&m);

	_cleanup_json_ json_object *run = json_tokener_parse(
	    "{\"status\": \"ok\", \"workloads\": [{\"name\": \"a\", \"metrics\": {\"x\": 1}}]}");
	struct model_run r;
	assert_true(model_run_parse(run, &r, &err) < 0);
	assert_int_equal(model_run_read(run, &r, &err), 0);
	assert_null(r.key);
	assert_false(model_has(MODEL_RUN, &r.has, "repeat"));
	assert_non_null(model_run_workload(&r, "a"));
	assert_null(model_run_workload(&r, "b"));
	model_run_free(&r);

	_cleanup_json_ json_object *bad = json_tokener_parse("{\"status\": \"ok\", \"noisy\": 1}");
	assert_true(model_run_read(bad, &r, &err) < 0);
	assert_non_null(strstr(err.message, "noisy"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),	  cmocka_unit_test(test_typed_fields),
	    cmocka_unit_test(test_schema_agrees), cmocka_unit_test(test_refuses_malformed),
	    cmocka_unit_test(test_partial_read),  cmocka_unit_test(test_signatures_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
