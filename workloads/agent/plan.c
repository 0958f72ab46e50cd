/* Plan parsing and validation; see plan.h. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/plan.h"
#include "agent/util.h"
#include "proto/utf8.h"

static int agent_plan_fail(char *err, size_t errlen, int r, const char *fmt, ...)
    _agent_printf_(4, 5);
static int agent_plan_fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return r;
}

void agent_plan_free(struct agent_plan *p)
{
	if (!p)
		return;
	free(p->run_id);
	for (size_t i = 0; i < p->n_features; i++)
		free(p->features[i]);
	free(p->features);
	for (size_t i = 0; i < p->n_tunables; i++)
		free(p->tunables[i].name);
	free(p->tunables);
	free(p->shares);
	for (size_t i = 0; i < p->n_workloads; i++) {
		struct plan_workload *w = &p->workloads[i];
		free(w->name);
		strv_free(w->argv);
		free(w->json_out);
	}
	free(p->workloads);
	free(p->scx_scheduler);
	strv_free(p->scx_argv);
	free(p);
}

static void agent_plan_freep(struct agent_plan **p)
{
	agent_plan_free(*p);
}

int agent_plan_feature_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > PLAN_MAX_NAME)
		return 0;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n;
}

int agent_plan_tunable_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > PLAN_MAX_NAME)
		return 0;
	if (strchr(name, '/') || strstr(name, ".."))
		return 0;
	if (strcmp(name, ".") == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] <= ' ' || name[i] == 0x7f)
			return 0;
	return 1;
}

static int parse_uid(json_object *v, const char *path, uid_t *ret, char *err, size_t errlen)
{
	if (!json_object_is_type(v, json_type_int))
		return agent_plan_fail(err, errlen, -EINVAL,
				       "Plan field '%s' must be an integer uid.", path);
	int64_t u = json_object_get_int64(v);
	if (u < 0 || u > PLAN_MAX_UID)
		return agent_plan_fail(err, errlen, -EINVAL,
				       "Plan field '%s' has the invalid uid '%lld'.", path,
				       (long long)u);
	*ret = (uid_t)u;
	return 0;
}

static int parse_features(json_object *arr, struct agent_plan *p, char *err, size_t errlen)
{
	size_t n;

	if (!json_object_is_type(arr, json_type_array))
		return agent_plan_fail(err, errlen, -EINVAL,
				       "Plan field 'features' must be an array of strings.");
	n = json_object_array_length(arr);
	if (n > PLAN_MAX_FEATURES)
		return agent_plan_fail(
		    err, errlen, -E2BIG,
		    "Plan field 'features' has %zu entries, more than the limit of %d.", n,
		    PLAN_MAX_FEATURES);
	p->features = calloc(n + 1, sizeof(char *));
	if (!p->features)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(v, json_type_string) ||
		    !agent_plan_feature_name_valid(json_object_get_string(v)))
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'features[%zu]' must be a sched feature name "
			    "such as 'NO_HRTICK' (capital letters, digits and '_').",
			    i);
		p->features[i] = strdup(json_object_get_string(v));
		if (!p->features[i])
			return -ENOMEM;
		p->n_features++;
	}
	return 0;
}

static int parse_tunables(json_object *obj, struct agent_plan *p, char *err, size_t errlen)
{
	size_t n;

	if (!json_object_is_type(obj, json_type_object))
		return agent_plan_fail(
		    err, errlen, -EINVAL,
		    "Plan field 'tunables' must be an object of name to integer.");
	n = (size_t)json_object_object_length(obj);
	if (n > PLAN_MAX_TUNABLES)
		return agent_plan_fail(
		    err, errlen, -E2BIG,
		    "Plan field 'tunables' has %zu entries, more than the limit of %d.", n,
		    PLAN_MAX_TUNABLES);
	p->tunables = calloc(n + 1, sizeof(*p->tunables));
	if (!p->tunables)
		return -ENOMEM;
	json_object_object_foreach(obj, key, val)
	{
		if (!agent_plan_tunable_name_valid(key))
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'tunables' names the invalid tunable '%.64s': a "
			    "name may not contain '/' or '..'.",
			    key);
		if (!json_object_is_type(val, json_type_int))
			return agent_plan_fail(err, errlen, -EINVAL,
					       "Plan field 'tunables.%s' must be an integer.", key);
		p->tunables[p->n_tunables].name = strdup(key);
		if (!p->tunables[p->n_tunables].name)
			return -ENOMEM;
		p->tunables[p->n_tunables].value = json_object_get_int64(val);
		p->n_tunables++;
	}
	return 0;
}

static int parse_shares(json_object *obj, struct agent_plan *p, char *err, size_t errlen)
{
	size_t n;

	if (!json_object_is_type(obj, json_type_object))
		return agent_plan_fail(
		    err, errlen, -EINVAL,
		    "Plan field 'uid_shares' must be an object of uid to share.");
	n = (size_t)json_object_object_length(obj);
	if (n > PLAN_MAX_SHARES)
		return agent_plan_fail(
		    err, errlen, -E2BIG,
		    "Plan field 'uid_shares' has %zu entries, more than the limit of %d.", n,
		    PLAN_MAX_SHARES);
	p->shares = calloc(n + 1, sizeof(*p->shares));
	if (!p->shares)
		return -ENOMEM;
	json_object_object_foreach(obj, key, val)
	{
		char *end = NULL;
		size_t klen = strlen(key);
		errno = 0;
		unsigned long long u = strtoull(key, &end, 10);
		if (klen == 0 || klen > 10 || strspn(key, "0123456789") != klen || errno ||
		    u > PLAN_MAX_UID)
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'uid_shares' has the invalid uid '%.64s'.", key);
		if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) < 1 ||
		    json_object_get_int64(val) > 1000000000)
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'uid_shares.%s' must be an integer share from 1 to "
			    "1000000000 (1024 is the default share).",
			    key);
		p->shares[p->n_shares].uid = (uid_t)u;
		p->shares[p->n_shares].share = json_object_get_int64(val);
		p->n_shares++;
	}
	return 0;
}

/* "cpus": [0, 2]: distinct CPU numbers below PLAN_MAX_CPU, at least one. */
static int parse_cpus(json_object *v, size_t idx, struct plan_workload *out, char *err,
		      size_t errlen)
{
	size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;

	if (n == 0 || n > PLAN_MAX_CPU)
		return agent_plan_fail(err, errlen, -EINVAL,
				       "Plan field 'workloads[%zu].cpus' must be an array of 1 to "
				       "%d CPU numbers.",
				       idx, PLAN_MAX_CPU);
	CPU_ZERO(&out->cpus);
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(v, i);
		int64_t cpu = json_object_is_type(c, json_type_int) ? json_object_get_int64(c) : -1;
		if (cpu < 0 || cpu >= PLAN_MAX_CPU || CPU_ISSET((int)cpu, &out->cpus))
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'workloads[%zu].cpus[%zu]' must be a CPU "
			    "number from 0 to %d, not repeated.",
			    idx, i, PLAN_MAX_CPU - 1);
		CPU_SET((int)cpu, &out->cpus);
	}
	out->has_cpus = true;
	out->n_cpus = (int)n;
	return 0;
}

