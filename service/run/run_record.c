#include <string.h>
#include <stdbool.h>
#include <unistd.h>

#include "compare/noise.h"
#include "proto/utf8.h"
#include "run/agent_frames.h"
#include "run/run_key.h"
#include "run/run_record.h"
#include "util/cpu_list.h"
#include "metrics/metrics.h"
#include "util/hash.h"
#include "util/json_get.h"
#include "util/time.h"

void run_record_id(const char *job_dir, const char *key, char ret_id[static RUN_RECORD_ID_LEN])
{
	char h[HASH_HEX_LEN], now[TIME_ISO8601_MAX];
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s|%s|%s|%llu|%d", job_dir, key, time_now_iso8601(now),
		 (unsigned long long)time_monotonic_ns(), (int)getpid());
	hash_buf_hex(buf, strlen(buf), h);
	snprintf(ret_id, RUN_RECORD_ID_LEN, "%.16s", h);
}

json_object *run_record_new(const struct run_key *key, const char *run_id, const char *host,
			    const char *started_at)
{
	char buf[RUN_KEY_STRLEN];
	json_object *run = json_object_new_object();
	json_object_object_add(run, "key", json_object_new_string(run_key_format(key, buf)));
	json_object_object_add(run, "run_id", json_object_new_string(run_id));
	json_object_object_add(run, "repeat", json_object_new_int(key->repeat));
	json_object_object_add(run, "status", json_object_new_string("ok"));
	json_object_object_add(run, "host", json_object_new_string(host));
	json_object_object_add(run, "started_at", json_object_new_string(started_at));
	return run;
}

void run_record_add_volumes(json_object *run, const struct volume_ref *kernel,
			    const struct volume_ref *initrd)
{
	json_object *vols = json_object_new_object();
	const struct volume_ref *refs[] = {kernel, initrd};
	for (size_t i = 0; i < ELEMENTSOF(refs); i++) {
		json_object *v = json_object_new_object();
		json_object_object_add(v, "volume", json_object_new_string(refs[i]->name));
		json_object_object_add(v, "uploaded", json_object_new_boolean(refs[i]->uploaded));
		json_object_object_add(v, "bytes", json_object_new_int64((int64_t)refs[i]->bytes));
		json_object_object_add(v, "seconds", json_object_new_double(refs[i]->seconds));
		json_object_object_add(vols, i == 0 ? "kernel" : "initrd", v);
	}
	json_object_object_add(run, "volumes", vols);
}

void run_record_set_pinning(json_object *run, const struct guest_pinning *pin, json_object *applied)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "pinned", json_object_new_boolean(pin->pinned));
	json_object_object_add(run, "pinning", o);
	if (!pin->pinned) {
		json_object_object_add(o, "reason", json_object_new_string(pin->reason));
		return;
	}
	json_object *v = json_object_new_array();
	for (int i = 0; i < pin->n_vcpus; i++)
		json_object_array_add(v, json_object_new_int(pin->vcpu_cpu[i]));
	json_object_object_add(o, "vcpus", v);
	json_object_object_add(o, "emulator", json_object_new_string(pin->emulator));
	json_object_object_add(o, "applied", json_object_get(applied));
	if (!applied)
		return;
	bool same = json_object_array_length(applied) == (size_t)pin->n_vcpus;
	for (int i = 0; same && i < pin->n_vcpus; i++) {
		char want[16];
		snprintf(want, sizeof(want), "%d", pin->vcpu_cpu[i]);
		same = strcmp(json_object_get_string(json_object_array_get_idx(applied, (size_t)i)),
			      want) == 0;
	}
	if (!same)
		run_record_fail(run, "error",
				"libvirt did not pin the vCPUs to the host CPUs chosen "
				"(pinning.vcpus against pinning.applied).");
}

