/* Patches and config fragments stored once by content hash. A job's spec
 * and expanded spec hold each inline file's text ("content") in the blobs
 * table under its SHA-256; the stored JSON keeps "content_sha256" in its
 * place, and job_blobs records which job refers to which blob. The same
 * patch sent for two kernels, in the spec and the expanded spec, or by a
 * thousand jobs is one row. A blob goes when no job refers to it
 * (store_blobs_release_locked, from retention). Caller holds the lock for
 * every function here. */
#include <errno.h>
#include <string.h>

#include "server/store.h"
#include "server/store-internal.h"
#include "util/hash.h"

#define BLOB_KEY "content_sha256"

struct blob_walk {
	struct store *s;
	const char *job_id;
	sqlite3_stmt *put, *ref, *get;
	struct sl_error *err;
};

/* Moves one object's "content" text into the blobs table. */
static int blob_out(struct blob_walk *w, json_object *o)
{
	json_object *c = NULL;
	if (!json_object_object_get_ex(o, "content", &c) ||
	    !json_object_is_type(c, json_type_string))
		return 0;
	char hex[HASH_HEX_LEN];
	const char *text = json_object_get_string(c);
	int len = json_object_get_string_len(c);
	hash_buf_hex(text, (size_t)len, hex);
	sqlite3_reset(w->put);
	sqlite3_bind_text(w->put, 1, hex, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(w->put, 2, text, len, SQLITE_STATIC);
	if (sqlite3_step(w->put) != SQLITE_DONE)
		return store_db_error(w->s, w->err, "store a patch");
	sqlite3_reset(w->ref);
	sqlite3_bind_text(w->ref, 1, w->job_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(w->ref, 2, hex, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(w->ref) != SQLITE_DONE)
		return store_db_error(w->s, w->err, "record a job's patch");
	json_object_object_del(o, "content");
	json_object_object_add(o, BLOB_KEY, json_object_new_string(hex));
	return 0;
}

/* Puts one object's "content" back from its "content_sha256". */
static int blob_in(struct blob_walk *w, json_object *o)
{
	json_object *h = NULL;
	if (!json_object_object_get_ex(o, BLOB_KEY, &h) ||
	    !json_object_is_type(h, json_type_string))
		return 0;
	sqlite3_reset(w->get);
	sqlite3_bind_text(w->get, 1, json_object_get_string(h), -1, SQLITE_TRANSIENT);
	if (sqlite3_step(w->get) != SQLITE_ROW)
		return error_set(w->err, ERR_INTERNAL, EIO,
				 "A stored patch (%.16s...) is missing from the job store.",
				 json_object_get_string(h));
	json_object_object_add(
	    o, "content",
	    json_object_new_string_len((const char *)sqlite3_column_text(w->get, 0),
				       sqlite3_column_bytes(w->get, 0)));
	json_object_object_del(o, BLOB_KEY);
	return 0;
}

static int walk(struct blob_walk *w, json_object *o, int (*fn)(struct blob_walk *, json_object *),
		int depth)
{
	if (depth > 32)
		return 0;
	int r;
	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if ((r = walk(w, json_object_array_get_idx(o, i), fn, depth + 1)) < 0)
				return r;
		return 0;
	}
	if (!json_object_is_type(o, json_type_object))
		return 0;
	if ((r = fn(w, o)) < 0)
		return r;
	json_object_object_foreach(o, key, v)
	{
		(void)key;
		if ((r = walk(w, v, fn, depth + 1)) < 0)
			return r;
	}
	return 0;
}

/* A copy of o's arrays and objects whose leaves are o's own (shared by
 * reference, not copied): blob_out() then replaces a "content" in the copy
 * without the text ever being duplicated (an upload of n bytes is not held
 * twice while it is stored). NULL when memory ran out. */
static json_object *containers_copy(json_object *o, int depth)
{
	if (depth > 32 ||
	    (!json_object_is_type(o, json_type_array) && !json_object_is_type(o, json_type_object)))
		return json_object_get(o);
	bool arr = json_object_is_type(o, json_type_array);
	json_object *c = arr ? json_object_new_array() : json_object_new_object();
	if (!c)
		return NULL;
	if (arr) {
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			json_object *e = json_object_array_get_idx(o, i);
			json_object *ec = e ? containers_copy(e, depth + 1) : NULL;
			if ((e && !ec) || json_object_array_add(c, ec) < 0) {
				json_object_put(ec);
				json_object_put(c);
				return NULL;
			}
		}
		return c;
	}
	json_object_object_foreach(o, key, v)
	{
		json_object *vc = v ? containers_copy(v, depth + 1) : NULL;
		if ((v && !vc) || json_object_object_add(c, key, vc) < 0) {
			json_object_put(vc);
			json_object_put(c);
			return NULL;
		}
	}
	return c;
}

int store_blobs_put_locked(struct store *s, const char *job_id, json_object *doc,
			   json_object **ret_slim, struct sl_error *err)
{
	_cleanup_json_ json_object *copy = containers_copy(doc, 0);
	if (!copy)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	_cleanup_stmt_ sqlite3_stmt *put = NULL, *ref = NULL;
	int r;
	if ((r = store_db_prepare(s, "INSERT OR IGNORE INTO blobs(sha256, content) VALUES (?,?);",
				  &put, err)) < 0 ||
	    (r = store_db_prepare(s,
				  "INSERT OR IGNORE INTO job_blobs(job_id, sha256) VALUES (?,?);",
				  &ref, err)) < 0)
		return r;
	struct blob_walk w = {.s = s, .job_id = job_id, .put = put, .ref = ref, .err = err};
	if ((r = walk(&w, copy, blob_out, 0)) < 0)
		return r;
	*ret_slim = TAKE_PTR(copy);
	return 0;
}

int store_blobs_load_locked(struct store *s, json_object *doc, struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *get = NULL;
	int r = store_db_prepare(s, "SELECT content FROM blobs WHERE sha256 = ?;", &get, err);
	if (r < 0)
		return r;
	struct blob_walk w = {.s = s, .get = get, .err = err};
	return walk(&w, doc, blob_in, 0);
}

int store_blobs_release_locked(struct store *s, const char *job_id, struct sl_error *err)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL, *gc = NULL;
	int r;
	if ((r = store_db_prepare(s, "DELETE FROM job_blobs WHERE job_id = ? RETURNING sha256;",
				  &st, err)) < 0 ||
	    (r = store_db_prepare(s,
				  "DELETE FROM blobs WHERE sha256 = ?1 AND NOT EXISTS "
				  "(SELECT 1 FROM job_blobs WHERE sha256 = ?1);",
				  &gc, err)) < 0)
		return r;
	bind_text(st, 1, job_id);
	/* RETURNING rows come before the delete is applied to job_blobs only
	 * once the statement finishes: collect first, then collect garbage. */
	_cleanup_json_ json_object *hashes = json_object_new_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_array_add(hashes, column_string(st, 0));
	if (rc != SQLITE_DONE)
		return store_db_error(s, err, "release a job's patches");
	for (size_t i = 0; i < json_object_array_length(hashes); i++) {
		sqlite3_reset(gc);
		bind_text(gc, 1, json_object_get_string(json_object_array_get_idx(hashes, i)));
		if (sqlite3_step(gc) != SQLITE_DONE)
			return store_db_error(s, err, "drop an unused patch");
	}
	return 0;
}
