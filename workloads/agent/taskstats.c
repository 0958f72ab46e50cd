/* taskstats over generic netlink; see taskstats.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "agent/taskstats.h"
#include "agent/util.h"

/* Room for a burst of exits between two reads: a record costs the socket
 * about 1 KiB (skb truesize), so 16 MiB hold the exits of some 10,000 tasks;
 * past that the kernel drops them and recv says ENOBUFS (sum->lost). */
#define RCVBUF_BYTES (16 * 1024 * 1024)
#define MSG_BYTES    16384

struct nl_req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[256];
};

static void add_attr(struct nl_req *r, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static int send_req(int fd, struct nl_req *r)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	ssize_t n;
	do
		n = sendto(fd, r, r->n.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to));
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

/* The next attribute of the buffer [*p, *p + *len), which it steps past;
 * NULL at the end or at one whose length does not fit. */
static const struct nlattr *nla_next(const char **p, size_t *len)
{
	if (*len < NLA_HDRLEN)
		return NULL;
	const struct nlattr *a = (const struct nlattr *)*p;
	if (a->nla_len < NLA_HDRLEN || a->nla_len > *len)
		return NULL;
	size_t step = NLA_ALIGN(a->nla_len);
	step = step > *len ? *len : step;
	*p += step;
	*len -= step;
	return a;
}

/* The first answer to a request: the family id (GETFAMILY) or the ack's
 * error (0 on success). */
static int recv_answer(int fd, uint16_t *family)
{
	char buf[MSG_BYTES] __attribute__((aligned(8)));
	ssize_t n;
	do
		n = recv(fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	for (size_t left = (size_t)n; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);
			return e->error;
		}
		if (!family)
			continue;
		const char *p = (const char *)NLMSG_DATA(h) + GENL_HDRLEN;
		size_t len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
		for (const struct nlattr *a; (a = nla_next(&p, &len));) {
			if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID &&
			    a->nla_len >= NLA_HDRLEN + 2) {
				memcpy(family, (const char *)a + NLA_HDRLEN, 2);
				return 0;
			}
		}
	}
	return -ENOENT;
}

int agent_taskstats_open(const char *root, int ncpus, char *msg, size_t msglen)
{
	/* Delay accounting is off by default since Linux 5.14; the run delay
	 * itself comes from sched_info, but taskstats reports the delays only
	 * while it is on. */
	_cleanup_free_ char *path = agent_path(root, "/proc/sys/kernel/task_delayacct");
	int r = agent_write_file(path, "1", 0);
	if (r < 0) {
		snprintf(msg, msglen, "cannot turn kernel.task_delayacct on: %s", strerror(-r));
		return r;
	}
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0) {
		r = -errno;
		snprintf(msg, msglen, "no generic netlink socket: %s", strerror(-r));
		return r;
	}
	int sz = RCVBUF_BYTES;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	struct sockaddr_nl me = {.nl_family = AF_NETLINK};
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
		r = -errno;
		snprintf(msg, msglen, "cannot bind the netlink socket: %s", strerror(-r));
		goto fail;
	}

	struct nl_req q = {0};
	q.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	q.n.nlmsg_type = GENL_ID_CTRL;
	q.n.nlmsg_flags = NLM_F_REQUEST;
	q.n.nlmsg_seq = 1;
	q.g.cmd = CTRL_CMD_GETFAMILY;
	q.g.version = 1;
	add_attr(&q, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME));
	uint16_t family = 0;
	if ((r = send_req(fd, &q)) < 0 || (r = recv_answer(fd, &family)) < 0) {
		snprintf(msg, msglen, "no taskstats family (CONFIG_TASKSTATS): %s",
			 strerror(r < 0 ? -r : EIO));
		goto fail;
	}

	char mask[32];
	snprintf(mask, sizeof(mask), ncpus > 1 ? "0-%d" : "0", ncpus - 1);
	memset(&q, 0, sizeof(q));
	q.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	q.n.nlmsg_type = family;
	q.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	q.n.nlmsg_seq = 2;
	q.g.cmd = TASKSTATS_CMD_GET;
	q.g.version = TASKSTATS_GENL_VERSION;
	add_attr(&q, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, mask, strlen(mask) + 1);
	if ((r = send_req(fd, &q)) < 0 || (r = recv_answer(fd, NULL)) < 0) {
		snprintf(msg, msglen, "cannot register for the exits of CPUs %s: %s", mask,
			 strerror(-r));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return r < 0 ? r : -EIO;
}

