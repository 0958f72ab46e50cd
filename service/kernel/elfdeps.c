/* The ELF reader and library resolver behind the initramfs: see elfdeps.h. */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel/elfdeps.h"
#include "util/fs.h"

static const char *const default_dirs[] = {
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
    NULL,
};

const char *const *elfdeps_default_dirs(void)
{
	return default_dirs;
}

void elf_info_free(struct elf_info *info)
{
	if (!info)
		return;
	free(info->interp);
	strv_free(info->needed);
	free(info);
}

static inline void elf_info_freep(struct elf_info **p)
{
	elf_info_free(*p);
}

/* 1 if [off, off+size) lies inside a buffer of len bytes, without overflow. */
static int in_bounds(size_t len, uint64_t off, uint64_t size)
{
	return off <= len && size <= len - off;
}

/* A NUL-terminated string at off inside buf, of at most PATH_MAX bytes, or NULL. */
static const char *str_at(const char *buf, size_t len, uint64_t off, uint64_t limit)
{
	if (off >= len || off >= limit)
		return NULL;
	size_t max = (size_t)(limit - off);
	if (max > PATH_MAX)
		max = PATH_MAX;
	const char *s = buf + off;
	if (!memchr(s, '\0', max))
		return NULL;
	return s;
}

/* Translates a virtual address to a file offset through the PT_LOAD segments. */
static int vaddr_to_offset(const Elf64_Phdr *ph, size_t phnum, uint64_t vaddr, uint64_t *ret)
{
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (vaddr >= ph[i].p_vaddr && vaddr - ph[i].p_vaddr < ph[i].p_filesz) {
			*ret = ph[i].p_offset + (vaddr - ph[i].p_vaddr);
			return 0;
		}
	}
	return -ENOENT;
}

int elfdeps_parse(const void *data, size_t len, const char *name, struct elf_info **ret,
		  struct sl_error *err)
{
	const char *buf = data;
	struct elf_info *info __attribute__((cleanup(elf_info_freep))) = NULL;
	Elf64_Ehdr eh;

