/* The A/A calibration store (calibration.h; docs/statistics.md, "A/A
 * calibration"). Why the 90th percentile of pairwise run differences: the
 * metrics that gate most often are counts (inversions) whose A/A runs are
 * mostly 0 with an occasional outlier boot, where the MAD is 0 and says
 * nothing; a pairwise difference is in the metric's unit, directly
 * comparable with a change of medians, and it bounds that change: the
 * median of n runs varies less than one run, so at any n at least 90 % of
 * A/A changes of medians lie within the spread. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "compare/calibration.h"
#include "compare/noise.h"
#include "compare/run_view.h"
#include "compare/stats.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/macro.h"
#include "util/json_get.h"

static bool is_num(json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static void copy_field(char *dst, const char *src)
{
	snprintf(dst, CALIBRATION_MAX_FIELD, "%s", src);
	/* printable ASCII only: it ends up in JSON, the key and reports */
	for (char *c = dst; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			*c = '?';
}

void calibration_host_local(const char *accel, struct calibration_host *h)
{
	struct utsname u;
	copy_field(h->hostname, uname(&u) == 0 ? u.nodename : "unknown");
	copy_field(h->cpu_model, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *s = colon + 1;
		while (*s == ' ' || *s == '\t')
			s++;
		s[strcspn(s, "\n")] = '\0';
		copy_field(h->cpu_model, s);
		break;
	}
	if (f)
		fclose(f);
	snprintf(h->accel, sizeof(h->accel), "%s",
		 accel && strcmp(accel, "kvm") == 0 ? "kvm" : "tcg");
}

void calibration_key(const struct calibration_host *h, const char *kernel_key,
		     const struct job *job, const struct job_workload *w, char out[65])
{
	struct hash_ctx *x = hash_new();
	char num[64];
	hash_update_str(x, CALIBRATION_SCHEMA);
	hash_update_str(x, h->hostname);
	hash_update_str(x, h->cpu_model);
	hash_update_str(x, h->accel);
	hash_update_str(x, kernel_key);
	snprintf(num, sizeof(num), "vcpus=%d memory_mb=%d", job->guest.vcpus, job->guest.memory_mb);
	hash_update_str(x, num);
	hash_update_str(x, w->tool);
	snprintf(num, sizeof(num), "args=%zu", w->n_args);
	hash_update_str(x, num);
	for (size_t i = 0; i < w->n_args; i++)
		hash_update_str(x, w->args[i]);
	snprintf(num, sizeof(num), "maxerr_us=%ld uid=%d", w->maxerr_us, w->uid);
	hash_update_str(x, num);
	hash_final_hex(x, out);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double calibration_spread(const double *v, size_t n)
{
	if (n < 2 || n > STATS_MAX_VALUES)
		return NAN;
	size_t np = n * (n - 1) / 2, k = 0;
	double *d = malloc(np * sizeof(*d));
	if (!d)
		return NAN;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			d[k++] = fabs(v[i] - v[j]);
	qsort(d, np, sizeof(*d), cmp_double);
	double q = gsl_stats_quantile_from_sorted_data(d, 1, np, 0.9);
	free(d);
	return q;
}

/* A number for JSON, integral values as integers (as compare.c writes). */
static json_object *jnum(double v)
{
	if (!isfinite(v))
		return NULL;
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_object_new_int64((int64_t)v);
	char buf[32];
	snprintf(buf, sizeof(buf), "%.10g", v);
	return json_object_new_double_s(v, buf);
}

static json_object *host_json(const struct calibration_host *h)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "hostname", json_object_new_string(h->hostname));
	json_object_object_add(o, "cpu_model", json_object_new_string(h->cpu_model));
	json_object_object_add(o, "accel", json_object_new_string(h->accel));
	return o;
}

/* Adds the numeric metrics of workload name in ok runs to values (metric ->
 * array), the noisy runs too when with_noisy; returns how many runs
 * counted. */
