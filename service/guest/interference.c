/* Host interference per run from libvirt's domain and node statistics and,
 * on a local host, /proc. See interference.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "guest/interference.h"
#include "util/fs.h"
#include "util/parse.h"
#include "util/time.h"

int interference_parse_proc_stat(const char *text, uint64_t *ret_steal, uint64_t *ret_total)
{
	/* cpu  user nice system idle iowait irq softirq steal guest guest_nice;
	 * guest time is already counted in user, so it is not added twice. */
	if (!text || strncmp(text, "cpu ", 4) != 0)
		return -EINVAL;
	uint64_t v[8] = {0};
	int n = sscanf(text + 4,
		       "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		       " %" SCNu64 " %" SCNu64,
		       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 4)
		return -EINVAL;
	uint64_t total = 0;
	for (int i = 0; i < n; i++)
		total += v[i];
	*ret_steal = n >= 8 ? v[7] : 0;
	*ret_total = total;
	return 0;
}

int interference_parse_loadavg(const char *text, double *ret_load1)
{
	char first[32];
	double l;
	if (!text)
		return -EINVAL;
	/* "0.52 0.58 0.59 1/123 4567": the first field. */
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(text, " \t\n"), text);
	if (parse_double(first, &l) < 0 || l < 0)
		return -EINVAL;
	*ret_load1 = l;
	return 0;
}

static void sample_vcpus(virDomainPtr dom, struct interference_sample *s)
{
	virDomainPtr doms[2] = {dom, NULL};
	virDomainStatsRecordPtr *records = NULL;
	s->nvcpus = 0;
	s->have_delay = false;
	if (!dom || virDomainListGetStats(doms, VIR_DOMAIN_STATS_VCPU, &records, 0) < 1) {
		virResetLastError();
		return;
	}
	virDomainStatsRecordPtr rec = records[0];
	int maxv = -1;
	for (int i = 0; i < rec->nparams; i++) {
		virTypedParameterPtr p = &rec->params[i];
		unsigned idx;
		char field[16];
		/* The 9.0 headers have no macro for "delay"; the name is stable. */
		if (sscanf(p->field, "vcpu.%u.%15s", &idx, field) != 2 ||
		    idx >= INTERFERENCE_MAX_VCPUS || p->type != VIR_TYPED_PARAM_ULLONG)
			continue;
		if (strcmp(field, "time") == 0)
			s->vcpu_time_ns[idx] = p->value.ul;
		else if (strcmp(field, "delay") == 0) {
			s->vcpu_delay_ns[idx] = p->value.ul;
			s->have_delay = true;
		} else
			continue;
		if ((int)idx > maxv)
			maxv = (int)idx;
	}
	s->nvcpus = maxv + 1;
	virDomainStatsRecordListFree(records);
}

static void sample_node(virDomainPtr dom, struct interference_sample *s)
{
	virConnectPtr conn = dom ? virDomainGetConnect(dom) : NULL;
	int n = 0;
	s->have_node = false;
	if (!conn || virNodeGetCPUStats(conn, VIR_NODE_CPU_STATS_ALL_CPUS, NULL, &n, 0) < 0 ||
	    n <= 0 || n > 16) {
		virResetLastError();
		return;
	}
	virNodeCPUStats params[16];
	if (virNodeGetCPUStats(conn, VIR_NODE_CPU_STATS_ALL_CPUS, params, &n, 0) < 0) {
		virResetLastError();
		return;
	}
	uint64_t busy = 0, idle = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(params[i].field, VIR_NODE_CPU_STATS_IDLE) == 0 ||
		    strcmp(params[i].field, VIR_NODE_CPU_STATS_IOWAIT) == 0)
			idle += params[i].value;
		else if (strcmp(params[i].field, VIR_NODE_CPU_STATS_KERNEL) == 0 ||
			 strcmp(params[i].field, VIR_NODE_CPU_STATS_USER) == 0)
			busy += params[i].value;
	}
	s->node_busy_ns = busy;
	s->node_total_ns = busy + idle;
	s->have_node = s->node_total_ns > 0;
}

static void sample_guest_cpu(virDomainPtr dom, struct interference_sample *s)
{
	virDomainInfo info;
	s->have_guest_cpu = false;
	if (!dom || virDomainGetInfo(dom, &info) < 0) {
		virResetLastError();
		return;
	}
	s->guest_cpu_ns = info.cpuTime;
	s->have_guest_cpu = true;
}

static void sample_proc(struct interference *t, struct interference_sample *s)
{
	char buf[512];
	s->have_stat = false;
	if (!t->local)
		return;
	FILE *f = fopen("/proc/stat", "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			s->have_stat = interference_parse_proc_stat(buf, &s->steal_ticks,
								    &s->total_ticks) == 0;
		fclose(f);
	}
	f = fopen("/proc/loadavg", "re");
	if (f) {
		double l;
		if (fgets(buf, sizeof(buf), f) && interference_parse_loadavg(buf, &l) == 0 &&
		    l > t->load_max)
			t->load_max = l;
		fclose(f);
	}
}

