/* The SQLite job store; see store.h for the concurrency contract. */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "server/store.h"
#include "util/fs.h"

struct store {
	sqlite3 *db;
	char *state_dir;
	pthread_mutex_t lock;
};

/* Each entry moves the schema from version i to i+1. Append only. */
static const char *const migrations[] = {
    /* 1: the first schema */
    "CREATE TABLE jobs ("
    "  id TEXT PRIMARY KEY,"
    "  name TEXT NOT NULL,"
    "  status TEXT NOT NULL,"
    "  priority INTEGER NOT NULL DEFAULT 0,"
    "  spec_json TEXT NOT NULL,"
    "  expanded_json TEXT NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  started_at TEXT,"
    "  finished_at TEXT,"
    "  verdict TEXT,"
    "  progress_json TEXT,"
    "  error_json TEXT,"
    "  queue_front INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX jobs_status ON jobs(status);"
    "CREATE TABLE runs ("
    "  job_id TEXT NOT NULL REFERENCES jobs(id),"
    "  run_key TEXT NOT NULL,"
    "  run_json TEXT NOT NULL,"
    "  finished_at TEXT NOT NULL,"
    "  PRIMARY KEY (job_id, run_key));"
    "CREATE TABLE events ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  job_id TEXT NOT NULL,"
    "  ts TEXT NOT NULL,"
    "  type TEXT NOT NULL,"
    "  data_json TEXT);"
    "CREATE INDEX events_job ON events(job_id, id);"
    "CREATE TABLE comparisons ("
    "  job_id TEXT NOT NULL,"
    "  job_name TEXT NOT NULL,"
    "  finished_at TEXT NOT NULL,"
    "  variant TEXT NOT NULL,"
    "  workload TEXT NOT NULL,"
    "  metric TEXT NOT NULL,"
    "  baseline_median REAL,"
    "  candidate_median REAL,"
    "  change REAL,"
    "  ci_lo REAL,"
    "  ci_hi REAL,"
    "  p_value REAL,"
    "  verdict TEXT);"
    "CREATE INDEX comparisons_metric ON comparisons(workload, metric, finished_at);"
    "CREATE TABLE kernel_builds ("
    "  job_id TEXT NOT NULL,"
    "  kernel TEXT NOT NULL,"
    "  build_seconds REAL,"
    "  cached INTEGER NOT NULL DEFAULT 0);",
};

static const char *const statuses[] = {
    "queued", "building", "booting", "running", "comparing", "done", "failed", "cancelled",
};

void store_now_iso(char buf[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

bool store_id_valid(const char *id)
{
	if (!id)
		return false;
	size_t i;
	for (i = 0; id[i]; i++) {
		if (i >= STORE_ID_LEN)
			return false;
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	}
	return i == STORE_ID_LEN;
}

int store_id_new(char ret_id[STORE_ID_LEN + 1], struct sl_error *err)
{
	unsigned char b[STORE_ID_LEN / 2];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t k = getrandom(b + got, sizeof(b) - got, 0);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return error_set(err, ERR_INTERNAL, errno, "Cannot read random bytes: %s.",
					 strerror(errno));
		}
		got += (size_t)k;
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(ret_id + 2 * i, 3, "%02x", b[i]);
	return 0;
}

bool store_status_is_final(const char *status)
{
	return status && (strcmp(status, "done") == 0 || strcmp(status, "failed") == 0 ||
			  strcmp(status, "cancelled") == 0);
}

bool store_status_valid(const char *status)
{
	for (size_t i = 0; status && i < ELEMENTSOF(statuses); i++)
		if (strcmp(status, statuses[i]) == 0)
			return true;
	return false;
}

const char *store_state_dir(const struct store *s)
{
	return s->state_dir;
}

char *store_job_dir(const struct store *s, const char *id)
{
	if (!store_id_valid(id))
		return NULL;
	_cleanup_free_ char *jobs = fs_path_join(s->state_dir, "jobs");
	return fs_path_join(jobs, id);
}

static int db_error(struct store *s, struct sl_error *err, const char *what)
{
	return error_set(err, ERR_INTERNAL, EIO, "The job store failed to %s: %s.", what,
			 sqlite3_errmsg(s->db));
}

static int db_exec(struct store *s, const char *sql, struct sl_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int r =
		    error_set(err, ERR_INTERNAL, EIO, "The job store failed to run '%.60s': %s.",
			      sql, msg ? msg : "unknown error");
		sqlite3_free(msg);
		return r;
	}
	return 0;
}

