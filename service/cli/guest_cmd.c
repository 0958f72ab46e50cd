/* schedlab guest: boot one kernel with one plan, probe the accelerator,
 * build the base initramfs, or clean up leftover domains. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guest/accel.h"
#include "cli/cli.h"
#include "guest/guest.h"
#include "kernel/initramfs.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/parse.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: schedlab guest run --kernel BZIMAGE --plan PLAN.json [OPTIONS]\n"
	    "       schedlab guest probe-accel --kernel BZIMAGE [--force] [OPTIONS]\n"
	    "       schedlab guest initramfs [--plan PLAN.json -o INITRD] [OPTIONS]\n"
	    "       schedlab guest cleanup [--prefix schedlab-...] [--uri URI]\n\n"
	    "Boots a kernel in a transient libvirt domain with the base initramfs plus\n"
	    "PLAN.json, and prints the outcome as JSON (exit 0: ok, 1: the guest\n"
	    "failed (hung, panic, crashed, error), 2: schedlab could not run it).\n\n"
	    "Options:\n"
	    "  --kernel FILE     the bzImage to boot\n"
	    "  --plan FILE       the plan (docs/contracts.md section 1)\n"
	    "  --vcpus N         vCPUs (default 2)\n"
	    "  --memory MB       memory in MiB (default 512)\n"
	    "  --deadline S      seconds from start to destroy (default 120)\n"
	    "  --accel A         auto, kvm or tcg (default auto: probed once per host)\n"
	    "  --cmdline TEXT    appended to the kernel command line\n"
	    "  --run-id ID       the domain is schedlab-ID (default: the plan's run_id)\n"
	    "  -o FILE           also write the outcome JSON to FILE\n"
	    "  --console-log F   write the whole console to F\n"
	    "  --uri URI         libvirt URI (default qemu:///system)\n"
	    "  --cache DIR       cache directory (default $SCHEDLAB_CACHE or ~/.cache/schedlab)\n"
	    "  --agent FILE      the guest's /init (default <data>/build/agent)\n"
	    "  --workloads DIR   workloads to include (default <data>/build/workloads)\n"
	    "  --force           probe-accel: probe even when the answer is cached\n"
	    "  --prefix P        cleanup: destroy running domains named P* (default schedlab-)\n\n"
	    "A libvirtd that does not answer a connect within $SCHEDLAB_LIBVIRT_TIMEOUT_S\n"
	    "(default 60) s, or stops answering during a run, is an error (exit 2), never\n"
	    "a hung guest.\n");
}

struct opts {
	const char *kernel, *plan, *accel, *cmdline, *run_id, *out, *console_log, *uri, *prefix;
	char *cache, *agent, *workloads;
	int vcpus, memory_mb, deadline_s, force;
};

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* The guest_spec cancel hook: SIGINT or SIGTERM destroys the domain. */
static int stop_requested(void *userdata)
{
	(void)userdata;
	return stop_signal != 0;
}

static int opt_int(const char *s, int lo, int hi, int *ret)
{
	long v = 0;
	int r = parse_int(s, lo, hi, &v);
	if (r < 0)
		return r;
	*ret = (int)v;
	return 0;
}

static int base_initramfs(const struct opts *o, char **ret, struct sl_error *err)
{
	struct initramfs_inputs in = {.agent = o->agent, .workloads_dir = o->workloads};
	return initramfs_base(o->cache, &in, ret, err);
}

static int fail(const struct sl_error *err)
{
	fprintf(stderr, "schedlab guest: %s\n", err->message);
	return EXIT_ERROR;
}

/* The accelerator probe's plan: the guest boots, says hello and runs nothing. */
static json_object *probe_plan(void)
{
	json_object *p = json_object_new_object();
	json_object_object_add(p, "run_id", json_object_new_string("accel-probe"));
	json_object_object_add(p, "features", json_object_new_array());
	json_object_object_add(p, "workloads", json_object_new_array());
	return p;
}

/* A temporary run directory with the initrd (base + plan). */
static int make_initrd(const struct opts *o, json_object *plan, char **ret_dir, char **ret_initrd,
		       struct sl_error *err)
{
	_cleanup_free_ char *base = NULL;
	int r = base_initramfs(o, &base, err);
	if (r < 0)
		return r;
	const char *tmp = getenv("TMPDIR");
	_cleanup_free_ char *dir = fs_path_join(tmp && *tmp ? tmp : "/tmp", "schedlab-run-XXXXXX");
	if (!mkdtemp(dir))
		return error_set(err, ERR_INTERNAL, errno, "Cannot create a run directory: %s.",
				 strerror(errno));
	char *initrd = fs_path_join(dir, "initrd.cpio.gz");
	r = initramfs_with_plan(base, plan, initrd, err);
	if (r < 0) {
		free(initrd);
		fs_rm_rf(dir, NULL);
		return r;
	}
	*ret_dir = TAKE_PTR(dir);
	*ret_initrd = initrd;
	return 0;
}

