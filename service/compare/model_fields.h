/* The machinery under the result model (result_model.h): a model type is a
 * table of its fields, and one generic reader and one generic writer walk
 * the table. Only result_model.c uses it; it sits below so that the model
 * is its types and tables, not the walking. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "util/json_get.h"

/* Bounds on what a stored or uploaded result can make us hold. */
#define MODEL_MAX_STRING (1 << 20) /* bytes in one string member */
#define MODEL_MAX_ITEMS	 (1 << 20) /* items in one array member */

/* Which fields of a model struct the document had: bit i is the type's
 * field i (model_field_name()). integral marks a number written as an
 * integer, so emitting writes it as one again. */
struct model_presence {
	uint64_t set, null, integral;
};

enum kind {
	K_STRING,
	K_INT,
	K_NUMBER,
	K_BOOL,
	K_OBJECT,
	K_ARRAY,
	K_ANY,	 /* one of several JSON types (a const, a oneOf): kept as it is */
	K_CHILD, /* typed children, parsed and emitted by the type's own code */
};

struct field {
	const char *name;
	enum kind kind;
	bool nullable, required;
	size_t off;
};

#define F(type, member, kind, nullable, required)                                                  \
	{                                                                                          \
#member, kind, nullable, required, offsetof(type, member)                          \
	}

/* A json_reader that also says whether a required member may be missing
 * (model_run_read()). Every reader the model makes is one, so the field
 * reader may look past its json_reader. */
struct model_reader {
	struct json_reader r; /* first */
	bool partial;
};

/* Every field of table f (n fields) from object o at path into base, and
 * the members it does not know into *extra (a new object of references, or
 * NULL when none): 0, or the reader's errno. K_CHILD fields are only marked
 * present: the type's own code parses them. */
int model_read_fields(struct json_reader *r, json_object *o, const char *path,
		      const struct field *f, size_t n, void *base, struct model_presence *has,
		      json_object **extra);

/* The fields of table f from base into a new object; child(base, name)
 * gives a K_CHILD field's value. NULL when out of memory. */
json_object *model_write_fields(const struct field *f, size_t n, const void *base,
				const struct model_presence *has, json_object *extra,
				json_object *(*child)(const void *base, const char *name));

/* A typed array member of o at path: its items parsed by parse_item into a
 * new array of n items of size bytes each. Absent: 0 items. */
int model_read_children(struct json_reader *r, json_object *o, const char *path, const char *key,
			size_t size, void **ret, size_t *ret_n,
			int (*parse_item)(struct json_reader *r, json_object *item,
					  const char *path, void *ret));

/* Emits n items of size bytes from items through emit into a new array;
 * NULL when out of memory. */
json_object *model_write_children(const void *items, size_t n, size_t size,
				  json_object *(*emit)(const void *item));
