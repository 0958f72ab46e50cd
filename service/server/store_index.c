/* The store's derived tables and aggregate queries: the comparisons and
 * kernel_builds rows flattened from finished results (the trend report reads
 * them), and the counts and timings /metrics shows. */
#include <errno.h>
#include <string.h>

#include "compare/result_model.h"
#include "server/store-internal.h"
#include "server/store.h"
#include "util/json_get.h"
#include "util/time.h"

static void bind_double_at(sqlite3_stmt *st, int i, json_object *parent, const char *key)
{
	json_object *v = NULL;
	if (parent && json_object_object_get_ex(parent, key, &v) &&
	    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		sqlite3_bind_double(st, i, json_object_get_double(v));
	else
		sqlite3_bind_null(st, i);
}

/* The git commit the variant's kernel was built from (kernels.K.
 * source_commit), or NULL: what the trend's commit ranges read. */
static const char *variant_commit(const struct model_result *m, const char *variant)
{
	for (size_t i = 0; variant && i < m->n_variants; i++)
		if (strcmp(m->variants[i].name, variant) == 0 && m->variants[i].kernel)
			return json_member_string(json_member(m->kernels, m->variants[i].kernel),
						  "source_commit");
	return NULL;
}

static void bind_number(sqlite3_stmt *st, int i, const struct model_comparison *c,
			const char *field, double v)
{
	if (model_has(MODEL_COMPARISON, &c->has, field))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* One comparison's row (ins prepared in store_result_index()). */
static int insert_comparison(struct store *s, sqlite3_stmt *ins, const char *id,
			     const struct model_result *m, const struct model_comparison *c,
			     const char *name, const char *finished, struct sl_error *err)
{
	sqlite3_reset(ins);
	sqlite3_clear_bindings(ins);
	bind_text(ins, 1, id);
	bind_text(ins, 2, name ? name : "");
	bind_text(ins, 3, finished);
	bind_text(ins, 4, c->variant ? c->variant : "");
	bind_text(ins, 5, c->workload ? c->workload : "");
	bind_text(ins, 6, c->metric ? c->metric : "");
	bind_double_at(ins, 7, c->baseline, "median");
	bind_double_at(ins, 8, c->candidate, "median");
	bind_number(ins, 9, c, "change", c->change);
	sqlite3_bind_null(ins, 10);
	sqlite3_bind_null(ins, 11);
	if (c->ci95 && json_object_array_length(c->ci95) == 2) {
		sqlite3_bind_double(ins, 10,
				    json_object_get_double(json_object_array_get_idx(c->ci95, 0)));
		sqlite3_bind_double(ins, 11,
				    json_object_get_double(json_object_array_get_idx(c->ci95, 1)));
	}
	bind_number(ins, 12, c, "p_value", c->p_value);
	bind_text(ins, 13, c->verdict);
	bind_text(ins, 14, variant_commit(m, c->variant));
	if (sqlite3_step(ins) != SQLITE_DONE)
		return store_db_error(s, err, "store a comparison");
	return 0;
}

static int index_locked(struct store *s, const char *id, const struct model_result *m,
			struct sl_error *err);

int store_result_index(struct store *s, const char *id, json_object *result, struct sl_error *err)
{
	/* Read through the result model: whatever a job left may be partial,
	 * but a member of the wrong type is refused before any row changes. */
	struct model_result m;
	int r = model_result_read(result, &m, err);
	if (r < 0)
		return r;
	r = index_locked(s, id, &m, err);
	model_result_free(&m);
	return r;
}

static int index_locked(struct store *s, const char *id, const struct model_result *m,
			struct sl_error *err)
{
	STORE_LOCK(s);
	int r;
	char now[TIME_ISO8601_MAX];
	time_now_iso8601(now);
	json_object *kernels = m->kernels;
	const char *name = json_member_string(m->job, "name");
	const char *finished = m->finished_at ? m->finished_at : now;
	if ((r = store_db_exec(s, "BEGIN IMMEDIATE;", err)) < 0)
		return r;
	_cleanup_stmt_ sqlite3_stmt *del = NULL, *ins = NULL, *delk = NULL, *insk = NULL;
	if ((r = store_db_prepare(s, "DELETE FROM comparisons WHERE job_id = ?;", &del, err)) < 0 ||
	    (r = store_db_prepare(s, "DELETE FROM kernel_builds WHERE job_id = ?;", &delk, err)) <
		0 ||
	    (r = store_db_prepare(
		 s,
		 "INSERT INTO comparisons(job_id, job_name, finished_at, variant, "
		 "workload, metric, baseline_median, candidate_median, change, ci_lo, "
		 "ci_hi, p_value, verdict, source_commit, owner) VALUES "
		 "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		 " COALESCE((SELECT owner FROM jobs WHERE id = ?1), ''));",
		 &ins, err)) < 0 ||
	    (r = store_db_prepare(
		 s,
		 "INSERT INTO kernel_builds(job_id, kernel, build_seconds, cached) "
		 "VALUES (?,?,?,?);",
		 &insk, err)) < 0)
		goto rollback;
	bind_text(del, 1, id);
	bind_text(delk, 1, id);
	if (sqlite3_step(del) != SQLITE_DONE || sqlite3_step(delk) != SQLITE_DONE) {
		r = store_db_error(s, err, "replace comparisons");
		goto rollback;
	}
	for (size_t i = 0; i < m->n_comparisons; i++)
		if ((r = insert_comparison(s, ins, id, m, &m->comparisons[i], name, finished,
					   err)) < 0)
			goto rollback;
	if (kernels) {
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
				r = store_db_error(s, err, "store a kernel build");
				goto rollback;
			}
		}
	}
	/* A change point's bisection job: its answer, with its comparisons. */
	if ((r = store_bisection_answer_locked(s, id, m, err)) < 0)
		goto rollback;
	if ((r = store_db_exec(s, "COMMIT;", err)) < 0)
		return r;
	/* Counted once committed; a job's result is indexed once, as it ends. */
	if (kernels && json_object_is_type(kernels, json_type_object)) {
		json_object_object_foreach(kernels, kname, kobj)
		{
			(void)kname;
			json_object *cached = NULL, *secs = NULL;
			bool hit = json_object_object_get_ex(kobj, "cached", &cached) &&
				   json_object_get_boolean(cached);
			counters_kernel(s->counters, hit, 1);
			if (!hit && json_object_object_get_ex(kobj, "build_seconds", &secs) &&
			    (json_object_is_type(secs, json_type_double) ||
			     json_object_is_type(secs, json_type_int)))
				counters_build_seconds(s->counters, json_object_get_double(secs));
		}
	}
	return 0;