static int gather(const struct run_view *runs, const char *name, bool with_noisy,
		  json_object *values)
{
	int used = 0;
	for (size_t i = 0; i < runs->n; i++) {
		const struct model_run *run = &runs->runs[i];
		if (!run_view_ok(run) || (!with_noisy && run->noisy))
			continue;
		const struct model_workload *wl = run_view_ok_workload(run, name);
		if (!wl)
			continue;
		used++;
		if (!wl->metrics)
			continue;
		json_object_object_foreach(wl->metrics, m, v)
		{
			if (!is_num(v) || !isfinite(json_object_get_double(v)))
				continue;
			json_object *arr = json_member(values, m);
			if (!arr) {
				arr = json_object_new_array();
				json_object_object_add(values, m, arr);
			}
			if (json_object_array_length(arr) < STATS_MAX_VALUES)
				json_object_array_add(arr, jnum(json_object_get_double(v)));
		}
	}
	return used;
}

json_object *calibration_from_runs(const struct calibration_host *h, const char *kernel_key,
				   const struct job *job, const struct job_workload *w,
				   json_object *runs, int boots, const char *made_at)
{
	struct run_view view;
	struct sl_error err = {0};
	if (run_view_read(runs, "The A/A job", &view, &err) < 0)
		return NULL;
	json_object *doc = calibration_from_view(h, kernel_key, job, w, &view, boots, made_at);
	run_view_free(&view);
	return doc;
}

json_object *calibration_from_view(const struct calibration_host *h, const char *kernel_key,
				   const struct job *job, const struct job_workload *w,
				   const struct run_view *runs, int boots, const char *made_at)
{
	char key[65];
	calibration_key(h, kernel_key, job, w, key);
	const struct run_view view = *runs;
	/* The clean runs, as the comparisons count them; on a host so busy
	 * that fewer than CALIBRATION_MIN_BOOTS were clean, every ok run (a
	 * wider spread: the thresholds err on the side of calling less). */
	_cleanup_json_ json_object *values = json_object_new_object();
	bool with_noisy = false;
	int used = gather(&view, w->name, false, values);
	if (used < CALIBRATION_MIN_BOOTS) {
		json_object_put(values);
		values = json_object_new_object();
		with_noisy = true;
		used = gather(&view, w->name, true, values);
	}
	json_object *metrics = json_object_new_object();
	json_object_object_foreach(values, m, arr)
	{
		size_t n = json_object_array_length(arr);
		if (n < CALIBRATION_MIN_BOOTS)
			continue;
		double x[STATS_MAX_VALUES];
		for (size_t i = 0; i < n; i++)
			x[i] = json_object_get_double(json_object_array_get_idx(arr, i));
		struct stats_summary s;
		stats_summarize(x, n, &s);
		json_object *o = json_object_new_object();
		json_object_object_add(o, "values", json_object_get(arr));
		json_object_object_add(o, "median", jnum(s.median));
		json_object_object_add(o, "spread", jnum(calibration_spread(x, n)));
		json_object_object_add(metrics, m, o);
	}
	json_object *doc = json_object_new_object();
	json_object_object_add(doc, "schema", json_object_new_string(CALIBRATION_SCHEMA));
	json_object_object_add(doc, "key", json_object_new_string(key));
	json_object_object_add(doc, "made_at", json_object_new_string(made_at));
	json_object_object_add(doc, "boots", json_object_new_int(boots));
	json_object_object_add(doc, "runs_used", json_object_new_int(used));
	json_object_object_add(doc, "noisy_runs_included", json_object_new_boolean(with_noisy));
	double wait = noise_model_wait_quantile(view.runs, view.n, 0.5);
	json_object_object_add(doc, "vcpu_wait_pct_median", isfinite(wait) ? jnum(wait) : NULL);
	double wait90 = noise_model_wait_quantile(view.runs, view.n, 0.9);
	json_object_object_add(doc, "vcpu_wait_pct_p90", isfinite(wait90) ? jnum(wait90) : NULL);
	json_object_object_add(doc, "host", host_json(h));
	json_object_object_add(doc, "kernel", json_object_new_string(kernel_key));
	json_object *guest = json_object_new_object();
	json_object_object_add(guest, "vcpus", json_object_new_int(job->guest.vcpus));
	json_object_object_add(guest, "memory_mb", json_object_new_int(job->guest.memory_mb));
	json_object_object_add(doc, "guest", guest);
	json_object *wj = json_object_new_object();
	json_object_object_add(wj, "name", json_object_new_string(w->name));
	json_object_object_add(wj, "tool", json_object_new_string(w->tool));
	json_object *args = json_object_new_array();
	for (size_t i = 0; i < w->n_args; i++)
		json_object_array_add(args, json_object_new_string(w->args[i]));
	json_object_object_add(wj, "args", args);
	if (w->maxerr_us >= 0)
		json_object_object_add(wj, "maxerr_us", json_object_new_int64(w->maxerr_us));
	json_object_object_add(wj, "uid", json_object_new_int(w->uid));
	json_object_object_add(doc, "workload", wj);
	json_object_object_add(doc, "spread", json_object_new_string(CALIBRATION_SPREAD_DEF));
	json_object_object_add(doc, "multiple", jnum(CALIBRATION_MULTIPLE));
	json_object_object_add(doc, "metrics", metrics);
	return doc;
}