/* The records of one datagram: each TASKSTATS_TYPE_AGGR_PID (one task),
 * not the AGGR_TGID sums of a thread group, which would count its threads
 * twice. Returns how many went to out[0..max). */
static size_t parse_datagram(const char *buf, size_t n, struct agent_taskstats_rec *out, size_t max,
			     unsigned *version, uint64_t *seen)
{
	size_t got = 0;
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	for (size_t left = n; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE ||
		    h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
			continue;
		const char *p = (const char *)NLMSG_DATA(h) + GENL_HDRLEN;
		size_t len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
		for (const struct nlattr *a; (a = nla_next(&p, &len));) {
			if ((a->nla_type & NLA_TYPE_MASK) != TASKSTATS_TYPE_AGGR_PID)
				continue;
			const char *q = (const char *)a + NLA_HDRLEN;
			size_t qlen = a->nla_len - NLA_HDRLEN;
			for (const struct nlattr *b; (b = nla_next(&q, &qlen));) {
				size_t plen = b->nla_len - NLA_HDRLEN;
				if ((b->nla_type & NLA_TYPE_MASK) != TASKSTATS_TYPE_STATS ||
				    plen < offsetof(struct taskstats, ac_btime))
					continue;
				struct taskstats ts;
				memset(&ts, 0, sizeof(ts));
				memcpy(&ts, (const char *)b + NLA_HDRLEN,
				       plen < sizeof(ts) ? plen : sizeof(ts));
				bool has_tgid = plen >= offsetof(struct taskstats, ac_tgid) +
							    sizeof(ts.ac_tgid);
				(*seen)++;
				*version = ts.version;
				if (got >= max)
					continue;
				struct agent_taskstats_rec *r = &out[got++];
				r->pid = ts.ac_pid;
				r->tgid = has_tgid && ts.ac_tgid ? ts.ac_tgid : ts.ac_pid;
				r->ppid = ts.ac_ppid;
				r->delay_ns = ts.cpu_delay_total;
				r->count = ts.cpu_count;
				r->run_ns = ts.cpu_run_virtual_total;
				size_t cn = sizeof(r->comm) - 1 < TS_COMM_LEN ? sizeof(r->comm) - 1
									      : TS_COMM_LEN;
				memcpy(r->comm, ts.ac_comm, cn);
				r->comm[cn] = '\0';
			}
		}
	}
	return got;
}

void agent_taskstats_drain(int fd)
{
	char buf[MSG_BYTES] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == ENOBUFS))
			continue;
		if (n <= 0)
			return;
	}
}

/* A set of thread group ids: open addressing, 0 marks a free slot (no
 * task has pid 0), cap a power of two above twice the entries. */
struct pid_set {
	uint32_t *slot;
	size_t cap;
};

static bool pid_set_has(const struct pid_set *s, uint32_t v)
{
	for (size_t i = (v * 2654435761u) & (s->cap - 1); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == v)
			return true;
	return false;
}

static void pid_set_add(struct pid_set *s, uint32_t v)
{
	size_t i = (v * 2654435761u) & (s->cap - 1);
	while (s->slot[i] && s->slot[i] != v)
		i = (i + 1) & (s->cap - 1);
	s->slot[i] = v;
}