void run_record_set_outcome(json_object *run, const struct job *job, const char *accelerator,
			    const struct guest_outcome *out, double duration_s)
{
	json_object_object_add(run, "accelerator", json_object_new_string(accelerator));
	json_object_object_add(run, "status", json_object_new_string(out->status));
	if (out->reason)
		json_object_object_add(run, "reason", json_object_new_string(out->reason));
	json_object_object_add(run, "boot_seconds", json_object_new_double(out->agent_start_s));
	json_object_object_add(run, "duration_seconds", json_object_new_double(duration_s));
	json_object_object_add(run, "kernel_events",
			       out->events ? json_object_get(out->events)
					   : json_object_new_array());
	json_object_object_add(run, "host_interference", json_object_get(out->interference));
	noise_mark_run(run, job->noise_limit_pct);
	run_record_fill(run, job, out->frames);
	const char *st = json_member_string(run, "status");
	if (st && strcmp(st, "ok") != 0 && out->console_tail) {
		size_t len = strlen(out->console_tail);
		const char *tail =
		    out->console_tail +
		    (len > RUN_RECORD_CONSOLE_MAX ? len - RUN_RECORD_CONSOLE_MAX : 0);
		json_object_object_add(run, "console_excerpt", json_object_new_string(tail));
	}
}

void run_record_fail(json_object *run, const char *status, const char *reason)
{
	const char *cur = json_member_string(run, "status");
	if (cur && strcmp(cur, "ok") != 0)
		return;
	json_object_object_add(run, "status", json_object_new_string(status));
	/* A reason may quote a guest's text cut by snprintf in the middle of a
	 * UTF-8 sequence: a result must stay valid UTF-8 to be read back. */
	size_t len = strlen(reason), bad = 0;
	if (utf8_valid(reason, len, &bad)) {
		json_object_object_add(run, "reason", json_object_new_string(reason));
		return;
	}
	char *clean = strdup(reason);
	for (size_t at = bad; clean && at < len;) {
		size_t n = utf8_seq_len(clean + at, len - at);
		if (n == 0)
			clean[at++] = '?';
		else
			at += n;
	}
	json_object_object_add(run, "reason", json_object_new_string(clean ? clean : "?"));
	free(clean);
}

/* One workload's record from its frame; returns false (with *why) when it failed. */
static json_object *workload_record(const struct job_workload *w, json_object *payload, int index,
				    char *why, size_t why_len)
{
	const char *name = w->name, *tool = w->tool;
	json_object *rec = json_object_new_object();
	json_object_object_add(rec, "name", json_object_new_string(name));
	json_object_object_add(rec, "tool", json_object_new_string(tool));
	why[0] = '\0';
	if (!payload) {
		snprintf(why, why_len, "workload %d '%s' sent no result frame", index, name);
		json_object_object_add(rec, "status", json_object_new_string("missing"));
		return rec;
	}
	/* agent_frames_read() checked the types and bounds of these. */
	json_object *ec = json_member(payload, "exit_code");
	int exit_code = ec ? json_object_get_int(ec) : -1;
	json_object_object_add(rec, "exit_code", json_object_new_int(exit_code));
	json_object *sg = json_member(payload, "signal");
	int sig = json_object_is_type(sg, json_type_int) ? json_object_get_int(sg) : 0;
	json_object *to = json_member(payload, "timed_out");
	const char *agent_err = json_member_string(payload, "error");
	char short_of[300];
	if (to && json_object_get_boolean(to)) {
		snprintf(why, why_len, "workload '%s' timed out", name);
		json_object_object_add(rec, "status", json_object_new_string("timeout"));
	} else if (agent_err) {
		snprintf(why, why_len, "workload '%s' could not run: %.*s", name,
			 (int)json_utf8_cut(agent_err, strlen(agent_err), 300, false), agent_err);
		json_object_object_add(rec, "status", json_object_new_string("error"));
	} else if (metrics_load_shortfall(payload, w->spec, short_of, sizeof(short_of))) {
		/* a load that did not load: never a quiet idle measurement */
		snprintf(why, why_len, "load '%s' did not load: %s", name, short_of);
		json_object_object_add(rec, "status", json_object_new_string("error"));
	} else if (exit_code != 0 || sig > 0) {
		/* A tool that stops itself with a signal (pi_stress's watchdog
		 * sends SIGTERM to its process group) failed too. */
		char reason[256], how[48];
		if (sig > 0)
			snprintf(how, sizeof(how), "was killed by signal %d", sig);
		else
			snprintf(how, sizeof(how), "exited with status %d", exit_code);
		if (metrics_failure_reason(tool, payload, reason, sizeof(reason)))
			snprintf(why, why_len, "workload '%s' %s: %s", name, how, reason);
		else
			snprintf(why, why_len, "workload '%s' %s", name, how);
		json_object_object_add(rec, "status", json_object_new_string("failed"));
	}
	if (why[0]) {
		const char *se = json_member_string(payload, "stderr");
		if (se) {
			/* the tail, cut where a UTF-8 sequence starts */
			size_t len = strlen(se), keep = json_utf8_cut(se, len, 2048, true);
			json_object_object_add(rec, "stderr_tail",
					       json_object_new_string(se + len - keep));
		}
		return rec;
	}
	json_object *metrics = NULL, *details = NULL;
	struct sl_error err = {0};
	if (metrics_from_workload(tool, payload, w->spec, &metrics, &details, &err) < 0) {
		/* The message is for people: a cut-off tail is acceptable. */
		int n = snprintf(why, why_len, "output of workload '%s' does not parse: ", name);
		if (n > 0 && (size_t)n < why_len)
			snprintf(why + n, why_len - (size_t)n, "%.400s", err.message);
		json_object_object_add(rec, "status", json_object_new_string("error"));
		return rec;
	}
	json_object_object_add(rec, "status", json_object_new_string("ok"));
	json_object_object_add(rec, "metrics", metrics);
	json_object_object_add(rec, "details", details ? details : json_object_new_object());
	return rec;
}