static int cmd_run(struct opts *o)
{
	struct sl_error err = {0};
	_cleanup_free_ char *dir = NULL, *initrd = NULL, *probe_dir = NULL, *probe_initrd = NULL,
			    *gen_id = NULL;
	_cleanup_json_ json_object *plan = NULL, *j = NULL;
	struct guest_host *h = NULL;
	struct guest_outcome *out = NULL;
	char accel[8];
	int rc = EXIT_ERROR;

	if (!o->kernel || !o->plan) {
		fprintf(stderr, "schedlab guest run: --kernel and --plan are required.\n");
		return EXIT_ERROR;
	}
	if (json_read_file_strict(o->plan, INITRAMFS_MAX_PLAN, "plan", &plan, &err) < 0)
		return fail(&err);
	if (!json_object_is_type(plan, json_type_object)) {
		fprintf(stderr, "schedlab guest run: the plan '%s' is not a JSON object.\n",
			o->plan);
		return EXIT_ERROR;
	}
	const char *run_id = o->run_id;
	if (!run_id)
		run_id = json_object_get_string(json_object_object_get(plan, "run_id"));
	if (!run_id) {
		if (asprintf(&gen_id, "guest-%d-%ld", (int)getpid(), (long)time(NULL)) < 0)
			return EXIT_ERROR;
		run_id = gen_id;
	}
	if (!fs_exists(o->kernel)) {
		fprintf(stderr, "schedlab guest run: the kernel '%s' does not exist.\n", o->kernel);
		return EXIT_ERROR;
	}
	if (make_initrd(o, plan, &dir, &initrd, &err) < 0)
		return fail(&err);
	h = guest_host_open(o->uri, &err);
	if (!h)
		goto out;
	if (!o->accel || strcmp(o->accel, "auto") == 0) {
		/* The probe boots the same kernel and initramfs with an empty plan. */
		_cleanup_json_ json_object *empty = probe_plan();
		if (make_initrd(o, empty, &probe_dir, &probe_initrd, &err) < 0)
			goto out;
	}
	if (accel_resolve(h, o->cache, o->accel, o->kernel, probe_initrd, accel, &err) < 0)
		goto out;
	struct guest_spec s = {
	    .run_id = run_id,
	    .kernel = o->kernel,
	    .initrd = initrd,
	    .cmdline_extra = o->cmdline,
	    .vcpus = o->vcpus,
	    .memory_mb = o->memory_mb,
	    .accel = accel,
	    .deadline_s = o->deadline_s,
	    .console_log_path = o->console_log,
	    .cancelled = stop_requested,
	};
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (guest_run(h, &s, &out, &err) < 0)
		goto out;
	j = guest_outcome_to_json(out);
	const char *js = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
	printf("%s\n", js);
	if (o->out && fs_write_file_atomic(o->out, js, strlen(js), &err) < 0)
		goto out;
	rc = strcmp(out->status, "ok") == 0 ? 0 : 1;
out:
	if (rc == EXIT_ERROR && err.message[0])
		fail(&err);
	guest_outcome_free(out);
	guest_host_free(h);
	if (dir)
		fs_rm_rf(dir, NULL);
	if (probe_dir)
		fs_rm_rf(probe_dir, NULL);
	return rc;
}

static int cmd_probe(struct opts *o)
{
	struct sl_error err = {0};
	_cleanup_free_ char *dir = NULL, *initrd = NULL, *reason = NULL;
	_cleanup_json_ json_object *j = NULL;
	_cleanup_json_ json_object *empty = probe_plan();
	char accel[8];
	int rc = EXIT_ERROR;

	if (!o->kernel) {
		fprintf(stderr, "schedlab guest probe-accel: --kernel is required.\n");
		return EXIT_ERROR;
	}
	if (make_initrd(o, empty, &dir, &initrd, &err) < 0)
		return fail(&err);
	struct guest_host *h = guest_host_open(o->uri, &err);
	if (!h)
		goto out;
	if (o->force) {
		if (accel_probe(h, o->kernel, initrd, accel, &reason, &err) < 0)
			goto out;
	} else {
		if (accel_resolve(h, o->cache, "auto", o->kernel, initrd, accel, &err) < 0)
			goto out;
	}
	j = json_object_new_object();
	json_object_object_add(j, "accelerator", json_object_new_string(accel));
	if (reason)
		json_object_object_add(j, "reason", json_object_new_string(reason));
	printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	rc = 0;
out:
	if (rc && err.message[0])
		fail(&err);
	guest_host_free(h);
	fs_rm_rf(dir, NULL);
	return rc;
}