void agent_taskstats_sum_records(struct agent_taskstats_rec *recs, size_t n, pid_t root_pid,
				 pid_t self, pid_t exclude, struct agent_taskstats_sum *sum)
{
	/* The workload's processes (thread group ids): its root, the orphans
	 * the agent reaped, and, to a fixed point, every process whose parent
	 * is one of them. Records arrive children first, so one pass is not
	 * enough; each pass moves the records it took to the front. */
	struct pid_set groups = {.cap = 16};
	while (groups.cap < 2 * (n + 1))
		groups.cap *= 2;
	groups.slot = calloc(groups.cap, sizeof(*groups.slot));
	if (!groups.slot) {
		sum->lost = true;
		return;
	}
	size_t taken = 0;
	if (root_pid > 0)
		pid_set_add(&groups, (uint32_t)root_pid);
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t i = taken; i < n; i++) {
			struct agent_taskstats_rec *r = &recs[i];
			if (r->pid == 0 || r->tgid == 0)
				continue;
			bool orphan = self > 0 && r->ppid == (uint32_t)self && r->tgid == r->pid &&
				      (exclude <= 0 || r->pid != (uint32_t)exclude);
			if (!orphan && !pid_set_has(&groups, r->tgid) &&
			    !pid_set_has(&groups, r->ppid))
				continue;
			pid_set_add(&groups, r->tgid);
			struct agent_taskstats_rec t = recs[taken];
			recs[taken] = *r;
			*r = t;
			taken++;
			grew = true;
		}
	}
	free(groups.slot);
	for (size_t i = 0; i < taken; i++) {
		const struct agent_taskstats_rec *r = &recs[i];
		sum->tasks++;
		sum->run_delay_ns += r->delay_ns;
		sum->timeslices += r->count;
		sum->run_ns += r->run_ns;
		if (r->delay_ns > sum->run_delay_max_ns || sum->tasks == 1) {
			sum->run_delay_max_ns = r->delay_ns;
			snprintf(sum->max_comm, sizeof(sum->max_comm), "%s", r->comm);
		}
	}
}

void agent_taskstats_collect(int fd, pid_t root_pid, pid_t self, pid_t exclude,
			     struct agent_taskstats_sum *sum)
{
	memset(sum, 0, sizeof(*sum));
	struct agent_taskstats_rec *recs = calloc(TASKSTATS_MAX_RECORDS, sizeof(*recs));
	if (!recs) {
		sum->lost = true;
		return;
	}
	size_t n = 0;
	char buf[MSG_BYTES] __attribute__((aligned(8)));
	for (;;) {
		ssize_t got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == ENOBUFS) {
			sum->lost = true;
			continue;
		}
		if (got <= 0)
			break;
		uint64_t before = sum->records;
		size_t k = parse_datagram(buf, (size_t)got, recs + n, TASKSTATS_MAX_RECORDS - n,
					  &sum->version, &sum->records);
		sum->dropped += (sum->records - before) - k;
		n += k;
	}
	agent_taskstats_sum_records(recs, n, root_pid, self, exclude, sum);
	free(recs);
}

json_object *agent_taskstats_json(const struct agent_taskstats_sum *s)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "tasks", json_object_new_int64((int64_t)s->tasks));
	json_object_object_add(o, "run_delay_ns", json_object_new_int64((int64_t)s->run_delay_ns));
	json_object_object_add(o, "run_delay_max_ns",
			       json_object_new_int64((int64_t)s->run_delay_max_ns));
	json_object_object_add(o, "timeslices", json_object_new_int64((int64_t)s->timeslices));
	json_object_object_add(o, "run_ns", json_object_new_int64((int64_t)s->run_ns));
	json_object_object_add(o, "records", json_object_new_int64((int64_t)s->records));
	json_object_object_add(o, "dropped", json_object_new_int64((int64_t)s->dropped));
	json_object_object_add(o, "lost", json_object_new_boolean(s->lost));
	json_object_object_add(o, "version", json_object_new_int((int)s->version));
	_cleanup_free_ char *comm = agent_utf8_clean(s->max_comm, strlen(s->max_comm));
	json_object_object_add(o, "max_comm", json_object_new_string(comm));
	return o;
}
