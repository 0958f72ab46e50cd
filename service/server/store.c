/* The SQLite job store: opening, the schema and its migrations, ids,
 * statuses and the statement helpers the other store files share; see
 * store.h for the concurrency contract. Job rows are in store_jobs.c, the
 * result index and /metrics queries in store_index.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "server/store.h"
#include "server/store-internal.h"
#include "util/fs.h"

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
    /* 2: owners and quotas (admission.c), patches stored once by content
     * hash (store_blobs.c), retention (store_retention.c) */
    "ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE jobs ADD COLUMN submitted_unix INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN budget_s INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN result_json TEXT;"
    "ALTER TABLE jobs ADD COLUMN purged_at TEXT;"
    "CREATE INDEX jobs_owner ON jobs(owner, status);"
    "CREATE INDEX jobs_finished ON jobs(purged_at, finished_at);"
    "CREATE TABLE blobs ("
    "  sha256 TEXT PRIMARY KEY,"
    "  content TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE job_blobs ("
    "  job_id TEXT NOT NULL,"
    "  sha256 TEXT NOT NULL,"
    "  PRIMARY KEY (job_id, sha256)) WITHOUT ROWID;"
    "CREATE INDEX job_blobs_sha256 ON job_blobs(sha256);",
    /* 3: nightly (store_nightly.c): each schedule's last slot,
     * the change points already alerted and every webhook attempt, the
     * commit each comparison's candidate kernel was built from */
    "CREATE TABLE schedules ("
    "  name TEXT PRIMARY KEY,"
    "  last_slot INTEGER NOT NULL,"
    "  last_job_id TEXT,"
    "  last_run_at TEXT,"
    "  last_error TEXT) WITHOUT ROWID;"
    "CREATE TABLE change_points ("
    "  key TEXT PRIMARY KEY,"
    "  series TEXT NOT NULL,"
    "  detected_at TEXT NOT NULL,"
    "  payload_json TEXT) WITHOUT ROWID;"
    "CREATE TABLE webhook_deliveries ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  change_key TEXT NOT NULL,"
    "  url TEXT NOT NULL,"
    "  attempt INTEGER NOT NULL,"
    "  ts TEXT NOT NULL,"
    "  http_status INTEGER,"
    "  error TEXT,"
    "  delivered INTEGER NOT NULL DEFAULT 0);"
    "ALTER TABLE comparisons ADD COLUMN source_commit TEXT;"
    /* one series' rows, in the order the trend reads them: the webhook
     * thread reads its job's series after every job (webhook.c) */
    "CREATE INDEX comparisons_series ON comparisons(job_name, workload, metric, finished_at);",
    /* 4: a change point's bisection (store_nightly.c):
     * the job that bisects its commit range, the range's commits and, once
     * the job has ended, its answer (server/store_trend.c reads it for the page
     * and GET /v1/change-points) */
    "CREATE TABLE change_point_bisections ("
    "  key TEXT PRIMARY KEY,"
    "  job_id TEXT NOT NULL,"
    "  commits TEXT NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  state TEXT,"
    "  first_bad_commit TEXT,"
    "  first_bad_subject TEXT,"
    "  certain INTEGER,"
    "  steps INTEGER) WITHOUT ROWID;"
    "CREATE INDEX change_point_bisections_job ON change_point_bisections(job_id);",
    /* 5: tenancy (docs/service.md "Tenancy"): each comparison keeps the
     * owner of the job that produced it ("schedule:NAME" for a schedule's
     * night), so that a series is a (owner, name) and a token's job named
     * after a schedule does not join the schedule's series. Rows from
     * before take their job's owner; a row whose job is gone gets '' and
     * forms a series of its own, never a schedule's. */
    "ALTER TABLE comparisons ADD COLUMN owner TEXT NOT NULL DEFAULT '';"
    "UPDATE comparisons SET owner ="
    "  COALESCE((SELECT owner FROM jobs WHERE jobs.id = comparisons.job_id), '');"
    "CREATE INDEX comparisons_owner_series"
    "  ON comparisons(owner, job_name, workload, metric, finished_at);",
};

static const char *const statuses[] = {
    "queued", "building", "booting", "running", "comparing", "done", "failed", "cancelled",
};

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

struct counters *store_counters(struct store *s)
{
	return s->counters;
}

int store_db_error(struct store *s, struct sl_error *err, const char *what)
{
	return error_set(err, ERR_INTERNAL, EIO, "The job store failed to %s: %s.", what,
			 sqlite3_errmsg(s->db));
}

int store_db_exec(struct store *s, const char *sql, struct sl_error *err)
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

int store_db_prepare(struct store *s, const char *sql, sqlite3_stmt **ret, struct sl_error *err)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, ret, NULL) != SQLITE_OK)
		return store_db_error(s, err, "prepare a query");
	return 0;
}

