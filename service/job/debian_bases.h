/* The Debian kernel sources schedlab has a built-in base for: each
 * "debian:linux-source-X.Y" and its guest-kernel/linux-X.Y/ directory (seed
 * series, config fragment). The service builds only these (job.c); a job or
 * `schedlab test --base debian:...` that names one and no config gets its
 * fragment (docs/kernel-builds.md, "Two bases"). */
#pragma once

#include <stdbool.h>

/* The built-in base name ("linux-6.12") of a Debian source
 * ("debian:linux-source-6.12"), or NULL when schedlab has none for it. */
const char *debian_base_builtin(const char *source);

/* The built-in config of a job kernel with this source and no "config":
 * its own base's for a known Debian source, else "linux-6.1". */
const char *debian_base_default_config(const char *source);

/* "'debian:linux-source-6.1' or 'debian:linux-source-6.12'", for messages. */
const char *debian_base_list(void);
