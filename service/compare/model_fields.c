/* The generic reader and writer of the result model's field tables. See
 * model_fields.h. */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/model_fields.h"

/* One field of o at path into base: 0, or the reader's errno. */
static int read_field(struct json_reader *r, json_object *o, const char *path,
		      const struct field *f, size_t i, char *base, struct model_presence *has)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(o, f->name, &v)) {
		char full[JSON_PATH_MAX];
		snprintf(full, sizeof(full), "%s%s%s", path, path[0] ? "." : "", f->name);
		bool partial = ((const struct model_reader *)r)->partial;
		return f->required && !partial ? json_reader_fail(r, full, "is missing") : 0;
	}
	if (!v) {
		if (!f->nullable) {
			char full[JSON_PATH_MAX];
			snprintf(full, sizeof(full), "%s%s%s", path, path[0] ? "." : "", f->name);
			return json_reader_fail(r, full, "is null");
		}
		has->null |= 1ull << i;
		return 0;
	}
	has->set |= 1ull << i;
	void *at = base + f->off;
	switch (f->kind) {
	case K_STRING:
		return json_get_string(r, o, path, f->name, true, MODEL_MAX_STRING, at, NULL);
	case K_INT:
		return json_get_int(r, o, path, f->name, true, INT64_MIN, INT64_MAX, at);
	case K_NUMBER:
		if (json_object_is_type(v, json_type_int))
			has->integral |= 1ull << i;
		return json_get_number(r, o, path, f->name, true, -DBL_MAX, DBL_MAX, at);
	case K_BOOL:
		return json_get_bool(r, o, path, f->name, true, at);
	case K_OBJECT:
		return json_get_object(r, o, path, f->name, true, at);
	case K_ARRAY:
		return json_get_array(r, o, path, f->name, true, MODEL_MAX_ITEMS, at);
	case K_ANY:
		*(json_object **)at = v;
		return 0;
	case K_CHILD:
		return 0;
	}
	return 0;
}

/* Every field of a type from object o at path, and the members it does not
 * know into *extra (a new object of references, or NULL when none). */
int model_read_fields(struct json_reader *r, json_object *o, const char *path,
		      const struct field *f, size_t n, void *base, struct model_presence *has,
		      json_object **extra)
{
	if (!json_object_is_type(o, json_type_object))
		return json_reader_fail(r, path[0] ? path : "$", "is %s, not an object",
					json_type_phrase(o));
	for (size_t i = 0; i < n; i++)
		if (read_field(r, o, path, &f[i], i, base, has) < 0)
			return r->failed;
	json_object_object_foreach(o, key, val)
	{
		size_t i = 0;
		while (i < n && strcmp(f[i].name, key) != 0)
			i++;
		if (i < n)
			continue;
		if (!*extra && !(*extra = json_object_new_object()))
			return -ENOMEM;
		json_object_object_add(*extra, key, json_object_get(val));
	}
	return 0;
}

/* A deep copy of v (NULL stays NULL; NULL also when out of memory). */
static json_object *copy(json_object *v)
{
	json_object *c = NULL;
	if (v && json_object_deep_copy(v, &c, NULL) != 0)
		return NULL;
	return c;
}

/* The fields of a type from base into a new object; child(i) gives a
 * K_CHILD field's value. */
json_object *model_write_fields(const struct field *f, size_t n, const void *base,
				const struct model_presence *has, json_object *extra,
				json_object *(*child)(const void *base, const char *name))
{
	json_object *o = json_object_new_object();
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const void *at = (const char *)base + f[i].off;
		json_object *v = NULL;
		if ((has->null >> i) & 1) {
			json_object_object_add(o, f[i].name, NULL);
			continue;
		}
		if (!((has->set >> i) & 1))
			continue;
		switch (f[i].kind) {
		case K_STRING:
			v = json_object_new_string(*(const char *const *)at);
			break;
		case K_INT:
			v = json_object_new_int64(*(const int64_t *)at);
			break;
		case K_NUMBER:
			v = (has->integral >> i) & 1
				? json_object_new_int64((int64_t) * (const double *)at)
				: json_object_new_double(*(const double *)at);
			break;
		case K_BOOL:
			v = json_object_new_boolean(*(const bool *)at);
			break;
		case K_OBJECT:
		case K_ARRAY:
		case K_ANY:
			v = copy(*(json_object *const *)at);
			break;
		case K_CHILD:
			v = child(base, f[i].name);
			break;
		}
		if (!v) {
			json_object_put(o);
			return NULL;
		}
		json_object_object_add(o, f[i].name, v);
	}
	if (!extra)
		return o;
	json_object_object_foreach(extra, key, val)
	{
		json_object *v = copy(val);
		if (val && !v) {
			json_object_put(o);
			return NULL;
		}
		json_object_object_add(o, key, v);
	}
	return o;
}

/* A typed array member of o at path: its items parsed by parse_item into a
 * new array of n items of size bytes each. Absent: 0 items. */
int model_read_children(struct json_reader *r, json_object *o, const char *path, const char *key,
			size_t size, void **ret, size_t *ret_n,
			int (*parse_item)(struct json_reader *r, json_object *item,
					  const char *path, void *ret))
{
	json_object *a = NULL;
	int k = json_get_array(r, o, path, key, false, MODEL_MAX_ITEMS, &a);
	if (k != 0)
		return k < 0 ? k : 0;
	size_t n = json_object_array_length(a);
	*ret = calloc(n ? n : 1, size);
	if (!*ret)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char item[JSON_PATH_MAX];
		snprintf(item, sizeof(item), "%s%s%s[%zu]", path, path[0] ? "." : "", key, i);
		/* counted first, so a failure frees what the item holds */
		*ret_n = i + 1;
		if (parse_item(r, json_object_array_get_idx(a, i), item, (char *)*ret + i * size) <
		    0)
			return r->failed ? r->failed : -ENOMEM;
	}
	return 0;
}

json_object *model_write_children(const void *items, size_t n, size_t size,
				  json_object *(*emit)(const void *item))
{
	json_object *a = json_object_new_array_ext((int)n);
	for (size_t i = 0; a && i < n; i++) {
		json_object *o = emit((const char *)items + i * size);
		if (!o || json_object_array_add(a, o) != 0) {
			json_object_put(o);
			json_object_put(a);
			return NULL;
		}
	}
	return a;
}