static void stmt_finalizep(sqlite3_stmt **st)
{
	if (*st)
		sqlite3_finalize(*st);
}
#define _cleanup_stmt_ _cleanup_(stmt_finalizep)

static void unlockp(pthread_mutex_t **m)
{
	if (*m)
		pthread_mutex_unlock(*m);
}
/* Holds the store's mutex until the end of the scope. */
#define STORE_LOCK(s)                                                                              \
	_cleanup_(unlockp) pthread_mutex_t *_lock_ = &(s)->lock;                                   \
	pthread_mutex_lock(_lock_)

static int prepare(struct store *s, const char *sql, sqlite3_stmt **ret, struct sl_error *err)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, ret, NULL) != SQLITE_OK)
		return db_error(s, err, "prepare a query");
	return 0;
}

/* Binds text, or NULL for a NULL pointer. */
static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_json(sqlite3_stmt *st, int i, json_object *o)
{
	if (o)
		sqlite3_bind_text(st, i, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
				  -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static json_object *column_json(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	return t ? json_tokener_parse(t) : NULL;
}

static json_object *column_string(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	return t ? json_object_new_string(t) : NULL;
}

static int migrate(struct store *s, struct sl_error *err)
{
	int r = db_exec(s, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);",
			err);
	if (r < 0)
		return r;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	r = prepare(s, "SELECT COALESCE(MAX(version), 0) FROM schema_version;", &st, err);
	if (r < 0)
		return r;
	if (sqlite3_step(st) != SQLITE_ROW)
		return db_error(s, err, "read the schema version");
	int version = sqlite3_column_int(st, 0);
	if (version > (int)ELEMENTSOF(migrations))
		return error_set(err, ERR_INTERNAL, EPROTO,
				 "The job store has schema version %d, newer than this schedlab "
				 "(%zu).",
				 version, ELEMENTSOF(migrations));
	for (int v = version; v < (int)ELEMENTSOF(migrations); v++) {
		char bump[96];
		snprintf(bump, sizeof(bump), "INSERT INTO schema_version(version) VALUES (%d);",
			 v + 1);
		if ((r = db_exec(s, "BEGIN IMMEDIATE;", err)) < 0)
			return r;
		if ((r = db_exec(s, migrations[v], err)) < 0 || (r = db_exec(s, bump, err)) < 0) {
			db_exec(s, "ROLLBACK;", NULL);
			return error_prefix(err, "Migration to schema version %d failed", v + 1);
		}
		if ((r = db_exec(s, "COMMIT;", err)) < 0)
			return r;
	}
	return 0;
}

int store_open(const char *state_dir, struct store **ret_store, struct sl_error *err)
{
	int r = fs_mkdir_p(state_dir, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *jobs = fs_path_join(state_dir, "jobs");
	if ((r = fs_mkdir_p(jobs, err)) < 0)
		return r;
	struct store *s = calloc(1, sizeof(*s));
	if (!s)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	pthread_mutex_init(&s->lock, NULL);
	s->state_dir = strdup(state_dir);
	_cleanup_free_ char *path = fs_path_join(state_dir, "schedlab.db");
	if (sqlite3_open_v2(path, &s->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		r = error_set(err, ERR_INTERNAL, EIO, "Cannot open the job store '%s': %s.", path,
			      s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	/* WAL: the trend report and other readers do not block the service. */
	if ((r = db_exec(s, "PRAGMA journal_mode=WAL;", err)) < 0 ||
	    (r = db_exec(s, "PRAGMA synchronous=NORMAL;", err)) < 0 ||
	    (r = db_exec(s, "PRAGMA foreign_keys=ON;", err)) < 0 || (r = migrate(s, err)) < 0)
		goto fail;
	*ret_store = s;
	return 0;
fail:
	store_free(s);
	return r;
}

void store_free(struct store *s)
{
	if (!s)
		return;
	if (s->db)
		sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	free(s->state_dir);
	free(s);
}

/* Caller holds the lock. */
static int event_add_locked(struct store *s, const char *id, const char *type, json_object *data,
			    int64_t *ret_event_id, struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, "INSERT INTO events(job_id, ts, type, data_json) VALUES (?,?,?,?);", &st,
			err);
	if (r < 0)
		return r;
	char now[32];
	store_now_iso(now);
	bind_text(st, 1, id);
	bind_text(st, 2, now);
	bind_text(st, 3, type);
	bind_json(st, 4, data);
	if (sqlite3_step(st) != SQLITE_DONE)
		return db_error(s, err, "record an event");
	if (ret_event_id)
		*ret_event_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int store_event_add(struct store *s, const char *id, const char *type, json_object *data,
		    int64_t *ret_event_id, struct sl_error *err)
{
	STORE_LOCK(s);
	return event_add_locked(s, id, type, data, ret_event_id, err);
}

static int status_event_locked(struct store *s, const char *id, const char *status,
			       const char *verdict, struct sl_error *err)
{
	_cleanup_json_ json_object *d = json_object_new_object();
	json_object_object_add(d, "status", json_object_new_string(status));
	if (verdict)
		json_object_object_add(d, "verdict", json_object_new_string(verdict));
	return event_add_locked(s, id, "status", d, NULL, err);
}

int store_job_create(struct store *s, const char *id, const char *name, int priority,
		     json_object *spec, json_object *expanded, struct sl_error *err)
{
	if (!store_id_valid(id))
		return error_set(err, ERR_INVALID, EINVAL, "Job id '%.64s' is not valid.", id);
	_cleanup_free_ char *dir = store_job_dir(s, id);
	int r = fs_mkdir_p(dir, err);
	if (r < 0)
		return r;
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if ((r = prepare(s,
			 "INSERT INTO jobs(id, name, status, priority, spec_json, expanded_json, "
			 "created_at) VALUES (?,?,'queued',?,?,?,?);",
			 &st, err)) < 0)
		return r;
	char now[32];
	store_now_iso(now);
	bind_text(st, 1, id);
	bind_text(st, 2, name ? name : "");
	sqlite3_bind_int(st, 3, priority);
	bind_json(st, 4, spec);
	bind_json(st, 5, expanded);
	bind_text(st, 6, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		return db_error(s, err, "store a new job");
	return status_event_locked(s, id, "queued", NULL, err);
}

#define JOB_COLUMNS                                                                                \
	"id, name, status, priority, progress_json, created_at, started_at, finished_at, "         \
	"verdict, error_json"

static json_object *job_from_row(sqlite3_stmt *st)
{
	json_object *j = json_object_new_object();
	json_object_object_add(j, "id", column_string(st, 0));
	json_object_object_add(j, "name", column_string(st, 1));
	json_object_object_add(j, "status", column_string(st, 2));
	json_object_object_add(j, "priority", json_object_new_int(sqlite3_column_int(st, 3)));
	json_object *p = column_json(st, 4);
	if (!p) {
		p = json_object_new_object();
		json_object_object_add(p, "phase", column_string(st, 2));
		json_object_object_add(p, "percent", json_object_new_double(0));
		json_object_object_add(p, "run_index", json_object_new_int(0));
		json_object_object_add(p, "run_total", json_object_new_int(0));
		json_object_object_add(p, "message", json_object_new_string(""));
	}
	json_object_object_add(j, "progress", p);
	json_object_object_add(j, "created_at", column_string(st, 5));
	json_object_object_add(j, "started_at", column_string(st, 6));
	json_object_object_add(j, "finished_at", column_string(st, 7));
	json_object_object_add(j, "verdict", column_string(st, 8));
	json_object_object_add(j, "error", column_json(st, 9));
	return j;
}

int store_job_get(struct store *s, const char *id, json_object **ret_job, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return error_set(err, ERR_NOT_FOUND, ENOENT, "Job '%.64s' does not exist.", id);
	if (rc != SQLITE_ROW)
		return db_error(s, err, "read a job");
	*ret_job = job_from_row(st);
	return 0;
}

int store_job_expanded(struct store *s, const char *id, json_object **ret_expanded,
		       struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, "SELECT expanded_json FROM jobs WHERE id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return error_set(err, ERR_NOT_FOUND, ENOENT, "Job '%.64s' does not exist.", id);
	if (rc != SQLITE_ROW)
		return db_error(s, err, "read a job's spec");
	json_object *e = column_json(st, 0);
	if (!e)
		return error_set(err, ERR_INTERNAL, EIO, "The stored spec of job '%s' is not JSON.",
				 id);
	*ret_expanded = e;
	return 0;
}

int store_job_list(struct store *s, const char *status, int limit, int offset,
		   json_object **ret_jobs, int64_t *ret_total, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	_cleanup_stmt_ sqlite3_stmt *ct = NULL;
	int r = prepare(s,
			"SELECT " JOB_COLUMNS " FROM jobs WHERE (?1 IS NULL OR status = ?1) "
			"ORDER BY rowid DESC LIMIT ?2 OFFSET ?3;",
			&st, err);
	if (r < 0)
		return r;
	if ((r = prepare(s, "SELECT COUNT(*) FROM jobs WHERE (?1 IS NULL OR status = ?1);", &ct,
			 err)) < 0)
		return r;
	bind_text(st, 1, status);
	sqlite3_bind_int(st, 2, limit);
	sqlite3_bind_int(st, 3, offset);
	bind_text(ct, 1, status);
	_cleanup_json_ json_object *arr = json_object_new_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_array_add(arr, job_from_row(st));
	if (rc != SQLITE_DONE)
		return db_error(s, err, "list jobs");
	if (sqlite3_step(ct) != SQLITE_ROW)
		return db_error(s, err, "count jobs");
	if (ret_total)
		*ret_total = sqlite3_column_int64(ct, 0);
	*ret_jobs = TAKE_PTR(arr);
	return 0;
}

/* Caller holds the lock. Reads the status into buf; -ENOENT if no such job. */
static int status_locked(struct store *s, const char *id, char buf[16], struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, "SELECT status FROM jobs WHERE id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return error_set(err, ERR_NOT_FOUND, ENOENT, "Job '%.64s' does not exist.", id);
	if (rc != SQLITE_ROW)
		return db_error(s, err, "read a job's status");
	snprintf(buf, 16, "%s", (const char *)sqlite3_column_text(st, 0));
	return 0;
}

int store_job_set_status(struct store *s, const char *id, const char *status, struct sl_error *err)
{
	if (!store_status_valid(status) || store_status_is_final(status))
		return error_set(err, ERR_INTERNAL, EINVAL,
				 "Status '%s' cannot be set without finishing the job.", status);
	STORE_LOCK(s);
	char old[16];
	int r = status_locked(s, id, old, err);
	if (r < 0)
		return r;
	if (strcmp(old, status) == 0)
		return 0;
	if (store_status_is_final(old))
		return error_set(err, ERR_CONFLICT, EALREADY, "Job '%s' is already %s.", id, old);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if ((r = prepare(s,
			 "UPDATE jobs SET status = ?2, started_at = CASE WHEN ?2 != 'queued' "
			 "THEN COALESCE(started_at, ?3) ELSE started_at END WHERE id = ?1;",
			 &st, err)) < 0)
		return r;
	char now[32];
	store_now_iso(now);
	bind_text(st, 1, id);
	bind_text(st, 2, status);
	bind_text(st, 3, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		return db_error(s, err, "update a job's status");
	return status_event_locked(s, id, status, NULL, err);
}

int store_job_set_progress(struct store *s, const char *id, json_object *progress,
			   struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, "UPDATE jobs SET progress_json = ? WHERE id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_json(st, 1, progress);
	bind_text(st, 2, id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return db_error(s, err, "store a job's progress");
	return event_add_locked(s, id, "progress", progress, NULL, err);
}

int store_job_finish(struct store *s, const char *id, const char *status, const char *verdict,
		     json_object *error, struct sl_error *err)
{
	if (!store_status_is_final(status))
		return error_set(err, ERR_INTERNAL, EINVAL, "Status '%s' is not final.", status);
	STORE_LOCK(s);
	char old[16];
	int r = status_locked(s, id, old, err);
	if (r < 0)
		return r;
	if (store_status_is_final(old))
		return error_set(err, ERR_CONFLICT, EALREADY, "Job '%s' is already %s.", id, old);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if ((r = prepare(s,
			 "UPDATE jobs SET status = ?2, verdict = ?3, error_json = ?4, "
			 "finished_at = ?5, queue_front = 0 WHERE id = ?1;",
			 &st, err)) < 0)
		return r;
	char now[32];
	store_now_iso(now);
	bind_text(st, 1, id);
	bind_text(st, 2, status);
	bind_text(st, 3, verdict);
	bind_json(st, 4, error);
	bind_text(st, 5, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		return db_error(s, err, "finish a job");
	return status_event_locked(s, id, status, verdict, err);
}

int store_job_requeue_front(struct store *s, const char *id, struct sl_error *err)
{
	STORE_LOCK(s);
	char old[16];
	int r = status_locked(s, id, old, err);
	if (r < 0)
		return r;
	if (store_status_is_final(old))
		return error_set(err, ERR_CONFLICT, EALREADY, "Job '%s' is already %s.", id, old);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	if ((r = prepare(s, "UPDATE jobs SET status = 'queued', queue_front = 1 WHERE id = ?;", &st,
			 err)) < 0)
		return r;
	bind_text(st, 1, id);
	if (sqlite3_step(st) != SQLITE_DONE)
		return db_error(s, err, "re-queue a job");
	return status_event_locked(s, id, "queued", NULL, err);
}

int store_requeue_interrupted(struct store *s, int *ret_count, struct sl_error *err)
{
	_cleanup_json_ json_object *ids = json_object_new_array();
	{
		STORE_LOCK(s);
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		int r = prepare(s,
				"SELECT id FROM jobs WHERE status IN "
				"('building','booting','running','comparing') ORDER BY rowid;",
				&st, err);
		if (r < 0)
			return r;
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			json_object_array_add(ids, column_string(st, 0));
		if (rc != SQLITE_DONE)
			return db_error(s, err, "find interrupted jobs");
	}
	size_t n = json_object_array_length(ids);
	for (size_t i = 0; i < n; i++) {
		int r = store_job_requeue_front(
		    s, json_object_get_string(json_object_array_get_idx(ids, i)), err);
		if (r < 0)
			return r;
	}
	if (ret_count)
		*ret_count = (int)n;
	return 0;
}

int store_queued_jobs(struct store *s, json_object **ret_jobs, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s,
			"SELECT id, priority, queue_front, rowid FROM jobs WHERE status = 'queued' "
			"ORDER BY queue_front DESC, priority DESC, rowid ASC;",
			&st, err);
	if (r < 0)
		return r;
	_cleanup_json_ json_object *arr = json_object_new_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_object *j = json_object_new_object();
		json_object_object_add(j, "id", column_string(st, 0));
		json_object_object_add(j, "priority",
				       json_object_new_int(sqlite3_column_int(st, 1)));
		json_object_object_add(j, "front",
				       json_object_new_boolean(sqlite3_column_int(st, 2)));
		json_object_object_add(j, "seq",
				       json_object_new_int64(sqlite3_column_int64(st, 3)));
		json_object_array_add(arr, j);
	}
	if (rc != SQLITE_DONE)
		return db_error(s, err, "list queued jobs");
	*ret_jobs = TAKE_PTR(arr);
	return 0;
}

int store_run_put(struct store *s, const char *id, const char *run_key, json_object *run,
		  struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s,
			"INSERT OR IGNORE INTO runs(job_id, run_key, run_json, finished_at) "
			"VALUES (?,?,?,?);",
			&st, err);
	if (r < 0)
		return r;
	char now[32];
	store_now_iso(now);
	bind_text(st, 1, id);
	bind_text(st, 2, run_key);
	bind_json(st, 3, run);
	bind_text(st, 4, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		return db_error(s, err, "store a finished run");
	return 0;
}

int store_run_get(struct store *s, const char *id, const char *run_key, json_object **ret_run,
		  struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, "SELECT run_json FROM runs WHERE job_id = ? AND run_key = ?;", &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	bind_text(st, 2, run_key);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return error_set(err, ERR_NOT_FOUND, ENOENT,
				 "Run '%.64s' of job '%.64s' is not stored.", run_key, id);
	if (rc != SQLITE_ROW)
		return db_error(s, err, "read a stored run");
	json_object *run = column_json(st, 0);
	if (!run)
		return error_set(err, ERR_INTERNAL, EIO, "Stored run '%.64s' is not JSON.",
				 run_key);
	*ret_run = run;
	return 0;
}

int store_run_count(struct store *s, const char *id, int *ret_count, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, "SELECT COUNT(*) FROM runs WHERE job_id = ?;", &st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW)
		return db_error(s, err, "count runs");
	*ret_count = sqlite3_column_int(st, 0);
	return 0;
}

int store_events_after(struct store *s, const char *id, int64_t after_id, int limit,
		       json_object **ret_events, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s,
			"SELECT id, ts, type, data_json FROM events WHERE job_id = ? AND id > ? "
			"ORDER BY id LIMIT ?;",
			&st, err);
	if (r < 0)
		return r;
	bind_text(st, 1, id);
	sqlite3_bind_int64(st, 2, after_id);
	sqlite3_bind_int(st, 3, limit);
	_cleanup_json_ json_object *arr = json_object_new_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_object *e = json_object_new_object();
		json_object_object_add(e, "id", json_object_new_int64(sqlite3_column_int64(st, 0)));
		json_object_object_add(e, "ts", column_string(st, 1));
		json_object_object_add(e, "type", column_string(st, 2));
		json_object_object_add(e, "data", column_json(st, 3));
		json_object_array_add(arr, e);
	}
	if (rc != SQLITE_DONE)
		return db_error(s, err, "read events");
	*ret_events = TAKE_PTR(arr);
	return 0;
}

static void bind_double_at(sqlite3_stmt *st, int i, json_object *parent, const char *key)
{
	json_object *v = NULL;
	if (parent && json_object_object_get_ex(parent, key, &v) &&
	    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		sqlite3_bind_double(st, i, json_object_get_double(v));
	else
		sqlite3_bind_null(st, i);
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v = NULL;
	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return NULL;
}

int store_result_index(struct store *s, const char *id, json_object *result, struct sl_error *err)
{
	STORE_LOCK(s);
	int r;
	char now[32];
	store_now_iso(now);
	json_object *job = NULL, *cmps = NULL, *kernels = NULL;
	json_object_object_get_ex(result, "job", &job);
	const char *name = get_str(job, "name");
	const char *finished = get_str(result, "finished_at");
	if ((r = db_exec(s, "BEGIN IMMEDIATE;", err)) < 0)
		return r;
	_cleanup_stmt_ sqlite3_stmt *del = NULL, *ins = NULL, *delk = NULL, *insk = NULL;
	if ((r = prepare(s, "DELETE FROM comparisons WHERE job_id = ?;", &del, err)) < 0 ||
	    (r = prepare(s, "DELETE FROM kernel_builds WHERE job_id = ?;", &delk, err)) < 0 ||
	    (r = prepare(s,
			 "INSERT INTO comparisons(job_id, job_name, finished_at, variant, "
			 "workload, metric, baseline_median, candidate_median, change, ci_lo, "
			 "ci_hi, p_value, verdict) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?);",
			 &ins, err)) < 0 ||
	    (r = prepare(s,
			 "INSERT INTO kernel_builds(job_id, kernel, build_seconds, cached) "
			 "VALUES (?,?,?,?);",
			 &insk, err)) < 0)
		goto rollback;
	bind_text(del, 1, id);
	bind_text(delk, 1, id);
	if (sqlite3_step(del) != SQLITE_DONE || sqlite3_step(delk) != SQLITE_DONE) {
		r = db_error(s, err, "replace comparisons");
		goto rollback;
	}
	if (json_object_object_get_ex(result, "comparisons", &cmps) &&
	    json_object_is_type(cmps, json_type_array)) {
		size_t n = json_object_array_length(cmps);
		for (size_t i = 0; i < n; i++) {
			json_object *c = json_object_array_get_idx(cmps, i), *b = NULL, *k = NULL,
				    *ci = NULL;
			json_object_object_get_ex(c, "baseline", &b);
			json_object_object_get_ex(c, "candidate", &k);
			sqlite3_reset(ins);
			sqlite3_clear_bindings(ins);
			bind_text(ins, 1, id);
			bind_text(ins, 2, name ? name : "");
			bind_text(ins, 3, finished ? finished : now);
			bind_text(ins, 4, get_str(c, "variant") ? get_str(c, "variant") : "");
			bind_text(ins, 5, get_str(c, "workload") ? get_str(c, "workload") : "");
			bind_text(ins, 6, get_str(c, "metric") ? get_str(c, "metric") : "");
			bind_double_at(ins, 7, b, "median");
			bind_double_at(ins, 8, k, "median");
			bind_double_at(ins, 9, c, "change");
			sqlite3_bind_null(ins, 10);
			sqlite3_bind_null(ins, 11);
			if (json_object_object_get_ex(c, "ci95", &ci) &&
			    json_object_is_type(ci, json_type_array) &&
			    json_object_array_length(ci) == 2) {
				sqlite3_bind_double(
				    ins, 10,
				    json_object_get_double(json_object_array_get_idx(ci, 0)));
				sqlite3_bind_double(
				    ins, 11,
				    json_object_get_double(json_object_array_get_idx(ci, 1)));
			}
			bind_double_at(ins, 12, c, "p_value");
			bind_text(ins, 13, get_str(c, "verdict"));
			if (sqlite3_step(ins) != SQLITE_DONE) {
				r = db_error(s, err, "store a comparison");
				goto rollback;
			}
		}
	}
	if (json_object_object_get_ex(result, "kernels", &kernels) &&
	    json_object_is_type(kernels, json_type_object)) {
		json_object_object_foreach(kernels, kname, kobj)
		{
			json_object *cached = NULL;
			json_object_object_get_ex(kobj, "cached", &cached);
			sqlite3_reset(insk);
			sqlite3_clear_bindings(insk);
			bind_text(insk, 1, id);
			bind_text(insk, 2, kname);
			bind_double_at(insk, 3, kobj, "build_seconds");
			sqlite3_bind_int(insk, 4, cached ? json_object_get_boolean(cached) : 0);
			if (sqlite3_step(insk) != SQLITE_DONE) {
				r = db_error(s, err, "store a kernel build");
				goto rollback;
			}
		}
	}
	return db_exec(s, "COMMIT;", err);
rollback:
	db_exec(s, "ROLLBACK;", NULL);
	return r;
}

static int counts(struct store *s, const char *sql, json_object **ret, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, sql, &st, err);
	if (r < 0)
		return r;
	_cleanup_json_ json_object *o = json_object_new_object();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		json_object_object_add(o, k ? k : "unknown",
				       json_object_new_int64(sqlite3_column_int64(st, 1)));
	}
	if (rc != SQLITE_DONE)
		return db_error(s, err, "count");
	*ret = TAKE_PTR(o);
	return 0;
}

int store_job_counts(struct store *s, json_object **ret_counts, struct sl_error *err)
{
	return counts(s, "SELECT status, COUNT(*) FROM jobs GROUP BY status;", ret_counts, err);
}

int store_run_counts(struct store *s, json_object **ret_counts, struct sl_error *err)
{
	return counts(s,
		      "SELECT COALESCE(json_extract(run_json, '$.status'), 'unknown'), COUNT(*) "
		      "FROM runs WHERE json_valid(run_json) GROUP BY 1;",
		      ret_counts, err);
}

static int doubles(struct store *s, const char *sql, json_object **ret, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = prepare(s, sql, &st, err);
	if (r < 0)
		return r;
	_cleanup_json_ json_object *a = json_object_new_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			json_object_array_add(a,
					      json_object_new_double(sqlite3_column_double(st, 0)));
	if (rc != SQLITE_DONE)
		return db_error(s, err, "read timings");
	*ret = TAKE_PTR(a);
	return 0;
}

int store_build_seconds(struct store *s, json_object **ret_values, struct sl_error *err)
{
	return doubles(s, "SELECT build_seconds FROM kernel_builds WHERE cached = 0;", ret_values,
		       err);
}

int store_boot_seconds(struct store *s, json_object **ret_values, struct sl_error *err)
{
	return doubles(s,
		       "SELECT json_extract(run_json, '$.boot_seconds') FROM runs "
		       "WHERE json_valid(run_json);",
		       ret_values, err);
}