static bool hex64(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	return strspn(s, "0123456789abcdef") == 64;
}

static bool short_str(json_object *o, const char *key)
{
	const char *s = json_member_string(o, key);
	return s && strlen(s) < CALIBRATION_MAX_FIELD;
}

int calibration_check(json_object *doc, struct sl_error *err)
{
#define BAD(field, why) error_set_path(err, ERR_INVALID, field, "%s", why)
	if (!json_object_is_type(doc, json_type_object))
		return BAD("$", "A calibration must be a JSON object.");
	const char *schema = json_member_string(doc, "schema");
	if (!schema || strcmp(schema, CALIBRATION_SCHEMA) != 0)
		return BAD("$.schema", "Must be \"" CALIBRATION_SCHEMA "\".");
	if (!hex64(json_member_string(doc, "key")))
		return BAD("$.key", "Must be 64 lowercase hex digits.");
	if (!hex64(json_member_string(doc, "kernel")))
		return BAD("$.kernel", "Must be a kernel cache key (64 lowercase hex digits).");
	if (!short_str(doc, "made_at"))
		return BAD("$.made_at", "Must be an ISO 8601 time.");
	json_object *boots = json_member(doc, "boots");
	if (!json_object_is_type(boots, json_type_int) ||
	    json_object_get_int(boots) < CALIBRATION_MIN_BOOTS ||
	    json_object_get_int(boots) > CALIBRATION_MAX_BOOTS)
		return BAD("$.boots", "Must be an integer from 3 to 50.");
	json_object *host = json_member(doc, "host");
	if (!short_str(host, "hostname") || !short_str(host, "cpu_model") ||
	    !short_str(host, "accel"))
		return BAD("$.host", "Must have the strings hostname, cpu_model and accel.");
	json_object *wl = json_member(doc, "workload");
	if (!short_str(wl, "name") || !short_str(wl, "tool"))
		return BAD("$.workload", "Must have the strings name and tool.");
	static const char *const waits[] = {"vcpu_wait_pct_median", "vcpu_wait_pct_p90"};
	for (size_t i = 0; i < ELEMENTSOF(waits); i++) {
		json_object *w = json_member(doc, waits[i]);
		if (w && !(is_num(w) && json_object_get_double(w) >= 0 &&
			   json_object_get_double(w) <= 100)) {
			char path[64];
			snprintf(path, sizeof(path), "$.%s", waits[i]);
			return BAD(path, "Must be null or a share from 0 to 100.");
		}
	}
	json_object *metrics = json_member(doc, "metrics");
	if (!json_object_is_type(metrics, json_type_object) ||
	    json_object_object_length(metrics) > 512)
		return BAD("$.metrics", "Must be an object of at most 512 metrics.");
	json_object_object_foreach(metrics, m, mo)
	{
		json_object *sp = json_member(mo, "spread");
		if (strlen(m) > 128 || !is_num(sp) || !isfinite(json_object_get_double(sp)) ||
		    json_object_get_double(sp) < 0)
			return error_set_path(err, ERR_INVALID, "$.metrics",
					      "Metric '%.128s' needs a finite spread >= 0.", m);
	}
	return 0;
#undef BAD
}