/* "sched_ext": {scheduler, state, ops, exit_reason} from the summary's
 * section (agent/scx.h); a scheduler that did not load, did not read back
 * enabled with its own ops, or was ejected during the run fails the run with
 * status "sched_ext_failed" (docs/sched-ext.md). */
static void sched_ext_record(json_object *run, const struct job *job, json_object *summary)
{
	const struct job_variant *v = NULL;
	const char *key = json_member_string(run, "key");
	struct run_key k;
	if (key && run_key_parse(key, &k) == 0)
		v = job_find_variant(job, k.variant);
	json_object *scx = json_member(summary, "sched_ext");
	if (!scx && !(v && v->scx_scheduler))
		return;
	json_object *rec = json_object_new_object();
	const char *sched =
	    v && v->scx_scheduler ? v->scx_scheduler : json_member_string(scx, "scheduler");
	json_object_object_add(rec, "scheduler", json_object_new_string(sched ? sched : ""));
	const char *fields[] = {"state", "ops", "state_end", "exit_reason", "loader_exit"};
	for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
		const char *val = json_member_string(scx, fields[i]);
		if (val || i < 2)
			json_object_object_add(rec, fields[i],
					       json_object_new_string(val ? val : ""));
	}
	json_object *ms = json_member(scx, "enable_ms");
	if (json_object_is_type(ms, json_type_int))
		json_object_object_add(rec, "enable_ms", json_object_get(ms));
	json_object_object_add(run, "sched_ext", rec);
	const char *error = json_member_string(scx, "error");
	char why[1200];
	if (!scx && summary)
		snprintf(why, sizeof(why),
			 "the agent did not start the sched_ext scheduler '%s' (its summary has no "
			 "sched_ext section)",
			 sched ? sched : "?");
	else if (error)
		snprintf(why, sizeof(why), "%s", error);
	else
		return;
	run_record_fail(run, "sched_ext_failed", why);
}

/* "numa": [{"node", "cpus", "memory_mb"}] from the agent's untrusted list:
 * at most GUEST_NUMA_MAX nodes, node numbers 0..7, cpus a CPU list the
 * host parses (re-formatted), memory rounded down to MiB. Entries that are
 * not are left out. *masks gets each kept node's CPUs; returns how many. */