static int cmd_initramfs(struct opts *o)
{
	struct sl_error err = {0};
	_cleanup_free_ char *path = NULL;
	_cleanup_json_ json_object *plan = NULL;
	int r = base_initramfs(o, &path, &err);
	if (r < 0)
		return fail(&err);
	if (!o->plan) {
		printf("%s\n", path);
		return 0;
	}
	/* With --plan: the initrd a run boots, base + plan, written to -o. */
	if (!o->out) {
		fprintf(stderr, "schedlab guest initramfs: --plan needs -o FILE.\n");
		return EXIT_ERROR;
	}
	if (json_read_file_strict(o->plan, INITRAMFS_MAX_PLAN, "plan", &plan, &err) < 0)
		return fail(&err);
	if (!plan) {
		fprintf(stderr, "schedlab guest initramfs: the plan '%s' is null.\n", o->plan);
		return EXIT_ERROR;
	}
	if (initramfs_with_plan(path, plan, o->out, &err) < 0)
		return fail(&err);
	printf("%s\n", o->out);
	return 0;
}

static int cmd_cleanup(struct opts *o)
{
	struct sl_error err = {0};
	struct guest_host *h = guest_host_open(o->uri, &err);
	if (!h)
		return fail(&err);
	int n = guest_cleanup_leftovers(h, o->prefix ? o->prefix : GUEST_DOMAIN_PREFIX, &err);
	guest_host_free(h);
	if (n < 0)
		return fail(&err);
	printf("destroyed %d domain(s)\n", n);
	return 0;
}

int cli_guest(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"kernel", required_argument, NULL, 'k'},
	    {"plan", required_argument, NULL, 'p'},
	    {"vcpus", required_argument, NULL, 'c'},
	    {"memory", required_argument, NULL, 'm'},
	    {"deadline", required_argument, NULL, 'd'},
	    {"accel", required_argument, NULL, 'a'},
	    {"cmdline", required_argument, NULL, 'l'},
	    {"run-id", required_argument, NULL, 'r'},
	    {"console-log", required_argument, NULL, 'L'},
	    {"uri", required_argument, NULL, 'u'},
	    {"cache", required_argument, NULL, 'C'},
	    {"agent", required_argument, NULL, 'A'},
	    {"workloads", required_argument, NULL, 'W'},
	    {"force", no_argument, NULL, 'f'},
	    {"prefix", required_argument, NULL, 'P'},
	    {NULL, 0, NULL, 0},
	};
	struct opts o = {.vcpus = 2, .memory_mb = 512, .deadline_s = 120};
	_cleanup_free_ char *data = NULL;
	int c, rc;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_ERROR : 0;
	}
	const char *sub = argv[1];
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'k':
			o.kernel = optarg;
			break;
		case 'p':
			o.plan = optarg;
			break;
		case 'c':
			if (opt_int(optarg, 1, 64, &o.vcpus) < 0)
				goto bad;
			break;
		case 'm':
			if (opt_int(optarg, 64, 65536, &o.memory_mb) < 0)
				goto bad;
			break;
		case 'd':
			if (opt_int(optarg, 1, GUEST_MAX_DEADLINE_S, &o.deadline_s) < 0)
				goto bad;
			break;
		case 'a':
			o.accel = optarg;
			break;
		case 'l':
			o.cmdline = optarg;
			break;
		case 'r':
			o.run_id = optarg;
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'L':
			o.console_log = optarg;
			break;
		case 'u':
			o.uri = optarg;
			break;
		case 'C':
			free(o.cache);
			o.cache = strdup(optarg);
			break;
		case 'A':
			free(o.agent);
			o.agent = strdup(optarg);
			break;
		case 'W':
			free(o.workloads);
			o.workloads = strdup(optarg);
			break;
		case 'f':
			o.force = 1;
			break;
		case 'P':
			o.prefix = optarg;
			break;
		default:
			goto usage_err;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "schedlab guest: unexpected argument '%s'.\n", argv[optind + 1]);
		goto usage_err;
	}
	data = fs_data_dir();
	if (!o.cache)
		o.cache = fs_default_cache_dir();
	if (!o.agent)
		o.agent = fs_path_join(data, "build/agent");
	if (!o.workloads)
		o.workloads = fs_path_join(data, "build/workloads");

	if (strcmp(sub, "run") == 0)
		rc = cmd_run(&o);
	else if (strcmp(sub, "probe-accel") == 0)
		rc = cmd_probe(&o);
	else if (strcmp(sub, "initramfs") == 0)
		rc = cmd_initramfs(&o);
	else if (strcmp(sub, "cleanup") == 0)
		rc = cmd_cleanup(&o);
	else {
		fprintf(stderr, "schedlab guest: unknown subcommand '%s'.\n", sub);
		rc = EXIT_ERROR;
	}
	free(o.cache);
	free(o.agent);
	free(o.workloads);
	return rc;
bad:
	fprintf(stderr, "schedlab guest: the value '%s' is out of range.\n", optarg);
usage_err:
	free(o.cache);
	free(o.agent);
	free(o.workloads);
	usage(stderr);
	return EXIT_ERROR;
}