int calibration_save(const char *cache_dir, json_object *doc, struct sl_error *err)
{
	int r = calibration_check(doc, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *dir = fs_path_join(cache_dir, "calibration");
	if ((r = fs_mkdir_p(dir, err)) < 0)
		return r;
	char name[80];
	snprintf(name, sizeof(name), "%s.json", json_member_string(doc, "key"));
	_cleanup_free_ char *path = fs_path_join(dir, name);
	const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE);
	return fs_write_file_atomic(path, text, strlen(text), err);
}

int calibration_load(const char *cache_dir, const char *key, json_object **ret,
		     struct sl_error *err)
{
	if (!hex64(key))
		return error_set(err, ERR_INVALID, EINVAL, "A calibration key is 64 hex digits.");
	char name[96];
	snprintf(name, sizeof(name), "calibration/%s.json", key);
	_cleanup_free_ char *path = fs_path_join(cache_dir, name);
	if (!fs_exists(path))
		return error_set(err, ERR_NOT_FOUND, ENOENT, "No calibration %s.", key);
	_cleanup_json_ json_object *doc = NULL;
	int r = json_read_file_strict(path, CALIBRATION_MAX_BYTES, "calibration", &doc, err);
	if (r < 0)
		return r;
	if ((r = calibration_check(doc, err)) < 0)
		return error_prefix(err, "calibration %s", key);
	if (strcmp(json_member_string(doc, "key"), key) != 0)
		return error_set(err, ERR_INVALID, EINVAL,
				 "calibration %s: the file holds key %.64s.", key,
				 json_member_string(doc, "key"));
	*ret = TAKE_PTR(doc);
	return 0;
}

json_object *calibration_lookup(const char *cache_dir, const struct calibration_host *h,
				const char *kernel_key, const struct job *job)
{
	json_object *out = json_object_new_array();
	for (size_t i = 0; kernel_key && i < job->n_workloads; i++) {
		const struct job_workload *w = &job->workloads[i];
		char key[65];
		calibration_key(h, kernel_key, job, w, key);
		_cleanup_json_ json_object *doc = NULL;
		struct sl_error err = {0};
		int r = calibration_load(cache_dir, key, &doc, &err);
		if (r < 0) {
			if (err.kind != ERR_NOT_FOUND)
				fprintf(stderr, "schedlab: ignoring a broken calibration: %s\n",
					err.message);
			continue;
		}
		json_object *e = json_object_new_object();
		json_object_object_add(e, "workload", json_object_new_string(w->name));
		json_object_object_add(e, "key", json_object_new_string(key));
		json_object_object_add(e, "made_at", json_object_get(json_member(doc, "made_at")));
		json_object_object_add(e, "boots", json_object_get(json_member(doc, "boots")));
		json_object_object_add(e, "host", json_object_get(json_member(doc, "host")));
		json_object_object_add(e, "kernel", json_object_get(json_member(doc, "kernel")));
		json_object_object_add(e, "multiple", jnum(CALIBRATION_MULTIPLE));
		json_object *w90 = json_member(doc, "vcpu_wait_pct_p90");
		if (is_num(w90))
			json_object_object_add(e, "vcpu_wait_pct_p90", json_object_get(w90));
		json_object *spreads = json_object_new_object();
		json_object_object_foreach(json_member(doc, "metrics"), m, mo)
		{
			json_object_object_add(spreads, m,
					       json_object_get(json_member(mo, "spread")));
		}
		json_object_object_add(e, "spreads", spreads);
		json_object_array_add(out, e);
	}
	return out;
}