static int parse_workload(json_object *w, size_t idx, struct plan_workload *out, char *err,
			  size_t errlen)
{
	json_object *v;
	char path[64];
	size_t n;

	if (!json_object_is_type(w, json_type_object))
		return agent_plan_fail(err, errlen, -EINVAL,
				       "Plan field 'workloads[%zu]' must be an object.", idx);
	if (!json_object_object_get_ex(w, "name", &v) ||
	    !json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0 ||
	    json_object_get_string_len(v) > PLAN_MAX_NAME)
		return agent_plan_fail(
		    err, errlen, -EINVAL,
		    "Plan field 'workloads[%zu].name' must be a string of 1 to %d "
		    "characters.",
		    idx, PLAN_MAX_NAME);
	out->name = strdup(json_object_get_string(v));
	if (!out->name)
		return -ENOMEM;

	if (!json_object_object_get_ex(w, "argv", &v) || !json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) == 0)
		return agent_plan_fail(
		    err, errlen, -EINVAL,
		    "Plan field 'workloads[%zu].argv' must be a non-empty array of "
		    "strings.",
		    idx);
	n = json_object_array_length(v);
	if (n > PLAN_MAX_ARGS)
		return agent_plan_fail(
		    err, errlen, -E2BIG,
		    "Plan field 'workloads[%zu].argv' has %zu entries, more than the "
		    "limit of %d.",
		    idx, n, PLAN_MAX_ARGS);
	out->argv = calloc(n + 1, sizeof(char *));
	if (!out->argv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *a = json_object_array_get_idx(v, i);
		if (!json_object_is_type(a, json_type_string) ||
		    json_object_get_string_len(a) > PLAN_MAX_ARG_LEN)
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'workloads[%zu].argv[%zu]' must be a string of at "
			    "most %d bytes.",
			    idx, i, PLAN_MAX_ARG_LEN);
		/* json-c strings may hold NUL bytes; execv cannot */
		if (strlen(json_object_get_string(a)) != (size_t)json_object_get_string_len(a))
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'workloads[%zu].argv[%zu]' contains a NUL byte.", idx, i);
		out->argv[i] = strdup(json_object_get_string(a));
		if (!out->argv[i])
			return -ENOMEM;
		out->argc++;
	}
	if (out->argv[0][0] != '/')
		return agent_plan_fail(
		    err, errlen, -EINVAL,
		    "Plan field 'workloads[%zu].argv[0]' must be an absolute path, not "
		    "'%.200s' (no shell and no PATH search).",
		    idx, out->argv[0]);

	if (json_object_object_get_ex(w, "json_out", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string(v)[0] != '/' ||
		    json_object_get_string_len(v) > PLAN_MAX_ARG_LEN)
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'workloads[%zu].json_out' must be an absolute "
			    "path.",
			    idx);
		out->json_out = strdup(json_object_get_string(v));
		if (!out->json_out)
			return -ENOMEM;
	}

	out->timeout_s = PLAN_DEFAULT_TIMEOUT_S;
	if (json_object_object_get_ex(w, "timeout_s", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
		    json_object_get_int64(v) > PLAN_MAX_TIMEOUT_S)
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'workloads[%zu].timeout_s' must be an integer "
			    "from 0 (the default of %d s) to %d.",
			    idx, PLAN_DEFAULT_TIMEOUT_S, PLAN_MAX_TIMEOUT_S);
		if (json_object_get_int64(v) > 0)
			out->timeout_s = (int)json_object_get_int64(v);
	}

	out->uid = 0;
	if (json_object_object_get_ex(w, "uid", &v) && !json_object_is_type(v, json_type_null)) {
		snprintf(path, sizeof(path), "workloads[%zu].uid", idx);
		int r = parse_uid(v, path, &out->uid, err, errlen);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(w, "load", &v) && !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_boolean))
			return agent_plan_fail(err, errlen, -EINVAL,
					       "Plan field 'workloads[%zu].load' must be true or "
					       "false.",
					       idx);
		out->load = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(w, "nice", &v) && !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < -20 ||
		    json_object_get_int64(v) > 19)
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'workloads[%zu].nice' must be an integer "
			    "from -20 to 19.",
			    idx);
		out->nice = (int)json_object_get_int64(v);
	}
	if (json_object_object_get_ex(w, "cpus", &v) && !json_object_is_type(v, json_type_null))
		return parse_cpus(v, idx, out, err, errlen);
	return 0;
}