static int migrate(struct store *s, struct sl_error *err)
{
	int r = store_db_exec(
	    s, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);", err);
	if (r < 0)
		return r;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	r = store_db_prepare(s, "SELECT COALESCE(MAX(version), 0) FROM schema_version;", &st, err);
	if (r < 0)
		return r;
	if (sqlite3_step(st) != SQLITE_ROW)
		return store_db_error(s, err, "read the schema version");
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
		if ((r = store_db_exec(s, "BEGIN IMMEDIATE;", err)) < 0)
			return r;
		if ((r = store_db_exec(s, migrations[v], err)) < 0 ||
		    (r = store_db_exec(s, bump, err)) < 0) {
			store_db_exec(s, "ROLLBACK;", NULL);
			return error_prefix(err, "Migration to schema version %d failed", v + 1);
		}
		if ((r = store_db_exec(s, "COMMIT;", err)) < 0)
			return r;
	}
	return 0;
}

static int auto_vacuum_incremental(struct store *s, struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, "PRAGMA auto_vacuum;", &st, err);
	if (r < 0)
		return r;
	if (sqlite3_step(st) != SQLITE_ROW)
		return store_db_error(s, err, "read the vacuum mode");
	int mode = sqlite3_column_int(st, 0);
	sqlite3_finalize(TAKE_PTR(st)); /* VACUUM refuses to run beside it */
	if (mode == 2)
		return 0;
	if ((r = store_db_exec(s, "PRAGMA auto_vacuum=INCREMENTAL;", err)) < 0)
		return r;
	return store_db_exec(s, "VACUUM;", err);
}

/* The state is the service's alone: tokens' owners, patches, logs. Its
 * directory 0700 and the database 0600 (SQLite gives -wal and -shm the
 * database's mode), also when an older schedlab made them wider. The
 * database is created here, not by SQLite (0644 less the umask), and the
 * new entries are synced to their directories. */
static int state_private(const char *state_dir, const char *jobs, const char *db,
			 struct sl_error *err)
{
	int r = fs_mkdir_private(state_dir, err);
	if (r < 0 || (r = fs_mkdir_private(jobs, err)) < 0)
		return r;
	const char *dirs[] = {state_dir, jobs};
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
		if (chmod(dirs[i], 0700) < 0)
			return error_set(err, ERR_INTERNAL, errno,
					 "Cannot make the state directory '%s' private: %s.",
					 dirs[i], strerror(errno));
	bool fresh = !fs_exists(db);
	_cleanup_close_ int fd = open(db, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0)
		return error_set(err, ERR_INTERNAL, errno, "Cannot create the job store '%s': %s.",
				 db, strerror(errno));
	static const char *const sides[] = {"-wal", "-shm"};
	for (size_t i = 0; i < ELEMENTSOF(sides); i++) {
		_cleanup_free_ char *side = NULL;
		if (asprintf(&side, "%s%s", db, sides[i]) < 0)
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		if (chmod(side, 0600) < 0 && errno != ENOENT)
			return error_set(err, ERR_INTERNAL, errno, "Cannot make '%s' private: %s.",
					 side, strerror(errno));
	}
	if (fresh && (r = fs_fsync_dir(state_dir, err)) < 0)
		return r;
	return 0;
}

int store_open(const char *state_dir, struct store **ret_store, struct sl_error *err)
{
	_cleanup_free_ char *jobs = fs_path_join(state_dir, "jobs");
	_cleanup_free_ char *db = fs_path_join(state_dir, "schedlab.db");
	int r = state_private(state_dir, jobs, db, err);
	if (r < 0)
		return r;
	struct store *s = calloc(1, sizeof(*s));
	if (!s)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	pthread_mutex_init(&s->lock, NULL);
	s->state_dir = strdup(state_dir);
	const char *path = db;
	if (sqlite3_open_v2(path, &s->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		r = error_set(err, ERR_INTERNAL, EIO, "Cannot open the job store '%s': %s.", path,
			      s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	/* WAL: the trend report and other readers do not block the service. */
	/* Incremental vacuum (store_retention.c gives freed pages back): set
	 * before the first table exists, or once with a VACUUM on a store made
	 * before it. */
	if ((r = auto_vacuum_incremental(s, err)) < 0)
		goto fail;
	if ((r = store_db_exec(s, "PRAGMA journal_mode=WAL;", err)) < 0 ||
	    /* FULL: each commit (an accepted job, a stored run, a final
	     * status) is on disk when it returns, across a power loss too,
	     * not only across a crash of this process as with NORMAL in WAL
	     * mode; about 5 ms more per submission (bench/submit-latency.sh,
	     * docs/service.md "Durability") */
	    (r = store_db_exec(s, "PRAGMA synchronous=FULL;", err)) < 0 ||
	    (r = store_db_exec(s, "PRAGMA foreign_keys=ON;", err)) < 0 ||
	    (r = migrate(s, err)) < 0 || (r = store_sweep_orphan_dirs(s, err)) < 0)
		goto fail;
	if (!(s->counters = counters_new())) {
		r = error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		goto fail;
	}
	if ((r = store_counters_seed(s, err)) < 0)
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
	counters_free(s->counters);
	free(s->state_dir);
	free(s);
}