double calibration_threshold(json_object *calibration, const char *workload, const char *metric,
			     double default_thr, double *ret_spread)
{
	*ret_spread = NAN;
	for (size_t i = 0; json_object_is_type(calibration, json_type_array) &&
			   i < json_object_array_length(calibration);
	     i++) {
		json_object *e = json_object_array_get_idx(calibration, i);
		const char *w = json_member_string(e, "workload");
		json_object *sp = json_member(json_member(e, "spreads"), metric);
		if (!w || strcmp(w, workload) != 0 || !is_num(sp))
			continue;
		double s = json_object_get_double(sp);
		json_object *mult = json_member(e, "multiple");
		double k = is_num(mult) ? json_object_get_double(mult) : CALIBRATION_MULTIPLE;
		if (!isfinite(s) || s < 0 || !isfinite(k) || k < 0)
			continue;
		*ret_spread = s;
		return fmax(default_thr, k * s);
	}
	return default_thr;
}

double calibration_noise_limit(json_object *calibration, double default_limit, double *ret_wait)
{
	double wait = NAN;
	for (size_t i = 0; json_object_is_type(calibration, json_type_array) &&
			   i < json_object_array_length(calibration);
	     i++) {
		json_object *w =
		    json_member(json_object_array_get_idx(calibration, i), "vcpu_wait_pct_p90");
		double x = is_num(w) ? json_object_get_double(w) : NAN;
		if (isfinite(x) && x >= 0 && (isnan(wait) || x > wait))
			wait = x;
	}
	*ret_wait = wait;
	if (!isfinite(wait))
		return default_limit;
	return fmin(default_limit,
		    fmax(CALIBRATION_NOISE_FLOOR_PCT, CALIBRATION_NOISE_MULTIPLE * wait));
}

static int newest_first(const void *a, const void *b)
{
	json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
	const char *mx = json_member_string(x, "made_at"), *my = json_member_string(y, "made_at");
	return strcmp(my ? my : "", mx ? mx : "");
}

json_object *calibration_list(const char *cache_dir, size_t max)
{
	json_object *out = json_object_new_array();
	_cleanup_free_ char *dir = fs_path_join(cache_dir, "calibration");
	DIR *d = opendir(dir);
	if (!d)
		return out;
	struct dirent *e;
	while ((e = readdir(d)) && json_object_array_length(out) < max) {
		size_t len = strlen(e->d_name);
		if (len != 69 || strcmp(e->d_name + 64, ".json") != 0)
			continue;
		char key[65];
		snprintf(key, sizeof(key), "%.64s", e->d_name);
		_cleanup_json_ json_object *doc = NULL;
		struct sl_error err = {0};
		if (calibration_load(cache_dir, key, &doc, &err) < 0)
			continue;
		json_object *o = json_object_new_object();
		json_object_object_add(o, "key", json_object_new_string(key));
		json_object_object_add(o, "made_at", json_object_get(json_member(doc, "made_at")));
		json_object_object_add(o, "boots", json_object_get(json_member(doc, "boots")));
		json_object_object_add(o, "host", json_object_get(json_member(doc, "host")));
		json_object_object_add(o, "kernel", json_object_get(json_member(doc, "kernel")));
		json_object *wl = json_member(doc, "workload");
		json_object_object_add(o, "workload", json_object_get(json_member(wl, "name")));
		json_object_object_add(o, "tool", json_object_get(json_member(wl, "tool")));
		struct tm tm = {0};
		const char *made = json_member_string(doc, "made_at");
		if (made && strptime(made, "%Y-%m-%dT%H:%M:%SZ", &tm))
			json_object_object_add(
			    o, "age_s",
			    json_object_new_int64((int64_t)difftime(time(NULL), timegm(&tm))));
		json_object_array_add(out, o);
	}
	closedir(d);
	size_t n = json_object_array_length(out);
	if (n > 1)
		json_object_array_sort(out, newest_first);
	return out;
}
