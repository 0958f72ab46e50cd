/* The queue: ordering (re-queued first, then priority, then FIFO), workers
 * running jobs through a fake runner, resume from stored runs without
 * redoing them, cancel of a queued and of a running job, and shutdown
 * re-queueing a running job instead of cancelling it; a store that cannot
 * write a job's end (a full disk, played by a trigger) never leaves the job
 * running: it is marked failed with the reason, or re-queued at the next
 * start when nothing at all can be written. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "server/queue.h"
#include "server/store-internal.h"
#include "util/fs.h"

static atomic_int runs_executed;
static atomic_int runs_reused;

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int spec_int(json_object *spec, const char *k, int def)
{
	json_object *v = NULL;
	return json_object_object_get_ex(spec, k, &v) ? json_object_get_int(v) : def;
}

/* Runs spec.runs fake runs of spec.sleep_ms each, honouring every hook. */
static int fake_runner(const struct runner_config *cfg, json_object *spec, const char *job_dir,
		       const struct runner_hooks *h, json_object **ret_result, struct sl_error *err)
{
	(void)cfg;
	assert_true(fs_exists(job_dir));
	int n = spec_int(spec, "runs", 2), ms = spec_int(spec, "sleep_ms", 10);
	struct runner_progress p = {.phase = "building", .percent = 0, .message = "fake build"};
	h->progress(h->userdata, &p);
	_cleanup_json_ json_object *runs = json_object_new_array();
	for (int i = 0; i < n; i++) {
		char key[32];
		snprintf(key, sizeof(key), "v#%d", i);
		json_object *old = h->lookup_run(h->userdata, key);
		if (old) {
			atomic_fetch_add(&runs_reused, 1);
			json_object_array_add(runs, old);
			continue;
		}
		p = (struct runner_progress){.phase = "running",
					     .percent = 100.0 * i / n,
					     .run_index = i + 1,
					     .run_total = n,
					     .message = key};
		h->progress(h->userdata, &p);
		for (int t = 0; t < ms; t += 5) {
			if (h->cancelled(h->userdata))
				return error_set(err, ERR_CANCELLED, ECANCELED, "Cancelled.");
			sleep_ms(5);
		}
		json_object *run = json_object_new_object();
		json_object_object_add(run, "key", json_object_new_string(key));
		json_object_object_add(run, "status", json_object_new_string("ok"));
		json_object_object_add(run, "boot_seconds", json_object_new_double(1.0));
		h->run_done(h->userdata, key, run);
		atomic_fetch_add(&runs_executed, 1);
		json_object_array_add(runs, run);
	}
	if (spec_int(spec, "fail", 0))
		return error_set(err, ERR_INFRA, EIO, "The fake hypervisor failed.");
	json_object *result = json_object_new_object();
	json_object_object_add(result, "verdict", json_object_new_string("fail"));
	json_object_object_add(result, "runs", TAKE_PTR(runs));
	*ret_result = result;
	return 0;
}

