/* The metrics plug-in for stress-ng: the "metrics:" list of its --yaml file
 * (stress-ng 0.15, Debian 12), one entry per stressor:
 *
 *   metrics:
 *       - stressor: switch
 *         bogo-ops: 354
 *         bogo-ops-per-second-usr-sys-time: 1483.648434
 *         bogo-ops-per-second-real-time: 149.018913
 *         ...
 *         nanosecs-per-context-switch-pipe-method: 5575790.917133
 *
 * Only this subset of YAML is read (the file is stress-ng's own, untrusted):
 * a line "metrics:" at column 0 starts the list, "- stressor: NAME" starts an
 * entry, "key: number" lines fill it, and the next line at column 0 ends it.
 * Metrics per stressor S (with '-' as '_'): bogo_ops_per_s.S (real time;
 * higher is better), bogo_ops_per_cpu_s.S (per second of user + system
 * time; higher) and, where stress-ng measures one, ns_per_op.S (its
 * nanoseconds per context switch, mutex or sched_yield; lower). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "metrics/metrics-internal.h"

#define SNG_MAX_STRESSORS 64
#define SNG_MAX_NAME	  32

struct sng_entry {
	char name[SNG_MAX_NAME + 1];
	double ops, per_s, per_cpu_s, ns_per_op;
	bool have_ops, have_per_s, have_per_cpu_s, have_ns;
};

struct sng_state {
	bool in_metrics, done;
	size_t n;
	struct sng_entry e[SNG_MAX_STRESSORS];
	const char *why; /* static */
};

static size_t indent_of(const char *line, size_t len)
{
	size_t i = 0;
	while (i < len && line[i] == ' ')
		i++;
	return i;
}

static int sng_line(const char *line, size_t len, void *ctx)
{
	struct sng_state *st = ctx;
	if (st->done)
		return 0;
	size_t in = indent_of(line, len);
	if (!st->in_metrics) {
		if (len == 8 && memcmp(line, "metrics:", 8) == 0)
			st->in_metrics = true;
		return 0;
	}
	if (in == len) /* blank line between entries */
		return 0;
	if (in == 0) {
		st->done = true;
		return 0;
	}
	const char *p = line + in;
	size_t n = len - in;
	if (n >= 2 && memcmp(p, "- ", 2) == 0) {
		static const char key[] = "- stressor: ";
		if (n <= sizeof(key) - 1 || memcmp(p, key, sizeof(key) - 1) != 0) {
			st->why = "an entry of its metrics list does not start with '- stressor:'";
			return 1;
		}
		if (st->n == SNG_MAX_STRESSORS) {
			st->why = "its metrics list has more than 64 stressors";
			return 1;
		}
		const char *name = p + sizeof(key) - 1;
		size_t nl = n - (sizeof(key) - 1);
		if (nl > SNG_MAX_NAME) {
			st->why = "a stressor name is longer than 32 characters";
			return 1;
		}
		struct sng_entry *e = &st->e[st->n];
		memset(e, 0, sizeof(*e));
		for (size_t i = 0; i < nl; i++) {
			char c = name[i];
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
				st->why = "a stressor name is not of the form [a-z0-9-]";
				return 1;
			}
			e->name[i] = c == '-' ? '_' : c;
		}
		for (size_t i = 0; i < st->n; i++)
			if (strcmp(st->e[i].name, e->name) == 0) {
				st->why = "a stressor is listed twice";
				return 1;
			}
		st->n++;
		return 0;
	}
	if (st->n == 0) {
		st->why = "its metrics list has a value before the first stressor";
		return 1;
	}
	const char *colon = memchr(p, ':', n);
	if (!colon || colon + 1 >= p + n || colon[1] != ' ') {
		st->why = "a line of its metrics list is not 'key: value'";
		return 1;
	}
	size_t kl = (size_t)(colon - p);
	const char *v = colon + 2;
	size_t vl = n - kl - 2;
	struct sng_entry *e = &st->e[st->n - 1];
	double x;
	bool ok = metrics_parse_nonneg(v, vl, &x) == 0;
