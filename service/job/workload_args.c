/* Per-tool argument rules for the workloads; see workload_args.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "job/workload_args.h"
#include "util/macro.h"
#include "util/parse.h"

#define MAX_OPTS 16

/* One option a tool accepts: -s / --long, a flag or a number in [min, max]. */
struct opt {
	char shrt;	 /* 0: no short form */
	const char *lng; /* without the dashes */
	bool num;	 /* takes a number (next argument, --long=N or -sN) */
	long min, max;
};

struct tool_rules {
	const char *tool;
	/* A subcommand that must be args[0] (perf-bench-sched's benchmark), or
	 * NULL: then every argument is an option. */
	const char *sub;
	struct opt opts[MAX_OPTS];
	/* Options at least one of which must be given ("" ends the list). */
	const char *need[3];
	const char *need_why;
};

/* The bounds keep a run finite and its task count small: a guest has 2 to 16
 * vCPUs and 256 MiB to a few GiB. */
static const struct tool_rules rules[] = {
    {"hackbench",
     NULL,
     {{'p', "pipe", false, 0, 0},
      {'T', "threads", false, 0, 0},
      {'P', "process", false, 0, 0},
      {'F', "fifo", false, 0, 0},
      {'g', "groups", true, 1, 64},
      {'f', "fds", true, 1, 64},
      {'l', "loops", true, 1, 1000000},
      {'s', "datasize", true, 1, 65536}},
     {"pipe"},
     "the guest kernel has no networking (no sockets), so hackbench must use pipes"},
    {"pi_stress",
     NULL,
     {{'D', "duration", true, 1, 3600},
      {'g', "groups", true, 1, 64},
      {'i', "inversions", true, 1, 100000000},
      {'q', "quiet", false, 0, 0},
      {'r', "rr", false, 0, 0},
      {'u', "uniprocessor", false, 0, 0},
      {'m', "mlockall", false, 0, 0}},
     {"duration", "inversions"},
     "without them pi_stress runs until it is killed"},
    {"pip_stress", NULL, {{0, NULL, false, 0, 0}}, {NULL}, NULL},
    {"cyclicdeadline",
     NULL,
     {{'D', "duration", true, 1, 3600},
      {'t', "threads", true, 1, 64},
      {'i', "interval", true, 100, 1000000},
      {'s', "step", true, 1, 1000000},
      {'q', "quiet", false, 0, 0}},
     {"duration"},
     "without it cyclicdeadline runs until it is killed"},
    {"stress-ng",
     NULL,
     {{0, "switch", true, 0, 64},
      {0, "mutex", true, 0, 64},
      {0, "futex", true, 0, 64},
      {0, "yield", true, 0, 64},
      {0, "switch-ops", true, 1, 1000000000},
      {0, "mutex-ops", true, 1, 1000000000},
      {0, "futex-ops", true, 1, 1000000000},
      {0, "yield-ops", true, 1, 1000000000},
      {'t', "timeout", true, 1, 3600},
      {0, "metrics", false, 0, 0},
      {0, "metrics-brief", false, 0, 0}},
     {"timeout"},
     "without it stress-ng runs until it is killed"},
    {"wakeup",
     NULL,
     {{0, "message-threads", true, 1, 64},
      {0, "workers", true, 1, 64},
      {0, "seconds", true, 1, 3600},
      {0, "warmup-seconds", true, 0, 60},
      {0, "work-us", true, 0, 100000},
      {0, "sleep-us", true, 0, 1000000}},
     {NULL},
     NULL},
    /* schedlab's CPU (+ tmpfs I/O) load; --seconds 0 runs until stopped,
     * which only a load is (job/load.c refuses it elsewhere). */
    {"burn",
     NULL,
     {{0, "threads", true, 0, 256}, {0, "seconds", true, 0, 3600}, {0, "io-kib", true, 0, 1024}},
     {NULL},
     NULL},
    /* perf bench sched messaging: hackbench's exchange, groups of 20
     * senders and 20 receivers (perf 6.1 has no --fds), so 50 groups are
     * 2000 tasks, hackbench's bound. */
    {"perf-bench-sched",
     "messaging",
     {{'p', "pipe", false, 0, 0},
      {'t', "thread", false, 0, 0},
      {'g', "group", true, 1, 50},
      {'l', "nr_loops", true, 1, 1000000}},
     {"pipe"},
     "the guest kernel has no networking (no socketpair), so messaging must use pipes"},
    /* perf bench sched pipe: two tasks ping-pong over a pipe --loop times;
     * perf's default of 1000000 takes minutes under TCG. */
    {"perf-bench-sched",
     "pipe",
     {{'l', "loop", true, 1, 100000000}, {'T', "threaded", false, 0, 0}},
     {"loop"},
     "perf's default of 1000000 round trips takes minutes in a TCG guest"},
};