/* "sched_ext": {"scheduler": "scx_simple", "argv": ["/usr/sbin/scx_simple", ...]} */
static int parse_sched_ext(json_object *o, struct agent_plan *p, char *err, size_t errlen)
{
	json_object *v;
	size_t n;

	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "scheduler", &v) ||
	    !json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0 ||
	    json_object_get_string_len(v) > PLAN_MAX_NAME ||
	    strspn(json_object_get_string(v), "abcdefghijklmnopqrstuvwxyz0123456789_") !=
		(size_t)json_object_get_string_len(v))
		return agent_plan_fail(err, errlen, -EINVAL,
				       "Plan field 'sched_ext.scheduler' must be a name of 1 to "
				       "%d characters [a-z0-9_].",
				       PLAN_MAX_NAME);
	p->scx_scheduler = strdup(json_object_get_string(v));
	if (!p->scx_scheduler)
		return -ENOMEM;
	/* "own": true: a user's scheduler, whose ops name is its own choice */
	p->scx_own = json_object_object_get_ex(o, "own", &v) && json_object_get_boolean(v);
	if (!json_object_object_get_ex(o, "argv", &v) || !json_object_is_type(v, json_type_array) ||
	    (n = json_object_array_length(v)) == 0 || n > PLAN_MAX_SCX_ARGS)
		return agent_plan_fail(err, errlen, -EINVAL,
				       "Plan field 'sched_ext.argv' must be an array of 1 to %d "
				       "strings.",
				       PLAN_MAX_SCX_ARGS);
	p->scx_argv = calloc(n + 1, sizeof(char *));
	if (!p->scx_argv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *a = json_object_array_get_idx(v, i);
		if (!json_object_is_type(a, json_type_string) ||
		    json_object_get_string_len(a) > PLAN_MAX_SCX_ARG_LEN ||
		    strlen(json_object_get_string(a)) != (size_t)json_object_get_string_len(a))
			return agent_plan_fail(err, errlen, -EINVAL,
					       "Plan field 'sched_ext.argv[%zu]' must be a string "
					       "of at most %d bytes without NUL.",
					       i, PLAN_MAX_SCX_ARG_LEN);
		p->scx_argv[i] = strdup(json_object_get_string(a));
		if (!p->scx_argv[i])
			return -ENOMEM;
		p->scx_argc++;
	}
	if (p->scx_argv[0][0] != '/')
		return agent_plan_fail(err, errlen, -EINVAL,
				       "Plan field 'sched_ext.argv[0]' must be an absolute path.");
	return 0;
}

