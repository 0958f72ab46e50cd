/* guest_run() (guest.h): checks the spec, stages the kernel and initrd,
 * creates the domain paused, attaches both consoles and the lifecycle
 * callback, resumes it and waits, bounded, for its end: power-off, halt,
 * stop, deadline (hung) or cancel. The callbacks are in guest_streams.c; a
 * local run's serial sockets in guest_ports.c; a remote run's finished
 * streams end in guest_reaper.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guest/domain_xml.h"
#include "guest/guest-internal.h"
#include "guest/guest.h"
#include "guest/hostpool.h"
#include "guest/interference.h"
#include "guest/pinning.h"
#include "util/fs.h"

#define POLL_MS	     100
#define HALT_GRACE_S 0.5 /* after "System halted", for the last frames to arrive */
#define DRAIN_S	     3.0 /* after the domain stops, wait this long for the streams' ends */

static int valid_run_id(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	return n > 0 && n <= 90 &&
	       strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static int copy_into(const char *src, const char *dst, struct sl_error *err)
{
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	struct stat st;
	if (in < 0 || fstat(in, &st) < 0)
		return error_set(err, ERR_NOT_FOUND, errno, "Cannot read '%s': %s.", src,
				 strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create '%s': %s.", dst,
				 strerror(errno));
	off_t left = st.st_size;
	while (left > 0) {
		ssize_t n = sendfile(out, in, NULL, (size_t)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return error_set(err, ERR_INTERNAL, n < 0 ? errno : EIO,
					 "Cannot copy '%s' to '%s'.", src, dst);
		left -= n;
	}
	return 0;
}

/* A 0755 directory under $TMPDIR (or /tmp) holding copies of the kernel and
 * initrd: QEMU runs as its own user, which cannot enter a 0700 cache. */
static int stage_files(const struct guest_spec *s, char **ret_dir, char **ret_kernel,
		       char **ret_initrd, struct sl_error *err)
{
	const char *tmp = getenv("TMPDIR");
	_cleanup_free_ char *dir = NULL;
	if (asprintf(&dir, "%s/schedlab-guest-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", s->run_id) <
	    0) {
		dir = NULL;
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
		return error_set(err, ERR_INTERNAL, errno,
				 "Cannot create a staging directory for run '%s': %s.", s->run_id,
				 strerror(errno));
	_cleanup_free_ char *k = fs_path_join(dir, "bzImage");
	_cleanup_free_ char *i = fs_path_join(dir, "initrd");
	int r = copy_into(s->kernel, k, err);
	if (r >= 0)
		r = copy_into(s->initrd, i, err);
	if (r < 0) {
		fs_rm_rf(dir, NULL);
		return r;
	}
	*ret_dir = TAKE_PTR(dir);
	*ret_kernel = TAKE_PTR(k);
	*ret_initrd = TAKE_PTR(i);
	return 0;
}

/* A 0711 directory for the serial ports' sockets (guest_ports.c): its own,
 * since a socket path has at most 107 bytes and the staging directory's
 * name carries the run id. QEMU's user needs to pass through it, no more. */
static int ports_dir_new(char **ret, struct sl_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = NULL;
	if (asprintf(&dir, "%s/schedlab-ports-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if (!mkdtemp(dir) || chmod(dir, 0711) < 0) {
		int e = errno;
		free(dir);
		return error_set(err, ERR_INTERNAL, e,
				 "Cannot create a directory for the guest's serial sockets: %s.",
				 strerror(e));
	}
	*ret = dir;
	return 0;
}

/* A failed NMI leaves the run to the deadline; it is worth a line. */
static void guest_log_nmi_failure(const char *name)
{
	fprintf(stderr, "schedlab: could not send an NMI to the guest '%s': %s\n", name,
		guest_virt_error());
}

/* Each vCPU's host CPUs as libvirt applied them to the started domain (an
 * array of CPU lists, pinning.h), or NULL when libvirt cannot say. */
static json_object *vcpu_pin_read_back(virDomainPtr dom, int vcpus)
{
	unsigned char maps[GUEST_MAX_VCPUS][PIN_MAP_BYTES];
	memset(maps, 0, sizeof(maps));
	int n =
	    virDomainGetVcpuPinInfo(dom, vcpus, &maps[0][0], PIN_MAP_BYTES, VIR_DOMAIN_AFFECT_LIVE);
	if (n < 0) {
		virResetLastError();
		return NULL;
	}
	json_object *a = json_object_new_array();
	for (int i = 0; i < n && i < vcpus; i++) {
		char list[PIN_LIST_MAX];
		pin_map_format(maps[i], list, sizeof(list));
		json_object_array_add(a, json_object_new_string(list));
	}
	return a;
}

/* How the wait for a guest's end came out (wait_for_end). */
struct run_end {
	bool hung, cancelled, powered_off, lost, stopped;
	double t_nmi; /* when the silence rule sent its NMI; 0: never */
	int silent_s; /* the silence that made it send one */
};

/* Waits, bounded, for the resumed guest's end: its stop (and the ports'
 * ends), the probe's answer, a power-off after the summary, a halt, the
 * deadline or the silence rule (hung), a cancel, or a daemon that stopped
 * answering (lost). */
static void wait_for_end(const struct guest_spec *s, struct guest_state *r, virDomainPtr dom,
			 const char *name, double t_resume, struct interference *itf,
			 struct run_end *e)
{
	double deadline = t_resume + s->deadline_s, t_stop = 0, t_halt = 0, last_poll = t_resume;
	int silence = s->silence_s > 0 ? s->silence_s : GUEST_SILENCE_DEFAULT_S;
	if (silence > s->deadline_s)
		silence = s->deadline_s;
	pthread_mutex_lock(&r->lock);
	r->t_activity = t_resume;
	for (;;) {
		double t = time_monotonic_s();
		if (r->stopped) {
			if (!t_stop)
				t_stop = t;
			/* Wait for the streams' ends, which carry the last output. */
			if ((r->eof[0] && r->eof[1]) || t - t_stop > DRAIN_S)
				break;
		} else if (s->probe && (r->saw_linux || r->hello)) {
			break;
		} else if (r->shutdown && r->summary) {
			/* The guest powered off after its summary, so everything it
			 * had to say has arrived. libvirt's teardown of QEMU takes
			 * another 1-2 s (on_poweroff=destroy); the domain is paused
			 * meanwhile and goes away on its own. */
			e->powered_off = true;
			break;
		} else if (console_events_saw_halt(r->ce) && !t_halt) {
			t_halt = t;
		} else if (t_halt && t - t_halt > HALT_GRACE_S) {
			/* A halted guest never stops by itself: end it like a power-off. */
			pthread_mutex_unlock(&r->lock);
			virDomainDestroy(dom);
			virResetLastError();
			pthread_mutex_lock(&r->lock);
			r->stopped = true;
			continue;
		} else if (t >= deadline || (e->t_nmi && t - e->t_nmi > GUEST_NMI_GRACE_S)) {
			e->hung = true;
			break;
		} else if (!e->t_nmi && !s->probe && r->heartbeat && t - r->t_activity >= silence) {
			/* The silence rule: the kernel is stuck. Ask every CPU for
			 * its backtrace before the guest goes (unknown_nmi_panic
			 * on the command line: the kernel dumps the interrupted
			 * stack and panics), and mark the console for the hang's
			 * signature. */
			e->t_nmi = t;
			e->silent_s = (int)(t - r->t_activity + 0.5);
			console_events_begin_hang(r->ce, e->silent_s);
			pthread_mutex_unlock(&r->lock);
			if (virDomainInjectNMI(dom, 0) < 0)
				guest_log_nmi_failure(name);
			virResetLastError();
			pthread_mutex_lock(&r->lock);
			continue;
		} else if (s->cancelled && s->cancelled(s->userdata)) {
			e->cancelled = true;
			break;
		} else if (t - last_poll >= 1.0) {
			/* In case a lifecycle event was missed (daemon restart). */
			last_poll = t;
			pthread_mutex_unlock(&r->lock);
			interference_poll(itf, dom);
			enum guest_domain_state ds = guest_domain_state(dom);
			pthread_mutex_lock(&r->lock);
			/* A daemon that stopped answering: the keepalive closed the
			 * connection. Waiting for the deadline would only report
			 * the guest hung. */
			e->lost = ds == GUEST_DOMAIN_UNREACHABLE;
			if (e->lost)
				break;
			if (ds == GUEST_DOMAIN_INACTIVE || ds == GUEST_DOMAIN_GONE)
				r->stopped = true;
			continue;
		}
		struct timespec ts = time_deadline(CLOCK_REALTIME, POLL_MS / 1000.0);
		pthread_cond_timedwait(&r->cond, &r->lock, &ts);
	}
	e->stopped = r->stopped;
	pthread_mutex_unlock(&r->lock);
}

/* Checks s's run id and deadline, names the domain (name: 128 bytes) and
 * gives the kernel command line and the kernel and initrd as the daemon
 * sees them: s's own when they are on its host, else staged copies (*ret_stage
 * the directory to remove, or NULL). Outputs set on failure too: the caller
 * frees them. */
static int guest_prepare(const struct guest_spec *s, char name[128], char **ret_cmdline,
			 char **ret_stage, char **ret_kernel, char **ret_initrd,
			 struct sl_error *err)
{
	if (!valid_run_id(s->run_id))
		return error_set_path(err, ERR_INVALID, "run_id",
				      "The run id '%s' is not 1 to 90 characters of letters, "
				      "digits, '_', '.' and '-'.",
				      s->run_id ? s->run_id : "");
	if (s->deadline_s < 1 || s->deadline_s > GUEST_MAX_DEADLINE_S)
		return error_set_path(err, ERR_INVALID, "deadline_s",
				      "The deadline %d s is not between 1 and %d s.", s->deadline_s,
				      GUEST_MAX_DEADLINE_S);
	snprintf(name, 128, GUEST_DOMAIN_PREFIX "%s", s->run_id);
	if (asprintf(ret_cmdline, "%s%s%s", GUEST_BASE_CMDLINE, s->cmdline_extra ? " " : "",
		     s->cmdline_extra ? s->cmdline_extra : "") < 0) {
		*ret_cmdline = NULL;
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	}
	if (!s->files_on_host)
		return stage_files(s, ret_stage, ret_kernel, ret_initrd, err);
	*ret_kernel = strdup(s->kernel);
	*ret_initrd = strdup(s->initrd);
	if (!*ret_kernel || !*ret_initrd)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	return 0;
}

/* The domain XML of s's guest; port_path: the sockets a local run's ports
 * connect to, NULL for console streams. */
static int domain_xml(const struct guest_spec *s, const char *name, const char *kernel,
		      const char *initrd, const char *cmdline, char *const *port_path, char **ret,
		      struct sl_error *err)
{
	const char *const sockets[GUEST_N_STREAMS] = {port_path ? port_path[0] : NULL,
						      port_path ? port_path[1] : NULL};
	struct guest_xml_params xp = {
	    .name = name,
	    .accel = s->accel,
	    .kernel = kernel,
	    .initrd = initrd,
	    .cmdline = cmdline,
	    .vcpus = s->vcpus,
	    .memory_mb = s->memory_mb,
	    .sockets = s->sockets,
	    .cores = s->cores,
	    .threads = s->threads,
	    .numa = s->numa,
	    .n_numa = s->n_numa,
	    .vcpu_pin = s->vcpu_pin,
	    .emulator_pin = s->emulator_pin,
	    .serial_socket = port_path ? sockets : NULL,
	};
	return guest_xml_build(&xp, ret, err);
}

/* A new outcome of the guest name with no boot seen yet; NULL without
 * memory. */
static struct guest_outcome *outcome_new(const struct guest_spec *s, const char *name)
{
	struct guest_outcome *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	snprintf(o->accel, sizeof(o->accel), "%s", s->accel);
	snprintf(o->domain, sizeof(o->domain), "%s", name);
	o->boot_s = o->agent_start_s = -1;
	return o;
}

/* Remote streams end once the domain is gone (guest_reaper.c): finishing
 * one during libvirt's teardown can deadlock the daemon, so they go to the
 * reaper with what each has seen. (A local run's sockets are schedlab's
 * alone and close with its state.) */
static void streams_park(struct guest_host *h, struct guest_state *r, virDomainPtr dom,
			 virStreamPtr st[GUEST_N_STREAMS])
{
	bool eof[GUEST_N_STREAMS];
	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < GUEST_N_STREAMS; i++)
		eof[i] = r->eof[i];
	pthread_mutex_unlock(&r->lock);
	guest_reaper_park(h->reaper, dom, st, eof);
}

int guest_run(struct guest_host *h, const struct guest_spec *s, struct guest_outcome **ret,
	      struct sl_error *err)
{
	struct guest_outcome *o = NULL;
	struct guest_state *r = NULL;
	virDomainPtr dom = NULL;
	virStreamPtr st[GUEST_N_STREAMS] = {NULL, NULL};
	int cb_id = -1, rc = 0;
	_cleanup_free_ char *stage = NULL, *kernel = NULL, *initrd = NULL, *cmdline = NULL,
			    *xml = NULL, *ports_dir = NULL;
	char *port_path[GUEST_N_STREAMS] = {NULL, NULL};
	char name[128];

	rc = guest_prepare(s, name, &cmdline, &stage, &kernel, &initrd, err);
	if (rc < 0)
		return rc;
	/* A local daemon's guest writes its ports to sockets schedlab listens
	 * on; only a remote one's are read through libvirt console streams
	 * (guest_ports.c says why). */
	const char *uri = guest_host_uri(h);
	bool local_ports = !s->files_on_host && hostpool_uri_is_local(uri);
	r = guest_state_new(s->console_log_path, err);
	if (!r) {
		rc = -ENOMEM;
		goto out;
	}
	if (local_ports) {
		rc = ports_dir_new(&ports_dir, err);
		if (rc >= 0)
			rc = guest_ports_listen(r, ports_dir, port_path, err);
		if (rc < 0)
			goto out;
	}
	rc =
	    domain_xml(s, name, kernel, initrd, cmdline, local_ports ? port_path : NULL, &xml, err);
	if (rc < 0)
		goto out;
	o = outcome_new(s, name);
	if (!o) {
		rc = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		goto out;
	}

	double t_create = time_monotonic_s();
	dom = virDomainCreateXML(h->conn, xml,
				 VIR_DOMAIN_START_PAUSED | VIR_DOMAIN_START_AUTODESTROY);
	if (!dom) {
		rc = error_set(err, ERR_INFRA, EIO, "Cannot start the guest '%s': %s.", name,
			       guest_virt_error());
		goto out;
	}
	o->create_s = time_monotonic_s() - t_create;
	if (local_ports) {
		rc = guest_ports_attach(r, name, GUEST_PORT_ACCEPT_S, err);
		if (rc < 0)
			goto out;
	}
	if (s->vcpu_pin)
		o->vcpu_pin_applied = vcpu_pin_read_back(dom, s->vcpus);

	cb_id = virConnectDomainEventRegisterAny(h->conn, dom, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
						 VIR_DOMAIN_EVENT_CALLBACK(guest_lifecycle_cb), r,
						 NULL);
	if (cb_id < 0) {
		rc = error_set(err, ERR_INFRA, EIO, "Cannot watch the guest '%s': %s.", name,
			       guest_virt_error());
		goto out;
	}
	/* Both consoles before the first instruction, or the start is lost. */
	for (int i = 0; i < GUEST_N_STREAMS && rc >= 0 && !local_ports; i++)
		rc = guest_stream_open(h->conn, dom, r, i, &st[i], err);
	if (rc < 0)
		goto out;
	double t_resume = time_monotonic_s();
	if (virDomainResume(dom) < 0) {
		rc = error_set(err, ERR_INFRA, EIO, "Cannot resume the guest '%s': %s.", name,
			       guest_virt_error());
		goto out;
	}

	/* The host's part in what the guest measures (interference.h); a URI
	 * without a host name is this machine. */
	struct interference itf;
	interference_begin(&itf, dom, !uri || strstr(uri, ":///") != NULL);
	struct run_end e = {0};
	wait_for_end(s, r, dom, name, t_resume, &itf, &e);
	if (e.lost) {
		rc = error_set(err, ERR_INFRA, EHOSTDOWN,
			       "The connection to libvirt at '%s' was lost while the guest '%s' "
			       "ran: the daemon stopped answering (docs/guests.md). The run says "
			       "nothing about the kernel.",
			       uri ? uri : "qemu:///system", name);
		goto out;
	}

	if (!e.stopped && !e.powered_off) {
		virDomainDestroy(dom); /* hung, cancelled or probe done */
		virResetLastError();
	}
	if (!local_ports)
		streams_park(h, r, dom, st);
	guest_ports_detach(r);
	virConnectDomainEventDeregisterAny(h->conn, cb_id);
	cb_id = -1;
	o->total_s = time_monotonic_s() - t_create;
	o->interference = interference_to_json(&itf);

	if (e.cancelled) {
		rc = error_set(err, ERR_CANCELLED, ECANCELED,
			       "The guest '%s' was destroyed because its run was cancelled.", name);
		goto out;
	}
	pthread_mutex_lock(&r->lock);
	if (r->hello) {
		o->boot_s = r->t_hello - t_create;
		o->agent_start_s = r->t_hello - t_resume;
	}
	guest_outcome_fill(r, o, e.hung || e.t_nmi, s->deadline_s, s->probe, e.silent_s);
	pthread_mutex_unlock(&r->lock);
	*ret = TAKE_PTR(o);
	rc = 0;
out:
	for (int i = 0; i < GUEST_N_STREAMS; i++)
		guest_stream_close(st[i], false);
	if (r)
		guest_ports_detach(r);
	if (cb_id >= 0)
		virConnectDomainEventDeregisterAny(h->conn, cb_id);
	if (dom) {
		if (rc < 0 && virDomainIsActive(dom) == 1)
			virDomainDestroy(dom);
		virDomainFree(dom);
	}
	virResetLastError();
	/* No callback may touch r after this; else leak it. */
	if (r && guest_event_loop_barrier(5.0))
		guest_state_free(r);
	guest_outcome_free(o);
	if (stage)
		fs_rm_rf(stage, NULL);
	if (ports_dir)
		fs_rm_rf(ports_dir, NULL);
	for (int i = 0; i < GUEST_N_STREAMS; i++)
		free(port_path[i]);
	return rc;
}