static size_t numa_record(json_object *rec, json_object *numa, uint64_t masks[GUEST_NUMA_MAX])
{
	size_t n = json_object_is_type(numa, json_type_array) ? json_object_array_length(numa) : 0;
	size_t kept = 0;
	json_object *out = n ? json_object_new_array() : NULL;
	for (size_t i = 0; i < n && kept < GUEST_NUMA_MAX; i++) {
		json_object *e = json_object_array_get_idx(numa, i);
		json_object *node = json_member(e, "node"), *kb = json_member(e, "memory_kb");
		const char *cpus = json_object_get_string(json_member(e, "cpus"));
		uint64_t mask = 0;
		int64_t id =
		    json_object_is_type(node, json_type_int) ? json_object_get_int64(node) : -1;
		if (id < 0 || id >= GUEST_NUMA_MAX ||
		    !json_object_is_type(json_member(e, "cpus"), json_type_string) ||
		    strlen(cpus) > CPU_LIST_TEXT_MAX ||
		    (cpus[0] && cpu_list_parse(cpus, &mask) < 0))
			continue;
		char list[CPU_LIST_TEXT_MAX];
		cpu_list_format(mask, list, sizeof(list));
		json_object *o = json_object_new_object();
		json_object_object_add(o, "node", json_object_new_int((int)id));
		json_object_object_add(o, "cpus", json_object_new_string(list));
		int64_t k = json_object_is_type(kb, json_type_int) ? json_object_get_int64(kb) : -1;
		json_object_object_add(
		    o, "memory_mb",
		    k >= 0 && k < (INT64_C(1) << 40) ? json_object_new_int64(k / 1024) : NULL);
		json_object_array_add(out, o);
		masks[kept++] = mask;
	}
	if (out)
		json_object_object_add(rec, "numa", out);
	return kept;
}

/* Whether the guest's nodes (masks, in node order) are the job's. */
static bool numa_matches(const struct job_guest *g, const uint64_t *masks, size_t n)
{
	if (n != g->n_numa)
		return false;
	for (size_t i = 0; i < n; i++)
		if (masks[i] != g->numa[i].cpus)
			return false;
	return true;
}

/* "topology": {cpus, sockets, cores, threads, sched_domains} as the guest's
 * sysfs gave them (the agent's summary is untrusted: numbers are bounded,
 * domain names kept only when short and plain). When the job asked for a
 * topology (guest.topology) and the guest saw another, the run fails naming
 * both (docs/guests.md "Topology"). */
static void topology_record(json_object *run, const struct job *job, json_object *summary)
{
	json_object *t = json_member(summary, "topology");
	if (!t)
		return;
	json_object *rec = json_object_new_object();
	const char *fields[] = {"cpus", "sockets", "cores", "threads"};
	int v[4];
	for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
		json_object *x = json_member(t, fields[i]);
		int64_t n = json_object_is_type(x, json_type_int) ? json_object_get_int64(x) : -1;
		v[i] = n >= 0 && n <= 4096 ? (int)n : -1;
		json_object_object_add(rec, fields[i],
				       v[i] >= 0 ? json_object_new_int(v[i]) : NULL);
	}
	json_object *names = json_member(t, "sched_domains"), *kept = NULL;
	size_t n_names =
	    json_object_is_type(names, json_type_array) ? json_object_array_length(names) : 0;
	for (size_t i = 0; i < n_names && i < 8; i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(names, i));
		size_t len = name ? strlen(name) : 0;
		if (len == 0 || len > 16 ||
		    strspn(name,
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
			len)
			continue;
		if (!kept)
			kept = json_object_new_array();
		json_object_array_add(kept, json_object_new_string(name));
	}
	json_object_object_add(rec, "sched_domains", kept);
	uint64_t masks[GUEST_NUMA_MAX];
	size_t n_numa = numa_record(rec, json_member(t, "numa"), masks);
	json_object_object_add(run, "topology", rec);
	const struct job_guest *g = &job->guest;
	char why[300];
	if (g->n_numa && !numa_matches(g, masks, n_numa)) {
		char want[64 * GUEST_NUMA_MAX] = "", saw[64 * GUEST_NUMA_MAX] = "";
		for (size_t i = 0; i < g->n_numa; i++) {
			char list[CPU_LIST_TEXT_MAX];
			cpu_list_format(g->numa[i].cpus, list, sizeof(list));
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%.60s",
				 i ? " | " : "", list);
		}
		for (size_t i = 0; i < n_numa; i++) {
			char list[CPU_LIST_TEXT_MAX];
			cpu_list_format(masks[i], list, sizeof(list));
			snprintf(saw + strlen(saw), sizeof(saw) - strlen(saw), "%s%.60s",
				 i ? " | " : "", list);
		}
		snprintf(why, sizeof(why),
			 "the guest saw %zu NUMA node(s) (%.100s), not the job's guest.numa %zu "
			 "(%.100s)",
			 n_numa, n_numa ? saw : "none", g->n_numa, want);
		run_record_fail(run, "error", why);
		return;
	}
	if (!g->sockets || (v[1] == g->sockets && v[2] == g->cores && v[3] == g->threads))
		return;
	snprintf(
	    why, sizeof(why),
	    "the guest saw %d socket(s) x %d core(s) x %d thread(s), not the job's guest.topology "
	    "%d x %d x %d",
	    v[1], v[2], v[3], g->sockets, g->cores, g->threads);
	run_record_fail(run, "error", why);
}