/* The rules for tool with args into *ret (NULL for a tool without rules);
 * for a tool with subcommands, args[0] must be one of them (*ret_first is
 * then 1). 0, or -EINVAL with err set when args[0] is not one. */
static int rules_for(const char *tool, json_object *args, const char *path,
		     const struct tool_rules **ret, size_t *ret_first, struct sl_error *err)
{
	bool has_subs = false;
	const char *arg0 =
	    json_type_array == json_object_get_type(args) && json_object_array_length(args) > 0
		? json_object_get_string(json_object_array_get_idx(args, 0))
		: NULL;
	char subs[128] = "";
	*ret = NULL;
	*ret_first = 0;
	for (size_t i = 0; tool && i < ELEMENTSOF(rules); i++) {
		if (strcmp(rules[i].tool, tool) != 0)
			continue;
		if (!rules[i].sub) {
			*ret = &rules[i];
			return 0;
		}
		has_subs = true;
		size_t at = strlen(subs);
		snprintf(subs + at, sizeof(subs) - at, "%s%s", at ? ", " : "", rules[i].sub);
		if (arg0 && strcmp(arg0, rules[i].sub) == 0) {
			*ret_first = 1;
			*ret = &rules[i];
			return 0;
		}
	}
	if (!has_subs)
		return 0;
	char p[192];
	snprintf(p, sizeof(p), "%s.args%s", path, arg0 ? "[0]" : "");
	if (!arg0)
		return error_set_path(
		    err, ERR_INVALID, p,
		    "The %s workload needs a benchmark as its first argument (one of: "
		    "%s).",
		    tool, subs);
	return error_set_path(
	    err, ERR_INVALID, p,
	    "The %s benchmark '%.64s' is not one schedlab accepts (accepted: %s).", tool, arg0,
	    subs);
}

static const struct opt *find_opt(const struct tool_rules *t, const char *arg, size_t *ret_len)
{
	for (size_t i = 0; i < MAX_OPTS && t->opts[i].lng; i++) {
		const struct opt *o = &t->opts[i];
		if (arg[1] == '-') {
			size_t n = strlen(o->lng);
			if (strncmp(arg + 2, o->lng, n) == 0 &&
			    (arg[2 + n] == '\0' || (o->num && arg[2 + n] == '='))) {
				*ret_len = 2 + n;
				return o;
			}
		} else if (o->shrt && arg[1] == o->shrt &&
			   (arg[2] == '\0' || (o->num && arg[2] != '\0'))) {
			*ret_len = 2;
			return o;
		}
	}
	return NULL;
}

/* The value of option lng if it was given, else def. */
static long opt_value(const struct tool_rules *t, const bool *seen, const long *value,
		      const char *lng, long def)
{
	for (size_t k = 0; k < MAX_OPTS && t->opts[k].lng; k++)
		if (strcmp(t->opts[k].lng, lng) == 0)
			return seen[k] ? value[k] : def;
	return def;
}

static int bad(struct sl_error *err, const char *path, size_t i, const char *tool, const char *arg,
	       const char *why)
{
	char p[192];
	snprintf(p, sizeof(p), "%s.args[%zu]", path, i);
	return error_set_path(err, ERR_INVALID, p, "The %s argument '%.64s' %s.", tool, arg, why);
}

static const char *allowed_list(const struct tool_rules *t, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < MAX_OPTS && t->opts[i].lng && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s--%s", i ? ", " : "", t->opts[i].lng);
	return t->opts[0].lng ? buf : "none";
}

