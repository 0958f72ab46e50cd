/* The sched_ext scheduler allow-list and its option rules; see sched_ext.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "job/sched_ext.h"
#include "job/sched_ext_source.h"
#include "util/macro.h"
#include "util/parse.h"

#define MAX_OPTS 8

/* One getopt() option of a loader: -c, a flag or a number in [min, max].
 * max < 0 means "the guest's vCPUs - 1" (a CPU number). */
struct scx_opt {
	char c;
	bool num;
	long min, max;
	const char *what;
};

struct scx_rules {
	const char *name;
	struct scx_opt opts[MAX_OPTS];
};

/* The options as each 6.12 loader's usage text gives them. A slice is
 * bounded to 1 us..1 s, counts to 10^9; the failure knobs of scx_qmap (-e:
 * scx_bpf_error() after COUNT enqueues; -t/-T: stall every COUNT'th user or
 * kernel thread, so the watchdog ejects it; -l: loop in dispatch) are kept on
 * purpose: a scheduler that gets ejected is a result schedlab records. */
static const struct scx_rules rules[] = {
    {"scx_simple", {{'f', false, 0, 0, "FIFO scheduling instead of weighted vtime"}}},
    {"scx_central",
     {{'s', true, 1, 1000000, "slice in us"}, {'c', true, 0, -1, "the central CPU"}}},
    {"scx_qmap",
     {{'s', true, 1, 1000000, "slice in us"},
      {'e', true, 1, 1000000000, "scx_bpf_error() after COUNT enqueues"},
      {'t', true, 1, 1000000000, "stall every COUNT'th user thread"},
      {'T', true, 1, 1000000000, "stall every COUNT'th kernel thread"},
      {'l', true, 1, 1000000000, "loop in dispatch after COUNT dispatches"},
      {'b', true, 1, 4096, "dispatch up to COUNT tasks together"},
      {'H', false, 0, 0, "boost nice -20 tasks"}}},
    {"scx_flatcg",
     {{'s', true, 1, 1000000, "slice in us"}, {'f', false, 0, 0, "FIFO within a cgroup"}}},
};

static const char *const names[] = {"scx_simple", "scx_central", "scx_qmap", "scx_flatcg", NULL};

const char *const *sched_ext_schedulers(void)
{
	return names;
}

static const struct scx_rules *find_rules(const char *name)
{
	for (size_t i = 0; name && i < ELEMENTSOF(rules); i++)
		if (strcmp(rules[i].name, name) == 0)
			return &rules[i];
	return NULL;
}

bool sched_ext_scheduler_known(const char *name)
{
	return find_rules(name) != NULL;
}

static int bad_arg(struct sl_error *err, const char *path, size_t i, const char *sched,
		   const char *arg, const char *why)
{
	char p[256];
	snprintf(p, sizeof(p), "%s.args[%zu]", path, i);
	return error_set_path(err, ERR_INVALID, p, "The %s argument '%.64s' %s.", sched, arg, why);
}

static void accepted(const struct scx_rules *t, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < MAX_OPTS && t->opts[i].c && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s-%c%s (%s)", i ? ", " : "",
				       t->opts[i].c, t->opts[i].num ? " N" : "", t->opts[i].what);
	if (!t->opts[0].c)
		snprintf(buf, len, "none");
}

int sched_ext_check(json_object *scx, const char *path, int vcpus, struct sl_error *err)
{
	json_object *s = NULL, *args = NULL, *src = NULL;
	json_object_object_get_ex(scx, "args", &args);
	if (json_object_object_get_ex(scx, "source", &src)) {
		if (json_object_object_get_ex(scx, "scheduler", NULL))
			return error_set_path(err, ERR_INVALID, path,
					      "Give either \"scheduler\" (one of the tree's "
					      "examples) or \"source\" (your own), not both.");
		int r = sched_ext_source_check(src, args, path, err);
		json_object *n = NULL;
		json_object_object_get_ex(src, "name", &n);
		if (r == 0 && sched_ext_scheduler_known(json_object_get_string(n))) {
			char p[256];
			snprintf(p, sizeof(p), "%s.source.name", path);
			return error_set_path(
			    err, ERR_INVALID, p,
			    "'%s' is one of the tree's examples; name your own "
			    "scheduler differently (or use \"scheduler\": \"%s\").",
			    json_object_get_string(n), json_object_get_string(n));
		}
		return r;
	}
	const char *sched = json_object_object_get_ex(scx, "scheduler", &s) &&
				    json_object_is_type(s, json_type_string)
				? json_object_get_string(s)
				: NULL;
	const struct scx_rules *t = find_rules(sched);
	if (!t) {
		char p[256];
		snprintf(p, sizeof(p), "%s.scheduler", path);
		return error_set_path(err, ERR_INVALID, p,
				      "Scheduler '%.64s' is not one schedlab builds (accepted: "
				      "scx_simple, scx_central, scx_qmap, scx_flatcg).",
				      sched ? sched : "");
	}
	size_t n = json_object_is_type(args, json_type_array) ? json_object_array_length(args) : 0;
	bool seen[MAX_OPTS] = {false};
	char list[512];
	for (size_t i = 0; i < n; i++) {
		const char *arg = json_object_get_string(json_object_array_get_idx(args, i));
		const struct scx_opt *o = NULL;
		for (size_t k = 0; arg && arg[0] == '-' && k < MAX_OPTS && t->opts[k].c; k++)
			if (arg[1] == t->opts[k].c && (arg[2] == '\0' || t->opts[k].num))
				o = &t->opts[k];
		if (!o) {
			char why[640];
			accepted(t, list, sizeof(list));
			snprintf(why, sizeof(why), "is not one schedlab accepts (accepted: %s)",
				 list);
			return bad_arg(err, path, i, sched, arg ? arg : "", why);
		}
		size_t k = (size_t)(o - t->opts);
		if (seen[k])
			return bad_arg(err, path, i, sched, arg, "is given twice");
		seen[k] = true;
		if (!o->num)
			continue;
		const char *v = arg + 2;
		if (*v == '\0') {
			if (i + 1 == n)
				return bad_arg(err, path, i, sched, arg, "needs a number after it");
			v = json_object_get_string(json_object_array_get_idx(args, ++i));
		}
		long max = o->max < 0 ? (long)vcpus - 1 : o->max, val;
		if (!v || v[0] < '0' || v[0] > '9' || parse_int(v, o->min, max, &val) < 0) {
			char why[128];
			snprintf(why, sizeof(why), "needs a whole number from %ld to %ld (%s)",
				 o->min, max, o->what);
			return bad_arg(err, path, i, sched, v ? v : "", why);
		}
	}
	return 0;
}
