/* Dispatch from a workload frame to the tool's parser, the parser for
 * schedlab's own workloads, and the better-direction table. See metrics.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "metrics/metrics.h"

#define OWN_TOOL_MAX_NAME 128

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

json_object *metrics_number(double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_object_new_int64((int64_t)v);
	char buf[32];
	snprintf(buf, sizeof(buf), "%.10g", v);
	return json_object_new_double_s(v, buf);
}

bool metrics_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > OWN_TOOL_MAX_NAME)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '.'))
			return false;
	return true;
}

int metrics_parse_json(const char *text, size_t len, const char *what, json_object **ret,
		       struct sl_error *err)
{
	if (len > METRICS_MAX_JSON_BYTES)
		return error_set(err, ERR_INVALID, 0,
				 "The %s is %zu bytes long; at most %d are accepted.", what, len,
				 METRICS_MAX_JSON_BYTES);
	if (strnlen(text, len) != len)
		return error_set(err, ERR_INVALID, 0, "The %s contains a NUL byte.", what);
	json_tokener *tok = json_tokener_new();
	if (!tok)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr == json_tokener_continue)
		return error_set(err, ERR_INVALID, 0,
				 "The %s is cut off: its JSON ends before the value is complete.",
				 what);
	if (jerr != json_tokener_success)
		return error_set(err, ERR_INVALID, 0, "The %s is not valid JSON: %s at byte %zu.",
				 what, json_tokener_error_desc(jerr), end);
	for (size_t i = end; i < len; i++)
		if (!strchr(" \t\r\n", text[i])) {
			json_object_put(o);
			return error_set(err, ERR_INVALID, 0,
					 "The %s has data after its JSON value (at byte %zu).",
					 what, i);
		}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return error_set(err, ERR_INVALID, 0, "The %s is not a JSON object.", what);
	}
	*ret = o;
	return 0;
}

int metrics_own_tool(const char *stdout_text, size_t stdout_len, json_object **ret_metrics,
		     json_object **ret_details, struct sl_error *err)
{
	/* The tool prints one JSON object; tolerate a banner before it by
	 * taking the text from the last line that starts with '{'. */
	size_t start = 0;
	while (start < stdout_len && strchr(" \t\r\n", stdout_text[start]))
		start++;
	if (start < stdout_len && stdout_text[start] != '{') {
		for (size_t i = stdout_len; i > 0; i--)
			if (stdout_text[i - 1] == '\n' && i < stdout_len && stdout_text[i] == '{') {
				start = i;
				break;
			}
	}
	if (start >= stdout_len)
		return error_set(err, ERR_INVALID, 0, "The workload printed no JSON object.");

	_cleanup_json_ json_object *doc = NULL;
	int r = metrics_parse_json(stdout_text + start, stdout_len - start, "workload's output",
				   &doc, err);
	if (r < 0)
		return r;
	json_object *m = get(doc, "metrics");
	if (!json_object_is_type(m, json_type_object))
		return error_set(err, ERR_INVALID, 0,
				 "The workload's output has no \"metrics\" object.");
	if (json_object_object_length(m) > METRICS_MAX_COUNT)
		return error_set(err, ERR_INVALID, 0,
				 "The workload reported %d metrics; at most %d are accepted.",
				 json_object_object_length(m), METRICS_MAX_COUNT);

	_cleanup_json_ json_object *metrics = json_object_new_object();
	json_object_object_foreach(m, name, val)
	{
		if (!metrics_name_ok(name))
			return error_set(err, ERR_INVALID, 0,
					 "The workload reported a metric named '%.64s', which is "
					 "not of the form [a-z0-9_.]{1,128}.",
					 name);
		bool num = json_object_is_type(val, json_type_int) ||
			   json_object_is_type(val, json_type_double);
		if (!num || !isfinite(json_object_get_double(val)))
			return error_set(err, ERR_INVALID, 0,
					 "The workload's metric '%s' is not a finite number.",
					 name);
		json_object_object_add(metrics, name,
				       json_object_is_type(val, json_type_int)
					   ? json_object_new_int64(json_object_get_int64(val))
					   : metrics_number(json_object_get_double(val)));
	}
	json_object *details = NULL;
	json_object *d = get(doc, "details");
	if (json_object_is_type(d, json_type_object))
		details = json_object_get(d);
	else
		details = json_object_new_object();
	*ret_metrics = TAKE_PTR(metrics);
	*ret_details = details;
	return 0;
}