rollback:
	store_db_exec(s, "ROLLBACK;", NULL);
	return r;
}

static int counts(struct store *s, const char *sql, json_object **ret, struct sl_error *err)
{
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = store_db_prepare(s, sql, &st, err);
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
		return store_db_error(s, err, "count");
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
	int r = store_db_prepare(s, sql, &st, err);
	if (r < 0)
		return r;
	_cleanup_json_ json_object *a = json_object_new_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			json_object_array_add(a,
					      json_object_new_double(sqlite3_column_double(st, 0)));
	if (rc != SQLITE_DONE)
		return store_db_error(s, err, "read timings");
	*ret = TAKE_PTR(a);
	return 0;
}

/* Seeds s->counters from the database (store_open, once). */
int store_counters_seed(struct store *s, struct sl_error *err)
{
	_cleanup_json_ json_object *jobs = NULL, *runs = NULL, *builds = NULL, *boots = NULL;
	int r;
	if ((r = store_job_counts(s, &jobs, err)) < 0 ||
	    (r = store_run_counts(s, &runs, err)) < 0 ||
	    (r = store_build_seconds(s, &builds, err)) < 0 ||
	    (r = store_boot_seconds(s, &boots, err)) < 0)
		return r;
	json_object_object_foreach(jobs, status, n)
	{
		counters_job_status_add(s->counters, status, json_object_get_int64(n));
	}
	json_object_object_foreach(runs, rstatus, rn)
	{
		counters_run(s->counters, rstatus, json_object_get_int64(rn));
	}
	for (size_t i = 0; i < json_object_array_length(builds); i++)
		counters_build_seconds(
		    s->counters, json_object_get_double(json_object_array_get_idx(builds, i)));
	for (size_t i = 0; i < json_object_array_length(boots); i++)
		counters_boot_seconds(s->counters,
				      json_object_get_double(json_object_array_get_idx(boots, i)));
	STORE_LOCK(s);
	_cleanup_stmt_ sqlite3_stmt *fin = NULL, *cache = NULL;
	if ((r = store_db_prepare(s,
				  "SELECT status, verdict, COUNT(*) FROM jobs WHERE status IN "
				  "('done','failed','cancelled') GROUP BY 1, 2;",
				  &fin, err)) < 0 ||
	    (r = store_db_prepare(s, "SELECT cached, COUNT(*) FROM kernel_builds GROUP BY 1;",
				  &cache, err)) < 0)
		return r;
	int rc;
	while ((rc = sqlite3_step(fin)) == SQLITE_ROW)
		counters_job_finished(s->counters, (const char *)sqlite3_column_text(fin, 0),
				      (const char *)sqlite3_column_text(fin, 1),
				      sqlite3_column_int64(fin, 2));
	if (rc != SQLITE_DONE)
		return store_db_error(s, err, "count finished jobs");
	while ((rc = sqlite3_step(cache)) == SQLITE_ROW)
		counters_kernel(s->counters, sqlite3_column_int(cache, 0) != 0,
				sqlite3_column_int64(cache, 1));
	if (rc != SQLITE_DONE)
		return store_db_error(s, err, "count kernel builds");
	/* nightly (store_nightly.c): change points and webhook attempts */
	_cleanup_stmt_ sqlite3_stmt *cps = NULL, *hooks = NULL;
	if ((r = store_db_prepare(s, "SELECT COUNT(*) FROM change_points;", &cps, err)) < 0 ||
	    (r = store_db_prepare(s,
				  "SELECT delivered, COUNT(*) FROM webhook_deliveries GROUP BY 1;",
				  &hooks, err)) < 0)
		return r;
	if (sqlite3_step(cps) == SQLITE_ROW)
		counters_change_points(s->counters, sqlite3_column_int64(cps, 0));
	while ((rc = sqlite3_step(hooks)) == SQLITE_ROW)
		counters_webhook_attempt(s->counters, sqlite3_column_int(hooks, 0) != 0,
					 sqlite3_column_int64(hooks, 1));
	if (rc != SQLITE_DONE)
		return store_db_error(s, err, "count webhook attempts");
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