static void take(struct interference *t, virDomainPtr dom, struct interference_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->mono_s = time_monotonic_s();
	sample_vcpus(dom, s);
	sample_node(dom, s);
	sample_guest_cpu(dom, s);
	sample_proc(t, s);
}

void interference_begin(struct interference *t, virDomainPtr dom, bool local)
{
	memset(t, 0, sizeof(*t));
	t->local = local;
	t->load_max = -1;
	take(t, dom, &t->first);
	t->started = true;
}

bool interference_add_sample(struct interference *t, const struct interference_sample *s)
{
	const struct interference_sample *prev = t->have_last ? &t->last : &t->first;
	/* A domain that is gone answers nothing. One being torn down can still
	 * answer, with counters of threads that have exited: zeros, or less
	 * than before. Such a sample would make a starved run look quiet. */
	if (!t->started || s->nvcpus <= 0 || s->nvcpus < prev->nvcpus ||
	    s->have_delay != prev->have_delay)
		return false;
	if (s->have_guest_cpu && prev->have_guest_cpu && s->guest_cpu_ns < prev->guest_cpu_ns)
		return false;
	for (int i = 0; i < prev->nvcpus; i++)
		if (s->vcpu_time_ns[i] < prev->vcpu_time_ns[i] ||
		    s->vcpu_delay_ns[i] < prev->vcpu_delay_ns[i])
			return false;
	t->last = *s;
	t->have_last = true;
	return true;
}

void interference_poll(struct interference *t, virDomainPtr dom)
{
	struct interference_sample s;
	if (!t->started)
		return;
	take(t, dom, &s);
	interference_add_sample(t, &s);
}

/* 3 significant decimals are plenty for a share or a millisecond count. */
static json_object *num(double v)
{
	if (!isfinite(v))
		return NULL;
	char buf[32];
	snprintf(buf, sizeof(buf), "%.3f", v);
	return json_object_new_double_s(v, buf);
}

json_object *interference_to_json(const struct interference *t)
{
	if (!t->started)
		return NULL;
	const struct interference_sample *a = &t->first;
	const struct interference_sample *b = t->have_last ? &t->last : &t->first;
	double interval = b->mono_s - a->mono_s;
	json_object *o = json_object_new_object();
	json_object *vcpus = json_object_new_array();
	double wait_total_ms = 0;
	int n = a->nvcpus < b->nvcpus ? a->nvcpus : b->nvcpus;
	bool have = a->have_delay && b->have_delay && n > 0 && interval > 0;
	for (int i = 0; have && i < n; i++) {
		double run_ms = (double)(b->vcpu_time_ns[i] - a->vcpu_time_ns[i]) / 1e6;
		double wait_ms = (double)(b->vcpu_delay_ns[i] - a->vcpu_delay_ns[i]) / 1e6;
		if (b->vcpu_delay_ns[i] < a->vcpu_delay_ns[i])
			wait_ms = 0;
		wait_total_ms += wait_ms;
		json_object *v = json_object_new_object();
		json_object_object_add(v, "vcpu", json_object_new_int(i));
		json_object_object_add(v, "run_ms", num(run_ms));
		json_object_object_add(v, "wait_ms", num(wait_ms));
		json_object_object_add(v, "wait_pct", num(100.0 * wait_ms / (interval * 1000.0)));
		json_object_array_add(vcpus, v);
	}
	json_object_object_add(o, "vcpu_wait_ms", have ? num(wait_total_ms) : NULL);
	json_object_object_add(o, "vcpu_wait_pct",
			       have ? num(100.0 * wait_total_ms / (interval * 1000.0 * n)) : NULL);
	json_object_object_add(o, "vcpus", vcpus);
	bool node = a->have_node && b->have_node && b->node_total_ns > a->node_total_ns;
	json_object_object_add(o, "host_busy_pct",
			       node ? num(100.0 * (double)(b->node_busy_ns - a->node_busy_ns) /
					  (double)(b->node_total_ns - a->node_total_ns))
				    : NULL);
	bool others =
	    node && a->have_guest_cpu && b->have_guest_cpu && b->guest_cpu_ns >= a->guest_cpu_ns;
	double others_pct = NAN;
	if (others) {
		double busy = (double)(b->node_busy_ns - a->node_busy_ns);
		double guest = (double)(b->guest_cpu_ns - a->guest_cpu_ns);
		double total = (double)(b->node_total_ns - a->node_total_ns);
		/* the two counters are read a moment apart: never below 0 */
		others_pct = busy > guest ? 100.0 * (busy - guest) / total : 0;
	}
	json_object_object_add(o, "others_busy_pct", others ? num(others_pct) : NULL);
	json_object_object_add(o, "load_avg", t->load_max >= 0 ? num(t->load_max) : NULL);
	bool stat = a->have_stat && b->have_stat && b->total_ticks > a->total_ticks;
	json_object_object_add(o, "steal_pct",
			       stat ? num(100.0 * (double)(b->steal_ticks - a->steal_ticks) /
					  (double)(b->total_ticks - a->total_ticks))
				    : NULL);
	json_object_object_add(o, "interval_s", num(interval));
	json_object_object_add(o, "source",
			       json_object_new_string(have ? "libvirt vcpu delay" : "unavailable"));
	return o;
}