struct fixture {
	char dir[64];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_queue.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(store_open(f->dir, &f->s, NULL), 0);
	atomic_store(&runs_executed, 0);
	atomic_store(&runs_reused, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	store_free(f->s);
	fs_rm_rf(f->dir, NULL);
	free(f);
	return 0;
}

static void add_job(struct store *s, char id[STORE_ID_LEN + 1], int prio, const char *spec_text)
{
	assert_int_equal(store_id_new(id, NULL), 0);
	_cleanup_json_ json_object *spec = json_tokener_parse(spec_text);
	assert_non_null(spec);
	assert_int_equal(store_job_create(s, id, "j", prio, spec, spec, NULL), 0);
}

static const char *job_status(struct store *s, const char *id)
{
	static char buf[16];
	_cleanup_json_ json_object *job = NULL;
	assert_int_equal(store_job_get(s, id, &job, NULL), 0);
	snprintf(buf, sizeof(buf), "%s",
		 json_object_get_string(json_object_object_get(job, "status")));
	return buf;
}

static void wait_status(struct store *s, const char *id, const char *status)
{
	for (int i = 0; i < 1000; i++) {
		if (strcmp(job_status(s, id), status) == 0)
			return;
		sleep_ms(10);
	}
	fail_msg("job %s stayed %s, expected %s", id, job_status(s, id), status);
}

static struct queue *make_queue(struct store *s, int workers)
{
	struct queue_opts o = {.store = s, .runner = fake_runner, .workers = workers};
	struct queue *q = NULL;
	struct sl_error err = {0};
	if (queue_new(&o, &q, &err) < 0)
		fail_msg("queue_new: %s", err.message);
	return q;
}

static void test_order(void **state)
{
	struct fixture *f = *state;
	char a[33], b[33], c[33], d[33];
	add_job(f->s, a, 0, "{}");
	add_job(f->s, b, 10, "{}");
	add_job(f->s, c, 0, "{}");
	add_job(f->s, d, 10, "{}");
	struct queue *q = make_queue(f->s, 1);
	char e[33];
	add_job(f->s, e, -1, "{}");
	assert_int_equal(queue_push(q, e, -1, false, NULL), 0);
	char g[33];
	add_job(f->s, g, -5, "{}");
	assert_int_equal(queue_push(q, g, -5, true, NULL), 0);
	assert_int_equal(queue_push(q, "../../etc", 0, false, NULL), -EINVAL);
	_cleanup_json_ json_object *snap = queue_snapshot(q);
	const char *want[] = {g, b, d, a, c, e};
	assert_int_equal(json_object_array_length(snap), 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(json_object_get_string(json_object_array_get_idx(snap, i)),
				    want[i]);
	assert_int_equal(queue_depth(q), 6);
	queue_free(q);
}

static void test_run_and_fail(void **state)
{
	struct fixture *f = *state;
	char ok[33], bad[33];
	add_job(f->s, ok, 0, "{\"runs\":3,\"sleep_ms\":10}");
	add_job(f->s, bad, 0, "{\"runs\":1,\"sleep_ms\":10,\"fail\":1}");
	struct queue *q = make_queue(f->s, 2);
	assert_int_equal(queue_start(q, NULL), 0);
	wait_status(f->s, ok, "done");
	wait_status(f->s, bad, "failed");
	queue_free(q);
	assert_int_equal(atomic_load(&runs_executed), 4);
	_cleanup_json_ json_object *job = NULL, *bjob = NULL;
	assert_int_equal(store_job_get(f->s, ok, &job, NULL), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(job, "verdict")), "fail");
	_cleanup_free_ char *dir = store_job_dir(f->s, ok);
	_cleanup_free_ char *res = fs_path_join(dir, "result.json");
	assert_true(fs_exists(res));
	assert_int_equal(store_job_get(f->s, bad, &bjob, NULL), 0);
	json_object *e = json_object_object_get(bjob, "error");
	assert_non_null(e);
	assert_string_equal(json_object_get_string(json_object_object_get(e, "code")),
			    "infrastructure");
	/* Events carry the phases and each finished run. */
	_cleanup_json_ json_object *ev = NULL;
	assert_int_equal(store_events_after(f->s, ok, 0, 100, &ev, NULL), 0);
	int nrun = 0, nprog = 0;
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		const char *t = json_object_get_string(
		    json_object_object_get(json_object_array_get_idx(ev, i), "type"));
		nrun += strcmp(t, "run") == 0;
		nprog += strcmp(t, "progress") == 0;
	}
	assert_int_equal(nrun, 3);
	assert_true(nprog >= 2);
}

static void test_cancel(void **state)
{
	struct fixture *f = *state;
	char running[33], queued[33];
	add_job(f->s, running, 0, "{\"runs\":1,\"sleep_ms\":5000}");
	add_job(f->s, queued, 0, "{\"runs\":1}");
	struct queue *q = make_queue(f->s, 1);
	assert_int_equal(queue_start(q, NULL), 0);
	wait_status(f->s, running, "running");
	enum queue_cancel_outcome out;
	struct sl_error err = {0};
	assert_int_equal(queue_cancel(q, queued, &out, &err), 0);
	assert_int_equal(out, QUEUE_CANCELLED);
	assert_string_equal(job_status(f->s, queued), "cancelled");
	assert_int_equal(queue_cancel(q, running, &out, &err), 0);
	assert_int_equal(out, QUEUE_CANCEL_REQUESTED);
	wait_status(f->s, running, "cancelled");
	assert_true(queue_cancel(q, running, &out, &err) < 0);
	assert_int_equal(err.kind, ERR_CONFLICT);
	assert_true(queue_cancel(q, "0123456789abcdef0123456789abcdef", &out, &err) < 0);
	assert_int_equal(err.kind, ERR_NOT_FOUND);
	queue_free(q);
	assert_int_equal(atomic_load(&runs_executed), 0);
}

/* The worker calls "ended" after it wrote the job's final status and
 * before the job leaves its running list; ended_gate holds it there. */
static atomic_int ended_gate, in_ended;
static void gated_ended(void *cls, const char *job_id)
{
	(void)cls, (void)job_id;
	atomic_store(&in_ended, 1);
	while (atomic_load(&ended_gate) == 0)
		sleep_ms(5);
}

/* A job that has just ended (final in the store, its worker not yet gone)
 * answers a cancel with ERR_CONFLICT like any ended job, not a 202
 * "cancel requested" (test_cancel failed at random on this race). */
static void test_cancel_just_ended(void **state)
{
	struct fixture *f = *state;
	char id[33];
	add_job(f->s, id, 0, "{\"runs\":1}");
	struct queue_opts o = {
	    .store = f->s, .runner = fake_runner, .workers = 1, .ended = gated_ended};
	struct queue *q = NULL;
	struct sl_error err = {0};
	atomic_store(&ended_gate, 0);
	atomic_store(&in_ended, 0);
	if (queue_new(&o, &q, &err) < 0)
		fail_msg("queue_new: %s", err.message);
	assert_int_equal(queue_start(q, NULL), 0);
	for (int i = 0; i < 1000 && !atomic_load(&in_ended); i++)
		sleep_ms(10);
	assert_true(atomic_load(&in_ended));
	assert_string_equal(job_status(f->s, id), "done");
	enum queue_cancel_outcome out = QUEUE_CANCELLED;
	assert_true(queue_cancel(q, id, &out, &err) < 0);
	assert_int_equal(err.kind, ERR_CONFLICT);
	atomic_store(&ended_gate, 1);
	queue_free(q);
}

