/* A small, bounds-checked ELF reader: what a dynamically linked binary needs
 * at run time (its PT_INTERP and DT_NEEDED entries), and the recursive
 * resolution of those names in the standard multiarch library directories,
 * so the initramfs carries exactly the shared libraries rt-tests needs.
 *
 * Only 64-bit little-endian ELF (x86_64 guests) is accepted. Every offset,
 * count and string read from a file is checked against the file's size. */
#pragma once

#include <stddef.h>

#include "util/error.h"

#define ELFDEPS_MAX_FILE   (256u << 20) /* bytes read from one ELF file */
#define ELFDEPS_MAX_NEEDED 256		/* DT_NEEDED entries in one file */
#define ELFDEPS_MAX_FILES  512		/* files in one resolved closure */

struct elf_info {
	char *interp;  /* PT_INTERP path, or NULL for a static binary */
	char **needed; /* NULL-terminated DT_NEEDED names (empty when static) */
	size_t n_needed;
};

/* Parses the ELF image buf[0..len) (borrowed). name is used in messages.
 * On success *ret is a new elf_info (free with elf_info_free). A truncated or
 * corrupt image is an ERR_INVALID error naming the file and the reason. */
int elfdeps_parse(const void *buf, size_t len, const char *name, struct elf_info **ret,
		  struct sl_error *err);
/* Reads path (at most ELFDEPS_MAX_FILE bytes) and parses it as above. */
int elfdeps_read(const char *path, struct elf_info **ret, struct sl_error *err);
void elf_info_free(struct elf_info *info);

/* The default library search path for x86_64 Debian guests: a static
 * NULL-terminated list ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
 * "/lib64", "/usr/lib64", "/lib", "/usr/lib"). */
const char *const *elfdeps_default_dirs(void);

/* Resolves the run-time closure of binaries (NULL-terminated host paths):
 * every PT_INTERP and every DT_NEEDED name found in dirs (NULL: the default
 * dirs), recursively. *ret_files is a new NULL-terminated, sorted,
 * de-duplicated list of absolute paths (the path where the library was found;
 * it is also the path it must have in the guest), excluding the binaries
 * themselves. A name that cannot be found is an ERR_NOT_FOUND error naming
 * it and the file that needs it. */
int elfdeps_resolve(const char *const *binaries, const char *const *dirs, char ***ret_files,
		    struct sl_error *err);