	if (len < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG) != 0)
		return error_set(err, ERR_INVALID, EINVAL, "File '%s' is not an ELF file.", name);
	if (buf[EI_CLASS] != ELFCLASS64 || buf[EI_DATA] != ELFDATA2LSB)
		return error_set(err, ERR_INVALID, EINVAL,
				 "File '%s' is not a 64-bit little-endian ELF file.", name);
	if (len < sizeof(eh))
		return error_set(
		    err, ERR_INVALID, EINVAL,
		    "ELF file '%s' is truncated: %zu bytes is shorter than its header.", name, len);
	memcpy(&eh, buf, sizeof(eh));
	if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM || eh.e_phentsize != sizeof(Elf64_Phdr))
		return error_set(err, ERR_INVALID, EINVAL,
				 "ELF file '%s' has a bad program header table (%u entries of %u "
				 "bytes).",
				 name, eh.e_phnum, eh.e_phentsize);
	if (!in_bounds(len, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)))
		return error_set(err, ERR_INVALID, EINVAL,
				 "ELF file '%s' is truncated: its program headers at offset %llu "
				 "lie beyond its %zu bytes.",
				 name, (unsigned long long)eh.e_phoff, len);

	size_t phnum = eh.e_phnum;
	_cleanup_free_ Elf64_Phdr *ph = calloc(phnum, sizeof(*ph));
	info = calloc(1, sizeof(*info));
	if (!ph || !info)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory reading '%s'.", name);
	memcpy(ph, buf + eh.e_phoff, phnum * sizeof(*ph));

	const Elf64_Phdr *dyn = NULL;
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_INTERP) {
			if (!in_bounds(len, ph[i].p_offset, ph[i].p_filesz))
				return error_set(err, ERR_INVALID, EINVAL,
						 "ELF file '%s' is truncated: its interpreter "
						 "lies beyond its %zu bytes.",
						 name, len);
			const char *s =
			    str_at(buf, len, ph[i].p_offset, ph[i].p_offset + ph[i].p_filesz);
			if (!s || s[0] != '/')
				return error_set(err, ERR_INVALID, EINVAL,
						 "ELF file '%s' has a malformed interpreter path.",
						 name);
			free(info->interp);
			info->interp = strdup(s);
			if (!info->interp)
				return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = &ph[i];
		}
	}

	info->needed = calloc(1, sizeof(char *));
	if (!info->needed)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	if (!dyn) {
		*ret = TAKE_PTR(info);
		return 0;
	}
	if (!in_bounds(len, dyn->p_offset, dyn->p_filesz))
		return error_set(err, ERR_INVALID, EINVAL,
				 "ELF file '%s' is truncated: its dynamic section at offset %llu "
				 "lies beyond its %zu bytes.",
				 name, (unsigned long long)dyn->p_offset, len);

	size_t ndyn = dyn->p_filesz / sizeof(Elf64_Dyn);
	uint64_t strtab = 0, strsz = 0;
	int have_strtab = 0;
	size_t n_needed = 0;
	for (size_t i = 0; i < ndyn; i++) {
		Elf64_Dyn d;
		memcpy(&d, buf + dyn->p_offset + i * sizeof(d), sizeof(d));
		if (d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_STRTAB) {
			strtab = d.d_un.d_ptr;
			have_strtab = 1;
		} else if (d.d_tag == DT_STRSZ) {
			strsz = d.d_un.d_val;
		} else if (d.d_tag == DT_NEEDED) {
			if (++n_needed > ELFDEPS_MAX_NEEDED)
				return error_set(
				    err, ERR_INVALID, E2BIG,
				    "ELF file '%s' names more than %d needed libraries.", name,
				    ELFDEPS_MAX_NEEDED);
		}
	}
	if (n_needed == 0) {
		*ret = TAKE_PTR(info);
		return 0;
	}

	uint64_t stroff;
	if (!have_strtab || vaddr_to_offset(ph, phnum, strtab, &stroff) < 0 ||
	    !in_bounds(len, stroff, strsz))
		return error_set(err, ERR_INVALID, EINVAL,
				 "ELF file '%s' has a dynamic string table outside its %zu bytes.",
				 name, len);

	char **needed = realloc(info->needed, (n_needed + 1) * sizeof(char *));
	if (!needed)
		return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
	info->needed = needed;
	info->needed[0] = NULL;
	for (size_t i = 0; i < ndyn && info->n_needed < n_needed; i++) {
		Elf64_Dyn d;
		memcpy(&d, buf + dyn->p_offset + i * sizeof(d), sizeof(d));
		if (d.d_tag == DT_NULL)
			break;
		if (d.d_tag != DT_NEEDED)
			continue;
		const char *s = d.d_un.d_val < strsz
				    ? str_at(buf, len, stroff + d.d_un.d_val, stroff + strsz)
				    : NULL;
		if (!s || !*s || strchr(s, '/'))
			return error_set(err, ERR_INVALID, EINVAL,
					 "ELF file '%s' has a malformed needed-library name at "
					 "string offset %llu.",
					 name, (unsigned long long)d.d_un.d_val);
		info->needed[info->n_needed] = strdup(s);
		if (!info->needed[info->n_needed])
			return error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory.");
		info->needed[++info->n_needed] = NULL;
	}
	*ret = TAKE_PTR(info);
	return 0;
}

int elfdeps_read(const char *path, struct elf_info **ret, struct sl_error *err)
{
	_cleanup_free_ char *data = NULL;
	size_t len;
	int r = fs_read_file(path, ELFDEPS_MAX_FILE, &data, &len, err);
	if (r < 0)
		return r;
	return elfdeps_parse(data, len, path, ret, err);
}

/* A growable list of unique strings, kept in insertion order. */
struct strset {
	char **v;
	size_t n, cap;
};