/* bytes of the agent's taskstats_error kept in the run (a guest's string) */
#define TASKSTATS_ERROR_MAX 256

/* "agent_errors": the summary's errors lists (checked: arrays of bounded
 * strings), at most AGENT_ERRORS_KEPT of them and a count of the rest; the
 * run fails with the first. */
static void agent_errors_record(json_object *run, json_object *summary)
{
	json_object *lists[4] = {NULL};
	const char *sections[] = {"features", "tunables", "cgroups"};
	for (size_t s = 0; s < ELEMENTSOF(sections); s++)
		lists[s] = json_member(json_member(summary, sections[s]), "errors");
	lists[3] = json_member(summary, "errors");
	json_object *errors = json_object_new_array();
	size_t more = 0;
	for (size_t l = 0; l < ELEMENTSOF(lists); l++) {
		size_t n = json_object_is_type(lists[l], json_type_array)
			       ? json_object_array_length(lists[l])
			       : 0;
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_item(lists[l], i);
			if (json_object_array_length(errors) < AGENT_ERRORS_KEPT)
				json_object_array_add(errors, json_object_get(e));
			else
				more++;
		}
	}
	if (more > 0) {
		char note[96];
		snprintf(note, sizeof(note), "(%zu more errors from the agent not kept)", more);
		json_object_array_add(errors, json_object_new_string(note));
	}
	if (json_object_array_length(errors) > 0) {
		char why[AGENT_ERROR_MAX_BYTES + 64];
		snprintf(why, sizeof(why), "the agent reported: %s",
			 json_object_get_string(json_item(errors, 0)));
		run_record_fail(run, "error", why);
	}
	json_object_object_add(run, "agent_errors", errors);
}

void run_record_fill(json_object *run, const struct job *job, json_object *frames)
{
	char why[512];
	struct agent_frames af;
	struct sl_error err = {0};
	/* first: a frame that is not what the agent sends is the run's error,
	 * and is read no further */
	if (agent_frames_read(frames, job->n_workloads, &af, &err) < 0)
		run_record_fail(run, "error", err.message);
	json_object *summary = af.summary;
	/* then: a scheduler that failed explains the workloads that did not run */
	sched_ext_record(run, job, summary);
	json_object *wls = json_object_new_array();
	json_object_object_add(run, "workloads", wls);
	for (size_t i = 0; i < job->n_workloads; i++) {
		json_object *payload = i < af.n_workloads ? af.workloads[i] : NULL;
		json_object *rec =
		    workload_record(&job->workloads[i], payload, (int)i, why, sizeof(why));
		json_object_array_add(wls, rec);
		if (why[0])
			run_record_fail(run, "error", why);
	}
	agent_frames_done(&af);
	if (!summary) {
		run_record_fail(run, "error", "the agent sent no summary frame");
		return;
	}
	json_object *applied = json_member(json_member(summary, "features"), "applied");
	json_object_object_add(run, "features_applied",
			       applied ? json_object_get(applied) : json_object_new_array());
	agent_errors_record(run, summary);
	/* a schedstat kernel whose agent could not read taskstats: why the
	 * tasks' run delays are missing (docs/workloads.md "schedstat") */
	json_object *tse = json_member(summary, "taskstats_error");
	if (json_object_is_type(tse, json_type_string))
		json_object_object_add(
		    run, "taskstats_error",
		    json_object_get_string_len(tse) <= TASKSTATS_ERROR_MAX
			? json_object_get(tse)
			: json_object_new_string("(the agent's reason was too long)"));
	json_object *uname = json_member(summary, "uname");
	if (uname)
		json_object_object_add(run, "guest_kernel", json_object_get(uname));
	topology_record(run, job, summary);
}