#define KEY_IS(s) (kl == sizeof(s) - 1 && memcmp(p, s, kl) == 0)
	if (KEY_IS("bogo-ops"))
		e->ops = x, e->have_ops = ok;
	else if (KEY_IS("bogo-ops-per-second-real-time"))
		e->per_s = x, e->have_per_s = ok;
	else if (KEY_IS("bogo-ops-per-second-usr-sys-time"))
		e->per_cpu_s = x, e->have_per_cpu_s = ok;
	else if ((kl > 13 && memcmp(p, "nanosecs-per-", 13) == 0) ||
		 (kl > 16 && memcmp(p, "ns-duration-per-", 16) == 0))
		e->ns_per_op = x, e->have_ns = ok;
	else
		return 0;
#undef KEY_IS
	if (!ok) {
		st->why = "a bogo-ops or nanoseconds value is not a number";
		return 1;
	}
	return 0;
}

static void add(json_object *m, const char *prefix, const char *name, double v)
{
	char key[METRICS_MAX_NAME + 1];
	snprintf(key, sizeof(key), "%s.%s", prefix, name);
	json_object_object_add(m, key, metrics_number(v));
}

int metrics_stress_ng(const char *yaml_text, json_object **ret_metrics, json_object **ret_details,
		      struct sl_error *err)
{
	if (!yaml_text)
		return error_set(err, ERR_INVALID, 0, "stress-ng wrote no YAML file.");
	struct sng_state *st = calloc(1, sizeof(*st));
	if (!st)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	int r = metrics_each_line(yaml_text, strlen(yaml_text), "stress-ng YAML file", sng_line, st,
				  err);
	if (r == 1)
		r = error_set(err, ERR_INVALID, 0, "stress-ng's YAML file is not understood: %s.",
			      st->why);
	else if (r == 0 && st->n == 0)
		r = error_set(err, ERR_INVALID, 0,
			      "stress-ng's YAML file has no metrics (no 'metrics:' list of "
			      "stressors).");
	for (size_t i = 0; r == 0 && i < st->n; i++)
		if (!st->e[i].have_per_s || !st->e[i].have_ops || !st->e[i].have_per_cpu_s)
			r = error_set(err, ERR_INVALID, 0,
				      "stress-ng's YAML file gives the stressor '%s' no bogo-ops "
				      "and bogo-ops per second.",
				      st->e[i].name);
	if (r < 0) {
		free(st);
		return r;
	}
	json_object *m = json_object_new_object();
	json_object *d = json_object_new_object();
	for (size_t i = 0; i < st->n; i++) {
		const struct sng_entry *e = &st->e[i];
		add(m, "bogo_ops_per_s", e->name, e->per_s);
		add(m, "bogo_ops_per_cpu_s", e->name, e->per_cpu_s);
		if (e->have_ns)
			add(m, "ns_per_op", e->name, e->ns_per_op);
		add(d, "bogo_ops", e->name, e->ops);
	}
	free(st);
	*ret_metrics = m;
	*ret_details = d;
	return 0;
}

static int stress_ng_parse(const struct metrics_output *out, json_object *workload_spec,
			   json_object **ret_metrics, json_object **ret_details,
			   struct sl_error *err)
{
	(void)workload_spec;
	return metrics_stress_ng(out->json_text, ret_metrics, ret_details, err);
}

/* Per stressor S: throughput (higher) and the time of one operation
 * (lower). A stressor's name is no tail, whatever it is called. */
static const struct metrics_name stress_ng_names[] = {
    {"bogo_ops_per_s.*", "higher", false},
    {"bogo_ops_per_cpu_s.*", "higher", false},
    {"ns_per_op.*", "lower", false},
};

const struct metrics_plugin metrics_plugin_stress_ng = {
    .tool = "stress-ng",
    METRICS_NAMES(stress_ng_names),
    .parse = stress_ng_parse,
};