static void strset_clear(struct strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int strset_has(const struct strset *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return 1;
	return 0;
}

/* Adds a copy of str; returns 1 if added, 0 if present, -ENOMEM/-E2BIG. */
static int strset_add(struct strset *s, const char *str)
{
	if (strset_has(s, str))
		return 0;
	if (s->n >= ELFDEPS_MAX_FILES)
		return -E2BIG;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char **v = realloc(s->v, cap * sizeof(char *));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = strdup(str);
	if (!s->v[s->n])
		return -ENOMEM;
	s->v[++s->n] = NULL;
	return 1;
}

static int find_lib(const char *const *dirs, const char *name, char **ret)
{
	for (size_t i = 0; dirs[i]; i++) {
		char *p = fs_path_join(dirs[i], name);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			*ret = p;
			return 0;
		}
		free(p);
	}
	return -ENOENT;
}

/* 1 if an entry of s is an absolute path whose last component is name. */
static int interp_named(const struct strset *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++) {
		const char *base = strrchr(s->v[i], '/');
		if (base && strcmp(base + 1, name) == 0 && strncmp(name, "ld-linux", 8) == 0)
			return 1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int elfdeps_resolve(const char *const *binaries, const char *const *dirs, char ***ret_files,
		    struct sl_error *err)
{
	/* todo: files still to read; done: everything queued, binaries first. */
	struct strset queue = {0}, libs = {0};
	size_t next = 0;
	int r = -ENOMEM;

	if (!dirs)
		dirs = default_dirs;
	for (size_t i = 0; binaries[i]; i++) {
		r = strset_add(&queue, binaries[i]);
		if (r < 0)
			goto oom;
	}
	while (next < queue.n) {
		const char *file = queue.v[next++];
		struct elf_info *info = NULL;
		r = elfdeps_read(file, &info, err);
		if (r < 0)
			goto fail;
		if (info->interp) {
			struct stat st;
			if (stat(info->interp, &st) < 0 || !S_ISREG(st.st_mode)) {
				r = error_set(err, ERR_NOT_FOUND, ENOENT,
					      "The interpreter '%s' of '%s' was not found.",
					      info->interp, file);
				elf_info_free(info);
				goto fail;
			}
			r = strset_add(&queue, info->interp);
			if (r > 0)
				r = strset_add(&libs, info->interp);
			if (r < 0) {
				elf_info_free(info);
				goto oom;
			}
		}
		for (size_t i = 0; i < info->n_needed; i++) {
			char *path = NULL;
			/* libc names the dynamic loader; the interpreter already is it
			 * (ld.so matches its own soname), so no second copy. */
			if (interp_named(&libs, info->needed[i]))
				continue;
			if (find_lib(dirs, info->needed[i], &path) < 0) {
				r = error_set(err, ERR_NOT_FOUND, ENOENT,
					      "The library '%s' needed by '%s' was not found in "
					      "the library directories.",
					      info->needed[i], file);
				elf_info_free(info);
				goto fail;
			}
			r = strset_add(&queue, path);
			if (r > 0)
				r = strset_add(&libs, path);
			free(path);
			if (r < 0) {
				elf_info_free(info);
				goto oom;
			}
		}
		elf_info_free(info);
	}
	strset_clear(&queue);
	if (!libs.v) {
		libs.v = calloc(1, sizeof(char *));
		if (!libs.v)
			goto oom;
	}
	qsort(libs.v, libs.n, sizeof(char *), cmp_str);
	*ret_files = libs.v;
	return 0;
oom:
	r = r == -E2BIG
		? error_set(err, ERR_TOO_LARGE, E2BIG,
			    "The library closure has more than %d files.", ELFDEPS_MAX_FILES)
		: error_set(err, ERR_INTERNAL, ENOMEM, "Out of memory resolving libraries.");
fail:
	strset_clear(&queue);
	strset_clear(&libs);
	return r;
}