/* The maxerr rt-migrate-test itself used: the spec's maxerr_us, else a -m/--maxerr in
 * args, else the tool's default. */
static long rtmigrate_maxerr(json_object *spec)
{
	json_object *v = get(spec, "maxerr_us");
	if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0 &&
	    json_object_get_int64(v) <= 10000000)
		return (long)json_object_get_int64(v);
	json_object *args = get(spec, "args");
	long found = RTMIGRATE_DEFAULT_MAXERR_US;
	for (size_t i = 0;
	     json_object_is_type(args, json_type_array) && i < json_object_array_length(args);
	     i++) {
		const char *a = json_object_get_string(json_object_array_get_idx(args, i));
		const char *val = NULL;
		if (!a)
			continue;
		if (strcmp(a, "-m") == 0 || strcmp(a, "--maxerr") == 0)
			val = json_object_get_string(json_object_array_get_idx(args, i + 1));
		else if (strncmp(a, "--maxerr=", 9) == 0)
			val = a + 9;
		else if (strncmp(a, "-m", 2) == 0)
			val = a + 2;
		if (val) {
			char *end;
			errno = 0;
			long l = strtol(val, &end, 10);
			if (!errno && end != val && *end == '\0' && l >= 0 && l <= 10000000)
				found = l;
		}
	}
	return found;
}

int metrics_from_workload(const char *tool, json_object *workload_payload,
			  json_object *workload_spec, json_object **ret_metrics,
			  json_object **ret_details, struct sl_error *err)
{
	if (!tool)
		return error_set(err, ERR_INVALID, 0, "The workload names no tool.");
	if (!json_object_is_type(workload_payload, json_type_object))
		return error_set(err, ERR_INVALID, 0,
				 "The agent sent no result for the '%s' workload.", tool);
	json_object *to = get(workload_payload, "timed_out");
	if (to && json_object_get_boolean(to))
		return error_set(err, ERR_INVALID, 0, "The '%s' workload timed out.", tool);
	json_object *out = get(workload_payload, "stdout");
	const char *so =
	    json_object_is_type(out, json_type_string) ? json_object_get_string(out) : "";
	size_t so_len = json_object_is_type(out, json_type_string)
			    ? (size_t)json_object_get_string_len(out)
			    : 0;
	json_object *jf = get(workload_payload, "json_file");
	const char *json_text =
	    json_object_is_type(jf, json_type_string) ? json_object_get_string(jf) : NULL;

	if (strcmp(tool, "rt-migrate-test") == 0)
		return metrics_rtmigrate(so, so_len, json_text, rtmigrate_maxerr(workload_spec),
					 ret_metrics, ret_details, err);
	if (strcmp(tool, "cyclictest") == 0)
		return metrics_cyclictest(so, so_len, json_text, ret_metrics, ret_details, err);
	if (strcmp(tool, "share") == 0 || strcmp(tool, "slice") == 0)
		return metrics_own_tool(so, so_len, ret_metrics, ret_details, err);
	return error_set(err, ERR_INVALID, 0, "The tool '%.64s' is not one schedlab knows.", tool);
}

const char *metrics_better(const char *tool, const char *metric)
{
	if (!metric)
		return "none";
	if (strncmp(metric, "cpu_fraction.", 13) == 0 || strcmp(metric, "segments") == 0)
		return "none";
	if (tool && (strcmp(tool, "rt-migrate-test") == 0 || strcmp(tool, "cyclictest") == 0 ||
		     strcmp(tool, "slice") == 0))
		return "lower";
	if (strcmp(metric, "share_error") == 0)
		return "lower";
	static const char *const lower_words[] = {"latency", "delay",	  "wait", "error",
						  "overrun", "inversion", "slice"};
	for (size_t i = 0; i < ELEMENTSOF(lower_words); i++)
		if (strstr(metric, lower_words[i]))
			return "lower";
	return "none";
}