static int parse_workloads(json_object *arr, struct agent_plan *p, char *err, size_t errlen)
{
	size_t n;

	if (!json_object_is_type(arr, json_type_array))
		return agent_plan_fail(err, errlen, -EINVAL,
				       "Plan field 'workloads' must be an array of objects.");
	n = json_object_array_length(arr);
	if (n > PLAN_MAX_WORKLOADS)
		return agent_plan_fail(
		    err, errlen, -E2BIG,
		    "Plan field 'workloads' has %zu entries, more than the limit of %d.", n,
		    PLAN_MAX_WORKLOADS);
	p->workloads = calloc(n + 1, sizeof(*p->workloads));
	if (!p->workloads)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* counted first so agent_plan_free releases a half-filled entry */
		p->n_workloads++;
		int r = parse_workload(json_object_array_get_idx(arr, i), i, &p->workloads[i], err,
				       errlen);
		if (r < 0)
			return r;
	}
	return 0;
}

int agent_plan_parse(const char *text, size_t len, struct agent_plan **ret, char *err,
		     size_t errlen)
{
	_cleanup_(agent_plan_freep) struct agent_plan *p = NULL;
	_cleanup_json_ json_object *root = NULL;
	struct json_tokener *tok;
	json_object *v;
	int r;

	if (len > PLAN_MAX_BYTES)
		return agent_plan_fail(err, errlen, -E2BIG,
				       "The plan is %zu bytes, more than the limit of %d.", len,
				       PLAN_MAX_BYTES);
	/* json-c's own check lets overlongs and surrogates through: use the
	 * validator the host's frame parser uses. */
	size_t bad = 0;
	const char *nul = memchr(text, '\0', len);
	if (nul || !utf8_valid(text, len, &bad))
		return agent_plan_fail(
		    err, errlen, -EINVAL, "The plan is not valid JSON at byte %zu: %s.",
		    nul ? (size_t)(nul - text) : bad, nul ? "a NUL byte" : "invalid UTF-8");
	tok = json_tokener_new_ex(32);
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t off = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr == json_tokener_continue || (!root && jerr == json_tokener_success))
		return agent_plan_fail(err, errlen, -EINVAL,
				       "The plan ends in the middle of its JSON.");
	if (!root || jerr != json_tokener_success)
		return agent_plan_fail(err, errlen, -EINVAL,
				       "The plan is not valid JSON at byte %zu: %s.", off,
				       json_tokener_error_desc(jerr));
	for (; off < len; off++)
		if (!strchr(" \t\r\n", text[off]))
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "The plan has unexpected data after its JSON object at byte "
			    "%zu.",
			    off);
	if (!json_object_is_type(root, json_type_object))
		return agent_plan_fail(err, errlen, -EINVAL, "The plan must be a JSON object.");

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (json_object_object_get_ex(root, "run_id", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) > 128)
			return agent_plan_fail(
			    err, errlen, -EINVAL,
			    "Plan field 'run_id' must be a string of at most 128 "
			    "characters.");
		p->run_id = agent_utf8_clean(json_object_get_string(v),
					     (size_t)json_object_get_string_len(v));
	} else {
		p->run_id = strdup("");
		if (!p->run_id)
			return -ENOMEM;
	}
	if (json_object_object_get_ex(root, "features", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		r = parse_features(v, p, err, errlen);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(root, "tunables", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		r = parse_tunables(v, p, err, errlen);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(root, "uid_shares", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		r = parse_shares(v, p, err, errlen);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(root, "sched_ext", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		r = parse_sched_ext(v, p, err, errlen);
		if (r < 0)
			return r;
	}
	if (json_object_object_get_ex(root, "schedstat", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_boolean))
			return agent_plan_fail(err, errlen, -EINVAL,
					       "Plan field 'schedstat' must be true or false.");
		p->schedstat = json_object_get_boolean(v);
	}
	if (!json_object_object_get_ex(root, "workloads", &v))
		return agent_plan_fail(err, errlen, -EINVAL, "The plan has no 'workloads' array.");
	r = parse_workloads(v, p, err, errlen);
	if (r < 0)
		return r;

	*ret = TAKE_PTR(p);
	return 0;
}
