/* The checks a submitted job gets at submit time beyond job_expand_json():
 * everything that would otherwise fail only once a worker starts it and that
 * needs no build. Each kernel's Debian source package is installed, each
 * built-in patch series ({"series": NAME}) and config ({"builtin": NAME})
 * exists under the data directory's guest-kernel/. A failure is ERR_INVALID
 * (400) naming the field ("$.kernels.K.source", "...patches[i].series",
 * "...config.builtin"); messages never name a host path. (NUL bytes in
 * inline patches are refused by job_expand_json() itself.) */
#pragma once

#include "util/error.h"
#include "util/json.h"

/* expanded is borrowed; data_dir NULL: fs_data_dir(). */
int submit_checks(json_object *expanded, const char *data_dir, struct sl_error *err);
