/* The ELF reader on real binaries and on truncated and corrupt images. */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/elfdeps.h"
#include "util/fs.h"

#define CYCLICTEST "/usr/bin/cyclictest"

static int strv_has_suffix(char **v, const char *suffix)
{
	size_t sl = strlen(suffix);
	for (; v && *v; v++) {
		size_t l = strlen(*v);
		if (l >= sl && strcmp(*v + l - sl, suffix) == 0)
			return 1;
	}
	return 0;
}

static void test_cyclictest_needed(void **state)
{
	(void)state;
	struct elf_info *info = NULL;
	struct sl_error err = {0};
	assert_int_equal(elfdeps_read(CYCLICTEST, &info, &err), 0);
	assert_non_null(info->interp);
	assert_string_equal(info->interp, "/lib64/ld-linux-x86-64.so.2");
	assert_true(strv_has_suffix(info->needed, "libc.so.6"));
	assert_true(strv_has_suffix(info->needed, "libnuma.so.1"));
	assert_int_equal(info->n_needed, 4); /* librt libpthread libnuma libc */
	assert_null(info->needed[info->n_needed]);
	elf_info_free(info);
}

static void test_resolve_closure(void **state)
{
	(void)state;
	const char *bins[] = {CYCLICTEST, "/usr/bin/rt-migrate-test", NULL};
	char **files = NULL;
	struct sl_error err = {0};
	assert_int_equal(elfdeps_resolve(bins, NULL, &files, &err), 0);
	assert_true(strv_has_suffix(files, "/lib64/ld-linux-x86-64.so.2"));
	assert_true(strv_has_suffix(files, "/libc.so.6"));
	assert_true(strv_has_suffix(files, "/libnuma.so.1"));
	assert_true(strv_has_suffix(files, "/libpthread.so.0"));
	assert_false(strv_has_suffix(files, "cyclictest"));
	/* One dynamic loader: the interpreter, not a second copy for libc's DT_NEEDED. */
	assert_false(strv_has_suffix(files, "x86_64-linux-gnu/ld-linux-x86-64.so.2"));
	size_t n = 0;
	for (char **f = files; *f; f++, n++) {
		assert_true((*f)[0] == '/');
		if (f != files)
			assert_true(strcmp(f[-1], f[0]) < 0); /* sorted, unique */
	}
	assert_true(n >= 5 && n < 20);
	strv_free(files);
}

static void test_resolve_missing_dir(void **state)
{
	(void)state;
	const char *bins[] = {CYCLICTEST, NULL};
	const char *dirs[] = {"/nonexistent-dir", NULL};
	char **files = NULL;
	struct sl_error err = {0};
	assert_true(elfdeps_resolve(bins, dirs, &files, &err) < 0);
	assert_int_equal(err.kind, ERR_NOT_FOUND);
	assert_non_null(strstr(err.message, "needed by '/usr/bin/cyclictest'"));
	assert_null(files);
}

static void test_truncated(void **state)
{
	(void)state;
	char *data = NULL;
	size_t len = 0;
	struct sl_error err = {0};
	assert_int_equal(fs_read_file(CYCLICTEST, 64 << 20, &data, &len, &err), 0);
	/* Every prefix shorter than the dynamic section must fail cleanly. */
	for (size_t cut = 0; cut < 8192 && cut < len; cut += 7) {
		struct elf_info *info = NULL;
		memset(&err, 0, sizeof(err));
		assert_true(elfdeps_parse(data, cut, "cut", &info, &err) < 0);
		assert_null(info);
		assert_int_equal(err.kind, ERR_INVALID);
		assert_true(err.message[0] != '\0');
	}
	struct elf_info *info = NULL;
	assert_true(elfdeps_parse(data, 40, "short", &info, &err) < 0);
	assert_non_null(strstr(err.message, "truncated"));
	free(data);
}

static void test_corrupt(void **state)
{
	(void)state;
	char *data = NULL;
	size_t len = 0;
	struct sl_error err = {0};
	struct elf_info *info = NULL;
	assert_int_equal(fs_read_file(CYCLICTEST, 64 << 20, &data, &len, &err), 0);

	Elf64_Ehdr eh;
	memcpy(&eh, data, sizeof(eh));
	Elf64_Ehdr bad = eh;
	bad.e_phoff = UINT64_MAX - 8; /* overflow bait */
	memcpy(data, &bad, sizeof(bad));
	assert_true(elfdeps_parse(data, len, "phoff", &info, &err) < 0);
	memcpy(data, &eh, sizeof(eh));

	/* Point every DT_NEEDED and DT_STRTAB far out of the file. */
	char *copy = malloc(len);
	memcpy(copy, data, len);
	Elf64_Phdr *ph = (Elf64_Phdr *)(copy + eh.e_phoff);
	for (int i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_DYNAMIC)
			continue;
		Elf64_Dyn *d = (Elf64_Dyn *)(copy + ph[i].p_offset);
		for (; d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_NEEDED)
				d->d_un.d_val = 0x7fffffff;
	}
	memset(&err, 0, sizeof(err));
	assert_true(elfdeps_parse(copy, len, "needed", &info, &err) < 0);
	assert_non_null(strstr(err.message, "malformed needed-library name"));

	/* Random byte flips in the headers: never a crash (ASan watches). */
	srand(1);
	for (int round = 0; round < 2000; round++) {
		memcpy(copy, data, len);
		for (int k = 0; k < 4; k++)
			copy[(size_t)rand() % 4096] ^= (char)(1 + rand() % 255);
		info = NULL;
		if (elfdeps_parse(copy, len, "fuzz", &info, &err) == 0)
			elf_info_free(info);
	}
	free(copy);
	assert_true(elfdeps_parse("hello", 5, "text", &info, &err) < 0);
	assert_non_null(strstr(err.message, "not an ELF file"));
	free(data);
}

static void test_static_image(void **state)
{
	(void)state;
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
	} img = {0};
	memcpy(img.eh.e_ident, ELFMAG, SELFMAG);
	img.eh.e_ident[EI_CLASS] = ELFCLASS64;
	img.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	img.eh.e_phoff = sizeof(Elf64_Ehdr);
	img.eh.e_phnum = 1;
	img.eh.e_phentsize = sizeof(Elf64_Phdr);
	img.ph.p_type = PT_LOAD;
	struct elf_info *info = NULL;
	struct sl_error err = {0};
	assert_int_equal(elfdeps_parse(&img, sizeof(img), "static", &info, &err), 0);
	assert_null(info->interp);
	assert_int_equal(info->n_needed, 0);
	assert_null(info->needed[0]);
	elf_info_free(info);
	elf_info_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cyclictest_needed),
	    cmocka_unit_test(test_resolve_closure),
	    cmocka_unit_test(test_resolve_missing_dir),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_static_image),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