int workload_args_check(const char *tool, json_object *args, const char *path, struct sl_error *err)
{
	const struct tool_rules *t = NULL;
	size_t first = 0;
	int r = rules_for(tool, args, path, &t, &first, err);
	if (r < 0 || !t)
		return r;
	bool seen[MAX_OPTS] = {false};
	long value[MAX_OPTS] = {0};
	size_t n =
	    json_type_array == json_object_get_type(args) ? json_object_array_length(args) : 0;
	char allowed[512];
	for (size_t i = first; i < n; i++) {
		const char *arg = json_object_get_string(json_object_array_get_idx(args, i));
		size_t len = 0;
		const struct opt *o =
		    arg && arg[0] == '-' && arg[1] ? find_opt(t, arg, &len) : NULL;
		if (arg && (strncmp(arg, "--json", 6) == 0 || strncmp(arg, "--yaml", 6) == 0))
			return bad(err, path, i, tool, arg,
				   "is schedlab's own: it adds the output file itself");
		if (!o) {
			char why[640];
			snprintf(why, sizeof(why), "is not one schedlab accepts (accepted: %s)",
				 allowed_list(t, allowed, sizeof(allowed)));
			return bad(err, path, i, tool, arg ? arg : "", why);
		}
		size_t k = (size_t)(o - t->opts);
		if (seen[k])
			return bad(err, path, i, tool, arg, "is given twice");
		seen[k] = true;
		if (!o->num)
			continue;
		const char *v = arg + len;
		if (*v == '=' && len > 2) /* --long=N; -s=N would pass "=N" */
			v++;
		else if (*v == '\0') {
			if (i + 1 == n)
				return bad(err, path, i, tool, arg, "needs a number after it");
			v = json_object_get_string(json_object_array_get_idx(args, ++i));
		}
		if (!v || v[0] < '0' || v[0] > '9' || parse_int(v, o->min, o->max, &value[k]) < 0) {
			char why[96];
			snprintf(why, sizeof(why), "needs a whole number from %ld to %ld", o->min,
				 o->max);
			return bad(err, path, i, tool, v ? v : "", why);
		}
	}
	if (t->need[0]) {
		bool have = false;
		for (size_t j = 0; j < ELEMENTSOF(t->need) && t->need[j]; j++)
			for (size_t k = 0; k < MAX_OPTS && t->opts[k].lng; k++)
				if (seen[k] && strcmp(t->opts[k].lng, t->need[j]) == 0)
					have = true;
		if (!have) {
			char p[192];
			snprintf(p, sizeof(p), "%s.args", path);
			return error_set_path(err, ERR_INVALID, p,
					      "The %s workload needs --%s%s%s: %s.", tool,
					      t->need[0], t->need[1] ? " or --" : "",
					      t->need[1] ? t->need[1] : "", t->need_why);
		}
	}
	if (strcmp(tool, "hackbench") == 0) {
		/* groups x fds senders and as many receivers: 10 x 20 x 2 by default */
		long g = opt_value(t, seen, value, "groups", 10);
		long f = opt_value(t, seen, value, "fds", 20);
		if (g * f * 2 > 2048) {
			char p[192];
			snprintf(p, sizeof(p), "%s.args", path);
			return error_set_path(err, ERR_INVALID, p,
					      "hackbench would start %ld tasks (--groups x --fds x "
					      "2); at most 2048 are accepted.",
					      g * f * 2);
		}
	}
	if (strcmp(tool, "stress-ng") == 0 && opt_value(t, seen, value, "switch", -1) < 0 &&
	    opt_value(t, seen, value, "mutex", -1) < 0 &&
	    opt_value(t, seen, value, "futex", -1) < 0 &&
	    opt_value(t, seen, value, "yield", -1) < 0) {
		char p[192];
		snprintf(p, sizeof(p), "%s.args", path);
		return error_set_path(
		    err, ERR_INVALID, p,
		    "The stress-ng workload needs at least one stressor: --switch, "
		    "--mutex, --futex or --yield.");
	}
	/* flags have the value 0 when given */
	if (strcmp(tool, "stress-ng") == 0 && opt_value(t, seen, value, "metrics", -1) < 0 &&
	    opt_value(t, seen, value, "metrics-brief", -1) < 0) {
		char p[192];
		snprintf(p, sizeof(p), "%s.args", path);
		return error_set_path(err, ERR_INVALID, p,
				      "The stress-ng workload needs --metrics or --metrics-brief: "
				      "without them stress-ng writes no metrics to its YAML file.");
	}
	return 0;
}