static void test_shutdown_resume(void **state)
{
	struct fixture *f = *state;
	char id[33];
	add_job(f->s, id, 0, "{\"runs\":4,\"sleep_ms\":150}");
	struct queue *q = make_queue(f->s, 1);
	assert_int_equal(queue_start(q, NULL), 0);
	int stored = 0;
	for (int i = 0; i < 500 && stored < 2; i++) {
		sleep_ms(10);
		assert_int_equal(store_run_count(f->s, id, &stored, NULL), 0);
	}
	assert_int_equal(stored, 2);
	queue_free(q);
	/* Shutdown re-queues at the front, it does not cancel. */
	assert_string_equal(job_status(f->s, id), "queued");
	int before = atomic_load(&runs_executed);
	q = make_queue(f->s, 1);
	assert_int_equal(queue_depth(q), 1);
	assert_int_equal(queue_start(q, NULL), 0);
	wait_status(f->s, id, "done");
	queue_free(q);
	/* Every run exactly once: the stored ones were reused, not redone. */
	assert_int_equal(atomic_load(&runs_executed), 4);
	assert_int_equal(atomic_load(&runs_reused), before);
	int n = 0;
	assert_int_equal(store_run_count(f->s, id, &n, NULL), 0);
	assert_int_equal(n, 4);
}

/* Every store write of a final status in the given set fails as a full
 * disk would (a temporary trigger on the store's own connection). */
static void store_refuse_final(struct store *s, const char *statuses)
{
	char sql[512];
	snprintf(sql, sizeof(sql),
		 "CREATE TEMP TRIGGER refuse_final BEFORE UPDATE OF status ON jobs "
		 "WHEN NEW.status IN (%s) BEGIN SELECT RAISE(ABORT, 'database or disk is full'); "
		 "END;",
		 statuses);
	assert_int_equal(store_db_exec(s, sql, NULL), 0);
}

static struct queue *make_queue_fast_retry(struct store *s)
{
	struct queue_opts o = {
	    .store = s, .runner = fake_runner, .workers = 1, .store_retry_ms = 1};
	struct queue *q = NULL;
	struct sl_error err = {0};
	if (queue_new(&o, &q, &err) < 0)
		fail_msg("queue_new: %s", err.message);
	return q;
}

static void test_finish_store_fails(void **state)
{
	struct fixture *f = *state;
	char id[33];
	add_job(f->s, id, 0, "{\"runs\":1}");
	store_refuse_final(f->s, "'done'");
	struct queue *q = make_queue_fast_retry(f->s);
	assert_int_equal(queue_start(q, NULL), 0);
	wait_status(f->s, id, "failed");
	for (int i = 0; i < 500 && queue_running(q); i++)
		sleep_ms(10);
	assert_int_equal(queue_running(q), 0);
	queue_free(q);
	_cleanup_json_ json_object *job = NULL;
	assert_int_equal(store_job_get(f->s, id, &job, NULL), 0);
	const char *msg = json_object_get_string(
	    json_object_object_get(json_object_object_get(job, "error"), "message"));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "could not be stored"));
	assert_non_null(strstr(msg, "disk is full"));
}

/* Nothing final can be written: the worker gives up after bounded tries,
 * leaves its running list, and the next start re-queues the job. */
static void test_finish_store_fails_all(void **state)
{
	struct fixture *f = *state;
	char id[33];
	add_job(f->s, id, 0, "{\"runs\":1}");
	store_refuse_final(f->s, "'done', 'failed', 'cancelled'");
	struct queue *q = make_queue_fast_retry(f->s);
	assert_int_equal(queue_start(q, NULL), 0);
	int stored = 0;
	for (int i = 0; i < 500 && stored < 1; i++) {
		sleep_ms(10);
		assert_int_equal(store_run_count(f->s, id, &stored, NULL), 0);
	}
	for (int i = 0; i < 500 && (queue_running(q) || queue_depth(q)); i++)
		sleep_ms(10);
	assert_int_equal(queue_running(q), 0);
	queue_free(q);
	assert_false(store_status_is_final(job_status(f->s, id)));
	assert_int_equal(store_db_exec(f->s, "DROP TRIGGER temp.refuse_final;", NULL), 0);
	int requeued = 0;
	assert_int_equal(store_requeue_interrupted(f->s, &requeued, NULL), 0);
	assert_int_equal(requeued, 1);
	assert_string_equal(job_status(f->s, id), "queued");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_run_and_fail, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_just_ended, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_shutdown_resume, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_store_fails, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_store_fails_all, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
