/* kbuild: the spec and series parser, the cache key (which inputs change it
 * and which do not), the command lines of a build against golden files in
 * tests/data/kbuild/ (SCHEDLAB_UPDATE_GOLDEN=1 rewrites them), and the
 * cache's hit/miss, failure and eviction logic. Every command runs in
 * cmd_run()'s dry run; fake_cmd() answers for gcc, tar, patch and make and
 * leaves the files they would leave. The real build is in
 * tests/e2e/10-kernel-build.sh. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/sched_ext.h"
#include "kernel/kbuild-internal.h"
#include "kernel/kbuild.h"
#include "proto/utf8.h"
#include "util/cmd.h"
#include "util/fs.h"

struct fixture {
	char dir[64];
	char *cache;
	const char *compiler; /* what `gcc --version` prints */
	int builds;	      /* `make ... bzImage` runs */
	int copies;	      /* `cp -a` of obj/ (untrusted builds) */
	int seeds;	      /* the copies that seed a work area */
	bool fail;	      /* the dry run of a patch named *bad* or of any patch fails */
	const char *drop;     /* olddefconfig removes this option from .config */
	size_t bzimage_bytes;
	const char *patch_output; /* what a failing patch dry run prints, or NULL: a hunk */
	const char *make_output;  /* non-NULL: make bzImage prints this and exits 2 */
	const char *make_after;	  /* with make_output: printed after the compiler's error */
	int sandboxed;		  /* commands that came wrapped in bwrap */
	int scx_builds;		  /* `make -C tools/sched_ext` runs */
	bool scx_fail;		  /* that make exits 2 */
	char scx_cmd[1024];	  /* the last one's arguments after make */
	bool no_sandbox;	  /* build() sets kbuild_opts.no_sandbox */
	int tree_slots;		  /* build() sets kbuild_opts.tree_slots */
	char made_in[2048];	  /* the O= of each `make bzImage`, one a line */
	int made_marked;	  /* ...that found the complete-build marker in O= */
	/* make bzImage leaves in place of the image: 0 a file, 'f' a FIFO,
	 * 'z' a symlink to /dev/zero */
	char bzimage_kind;
};

static void write_file(const char *dir, const char *name, const char *text)
{
	char *p = fs_path_join(dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static const char *arg_value(char *const argv[], const char *prefix)
{
	for (size_t i = 0; argv[i]; i++)
		if (strncmp(argv[i], prefix, strlen(prefix)) == 0)
			return argv[i] + strlen(prefix);
	return NULL;
}

static const char *arg_last(char *const argv[])
{
	size_t n = 0;
	while (argv[n + 1])
		n++;
	return argv[n];
}

/* The dry run's stand-in for the build's tools. A sandboxed command
 * (util/sandbox.h) is the one after bwrap's last "--", run in --chdir. */
static int fake_cmd(void *ud, char *const argv[], const char *cwd, char **ret_output)
{
	struct fixture *fx = ud;
	if (strcmp(argv[0], "bwrap") == 0) {
		size_t cmd = 0, nb = 0;
		/* directories bound elsewhere (an untrusted build's copy of obj/,
		 * a work area's src/ and obj/ at area 0's paths) */
		const char *from[4] = {0}, *at[4] = {0};
		for (size_t i = 1; argv[i]; i++) {
			if (strcmp(argv[i], "--chdir") == 0 && argv[i + 1])
				cwd = argv[i + 1];
			if ((strcmp(argv[i], "--bind") == 0 || strcmp(argv[i], "--ro-bind") == 0) &&
			    argv[i + 1] && argv[i + 2] && strcmp(argv[i + 1], argv[i + 2]) != 0 &&
			    nb < 4) {
				from[nb] = argv[i + 1];
				at[nb++] = argv[i + 2];
			}
			if (strcmp(argv[i], "--") == 0)
				cmd = i + 1;
		}
		assert_true(cmd > 0 && argv[cmd]);
		fx->sandboxed++;
		if (!nb)
			return fake_cmd(ud, argv + cmd, cwd, ret_output);
		/* the command's paths (and its cwd) under at are from's on the host */
		char *inner[33] = {0};
		size_t n = 0;
		for (size_t i = cmd; argv[i] && n < 31; i++, n++) {
			for (size_t j = 0; j < nb && !inner[n]; j++) {
				const char *p = strstr(argv[i], at[j]);
				if (p && (p[strlen(at[j])] == '\0' || p[strlen(at[j])] == '/'))
					assert_true(asprintf(&inner[n], "%.*s%s%s",
							     (int)(p - argv[i]), argv[i], from[j],
							     p + strlen(at[j])) > 0);
			}
			if (!inner[n])
				inner[n] = strdup(argv[i]);
		}
		inner[32] = NULL;
		for (size_t j = 0; cwd && j < nb && !inner[32]; j++)
			if (strncmp(cwd, at[j], strlen(at[j])) == 0 &&
			    (cwd[strlen(at[j])] == '\0' || cwd[strlen(at[j])] == '/'))
				assert_true(
				    asprintf(&inner[32], "%s%s", from[j], cwd + strlen(at[j])) > 0);
		int r = fake_cmd(ud, inner, inner[32] ? inner[32] : cwd, ret_output);
		for (size_t i = 0; i <= 32; i++)
			free(inner[i]);
		return r;
	}
	if (strcmp(argv[0], "gcc") == 0) {
		*ret_output = strdup(fx->compiler);
		return 0;
	}
	if (strcmp(argv[0], "cp") == 0 && (strcmp(argv[1], "-al") == 0 || (argv[4] && argv[5]))) {
		/* seeding a work area: cp -al SRC DIR, cp -a --reflink=auto
		 * PARTS... DIR; done for real (small files here) */
		fx->seeds++;
		char line[4096] = "cp";
		for (size_t i = 1; argv[i]; i++) {
			strncat(line, " '", sizeof(line) - strlen(line) - 1);
			strncat(line, argv[i], sizeof(line) - strlen(line) - 1);
			strncat(line, "'", sizeof(line) - strlen(line) - 1);
		}
		return system(line) == 0 ? 0 : 1;
	}
	if (strcmp(argv[0], "cp") == 0) {
		/* cp -a --reflink=auto FROM TO: an untrusted build's object copy;
		 * the copy keeps the objects (here: a marker file) */
		fx->copies++;
		struct sl_error err = {0};
		assert_int_equal(fs_mkdir_p(argv[4], &err), 0);
		char *mark = fs_path_join(argv[3], "trusted.o");
		if (fs_exists(mark))
			write_file(argv[4], "trusted.o", "trusted object\n");
		free(mark);
		return 0;
	}
	if (strcmp(argv[0], "tar") == 0) {
		/* tar -xf TARBALL -C DIR --strip-components=1 */
		write_file(argv[4], "Makefile",
			   "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 99\nEXTRAVERSION =\n");
		return 0;
	}
	if (strcmp(argv[0], "patch") == 0) {
		bool dry = arg_value(argv, "--dry-run") != NULL;
		if (dry && fx->fail && fx->patch_output) {
			*ret_output = strdup(fx->patch_output);
			return 1;
		}
		if (dry && fx->fail) {
			*ret_output = strdup("checking file kernel/sched/core.c\n"
					     "checking file kernel/sched/rt.c\n"
					     "Hunk #2 FAILED at 1234.\n"
					     "1 out of 2 hunks FAILED\n");
			return 1;
		}
		return 0;
	}
	if (strcmp(argv[0], "make") == 0 && argv[1] && strcmp(argv[1], "-C") == 0 &&
	    strstr(argv[2], "tools/sched_ext")) {
		/* the sched_ext schedulers: loaders in O=/build/bin */
		fx->scx_builds++;
		if (fx->scx_fail) {
			*ret_output = strdup("scx_simple.bpf.c:68:23: error: use of undeclared "
					     "identifier 'SCX_DSQ_LOCAL'\n");
			return 2;
		}
		fx->scx_cmd[0] = '\0';
		for (size_t i = 1; argv[i]; i++) {
			strncat(fx->scx_cmd, " ", sizeof(fx->scx_cmd) - strlen(fx->scx_cmd) - 1);
			strncat(fx->scx_cmd, argv[i],
				sizeof(fx->scx_cmd) - strlen(fx->scx_cmd) - 1);
		}
		char *bin = fs_path_join(arg_value(argv, "O="), "build/bin");
		struct sl_error err = {0};
		assert_int_equal(fs_mkdir_p(bin, &err), 0);
		for (const char *const *n = sched_ext_schedulers(); *n; n++)
			write_file(bin, *n, "#!/bin/false\n");
		free(bin);
		return 0;
	}
	if (strcmp(argv[0], "make") == 0) {
		const char *obj = arg_value(argv, "O=");
		const char *target = arg_last(argv);
		assert_non_null(obj);
		if (strcmp(target, "tinyconfig") == 0)
			write_file(obj, ".config",
				   "CONFIG_SMP=n\n# CONFIG_KVM is not set\nCONFIG_HZ=250\n");
		else if (strcmp(target, "olddefconfig") == 0 && fx->drop) {
			char *path = fs_path_join(obj, ".config"), *text = NULL;
			struct sl_error err = {0};
			assert_int_equal(fs_read_file(path, 1 << 20, &text, NULL, &err), 0);
			char *kept = calloc(1, strlen(text) + 1);
			for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
			     l = strtok_r(NULL, "\n", &save))
				if (!strstr(l, fx->drop)) {
					strcat(kept, l);
					strcat(kept, "\n");
				}
			write_file(obj, ".config", kept);
			free(kept);
			free(text);
			free(path);
		} else if (strcmp(target, "bzImage") == 0 && fx->make_output) {
			/* gcc names the file by its absolute path in the tree */
			assert_true(
			    asprintf(ret_output,
				     "%smake[1]: Entering directory '%s'\nmake[2]: Entering "
				     "directory '%s/../obj'\n%s/kernel/sched/rt.c:12:2: error: "
				     "#error planted "
				     "build failure\nmake[3]: *** [scripts/Makefile.build:250: "
				     "kernel/sched/build_policy.o] Error 1\n%smake: *** "
				     "[Makefile:2012: .] Error 2\n",
				     fx->make_output, cwd, cwd, cwd,
				     fx->make_after ? fx->make_after : "") > 0);
			return 2;
		} else if (strcmp(target, "bzImage") == 0) {
			fx->builds++;
			strncat(fx->made_in, obj, sizeof(fx->made_in) - strlen(fx->made_in) - 2);
			strcat(fx->made_in, "\n");
			char *marker = fs_path_join(obj, ".schedlab-complete");
			if (fs_exists(marker))
				fx->made_marked++;
			free(marker);
			char *boot = fs_path_join(obj, "arch/x86/boot");
			struct sl_error err = {0};
			assert_int_equal(fs_mkdir_p(boot, &err), 0);
			char *bz = fs_path_join(boot, "bzImage");
			unlink(bz); /* a FIFO an earlier build left would block fopen() */
			if (fx->bzimage_kind == 'f')
				assert_int_equal(mkfifo(bz, 0644), 0);
			else if (fx->bzimage_kind == 'z')
				assert_int_equal(symlink("/dev/zero", bz), 0);
			free(bz);
			char *buf = calloc(1, fx->bzimage_bytes + 1);
			memset(buf, 'k', fx->bzimage_bytes);
			if (!fx->bzimage_kind)
				write_file(boot, "bzImage", buf);
			free(buf);
			free(boot);
			*ret_output = strdup(
			    "  CC      kernel/sched/core.o\n  AS      arch/x86/boot/head.o\n");
		}
		return 0;
	}
	fail_msg("unexpected command '%s'", argv[0]);
	return 127;
}

static void dry_run_begin(struct fixture *fx)
{
	cmd_dry_run_begin();
	cmd_dry_run_set_hook(fake_cmd, fx);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test_kbuild.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	fx->cache = fs_path_join(fx->dir, "cache");
	fx->bzimage_bytes = 1000;
	write_file(fx->dir, "linux.tar.xz", "not really a tarball, only hashed here\n");
	write_file(fx->dir, "a.patch", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
	write_file(fx->dir, "b.patch", "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n");
	write_file(fx->dir, "a-copy.patch", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
	write_file(fx->dir, "frag.config", "CONFIG_SMP=y # why\n");
	write_file(fx->dir, "series", "# comment\na.patch\n\nb.patch # trailing\n");
	fx->compiler = "gcc (test) 1.0\nCopyright\n";
	dry_run_begin(fx);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	struct sl_error err;
	free(cmd_dry_run_end());
	fs_rm_rf(fx->dir, &err);
	free(fx->cache);
	free(fx);
	return 0;
}

/* A spec from JSON text, paths relative to the fixture dir. */
static struct kernel_spec *spec_from(struct fixture *fx, const char *json)
{
	json_object *j = json_tokener_parse(json);
	assert_non_null(j);
	struct kernel_spec *s = NULL;
	struct sl_error err = {0};
	int r = kernel_spec_from_json(j, fx->dir, &s, &err);
	json_object_put(j);
	if (r < 0)
		fail_msg("kernel_spec_from_json: %s", err.message);
	return s;
}

static void key_of(struct fixture *fx, const char *json, char key[65])
{
	struct kernel_spec *s = spec_from(fx, json);
	struct sl_error err = {0};
	int r = kbuild_key_in(fx->cache, s, key, &err);
	if (r < 0)
		fail_msg("kbuild_key_in: %s", err.message);
	kernel_spec_free(s);
}

#define SPEC(patches)                                                                              \
	"{\"source\":\"tarball:linux.tar.xz\",\"patches\":" patches ",\"config\":\"frag.config\"}"

static void test_spec_parse(void **state)
{
	struct fixture *fx = *state;
	struct kernel_spec *s = spec_from(fx, "{\"source\":\"tarball:linux.tar.xz\",\"series\":"
					      "\"series\",\"config\":\"frag.config\"}");
	assert_non_null(s->patches[0]);
	assert_non_null(strstr(s->patches[0], "/a.patch"));
	assert_non_null(strstr(s->patches[1], "/b.patch"));
	assert_null(s->patches[2]);
	assert_true(s->patches[0][0] == '/');
	assert_true(strncmp(s->source, "tarball:/", 9) == 0);
	assert_null(s->base);
	kernel_spec_free(s);
	kernel_spec_free(NULL);

	/* "untrusted": its base is the series and config, without "patches" */
	s = spec_from(fx, "{\"source\":\"tarball:linux.tar.xz\",\"patches\":[\"a-copy.patch\"],"
			  "\"series\":\"series\",\"config\":\"frag.config\",\"untrusted\":true}");
	assert_non_null(strstr(s->patches[0], "/a-copy.patch"));
	assert_null(s->patches[3]);
	assert_non_null(s->base);
	assert_false(s->base->untrusted);
	assert_string_equal(s->base->source, s->source);
	assert_string_equal(s->base->config, s->config);
	assert_string_equal(s->base->patches[0], s->patches[1]);
	assert_string_equal(s->base->patches[1], s->patches[2]);
	assert_null(s->base->patches[2]);
	kernel_spec_free(s);

	struct {
		const char *json;
		const char *want;
	} bad[] = {
	    {"[]", "JSON object"},
	    {"{\"patches\":[],\"config\":\"frag.config\"}", "no 'source'"},
	    {"{\"source\":\"debian:linux-source-6.1\"}", "no 'config'"},
	    {"{\"source\":\"x\",\"config\":\"frag.config\",\"colour\":1}", "'colour'"},
	    {"{\"source\":\"x\",\"config\":\"missing.config\"}", "missing.config"},
	    {"{\"source\":\"x\",\"config\":\"frag.config\",\"patches\":[\"nope.patch\"]}",
	     "nope.patch"},
	    {"{\"source\":\"x\",\"config\":\"frag.config\",\"patches\":[1]}", "$.patches[0]"},
	    {"{\"source\":\"x\",\"config\":\".\"}", "not a regular file"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *j = json_tokener_parse(bad[i].json);
		struct sl_error err = {0};
		struct kernel_spec *t = NULL;
		assert_true(kernel_spec_from_json(j, fx->dir, &t, &err) < 0);
		assert_null(t);
		if (!strstr(err.message, bad[i].want))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].json, err.message,
				 bad[i].want);
		json_object_put(j);
	}
}

/* kernel_series_read(): comments, blanks, CRs, -p1, and what it refuses. */
static void test_series_read(void **state)
{
	struct fixture *fx = *state;
	write_file(fx->dir, "s1", "  a.patch -p1\r\n\r\n# all of it\n\tb.patch\t# why\n");
	char *series = fs_path_join(fx->dir, "s1");
	char **v = NULL;
	struct sl_error err = {0};
	assert_int_equal(kernel_series_read(series, &v, &err), 0);
	assert_non_null(v[0]);
	assert_true(v[0][0] == '/');
	assert_non_null(strstr(v[0], "/a.patch"));
	assert_non_null(strstr(v[1], "/b.patch"));
	assert_null(v[2]);
	strv_free(v);
	free(series);

	/* the series the runner builds by default parses too */
	char *root = fs_data_dir();
	series = fs_path_join(root, "guest-kernel/linux-6.1/series");
	v = NULL;
	assert_int_equal(kernel_series_read(series, &v, &err), 0);
	size_t n = 0;
	while (v[n])
		n++;
	assert_true(n >= 1);
	strv_free(v);
	free(series);
	free(root);

	struct {
		const char *text, *want;
	} bad[] = {
	    {"a.patch -p0\n", "line 1 has an unsupported option '-p0'"},
	    {"a.patch\nnope.patch\n", "line 2: The file"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(fx->dir, "s2", bad[i].text);
		series = fs_path_join(fx->dir, "s2");
		v = NULL;
		assert_true(kernel_series_read(series, &v, &err) < 0);
		assert_null(v);
		if (!strstr(err.message, bad[i].want))
			fail_msg("message '%s' lacks '%s'", err.message, bad[i].want);
		free(series);
	}
	/* at most KBUILD_MAX_PATCHES */
	char *many = calloc(KBUILD_MAX_PATCHES + 1, 9);
	for (int i = 0; i <= KBUILD_MAX_PATCHES; i++)
		strcat(many, "a.patch\n");
	write_file(fx->dir, "s3", many);
	free(many);
	series = fs_path_join(fx->dir, "s3");
	assert_true(kernel_series_read(series, &v, &err) < 0);
	assert_int_equal(err.kind, ERR_TOO_LARGE);
	free(series);
}

static void test_bad_sources(void **state)
{
	struct fixture *fx = *state;
	const char *bad[] = {
	    "{\"source\":\"http://x\",\"config\":\"frag.config\"}",
	    "{\"source\":\"debian:bash\",\"config\":\"frag.config\"}",
	    "{\"source\":\"debian:linux-source-6.1/../x\",\"config\":\"frag.config\"}",
	    "{\"source\":\"git:/tmp@--upload-pack=x\",\"config\":\"frag.config\"}",
	    "{\"source\":\"tarball:/nonexistent/linux.tar.xz\",\"config\":\"frag.config\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kernel_spec *s = spec_from(fx, bad[i]);
		struct sl_error err = {0};
		char key[65];
		assert_true(kbuild_key_in(fx->cache, s, key, &err) < 0);
		assert_true(err.kind == ERR_INVALID || err.kind == ERR_NOT_FOUND);
		assert_string_equal(err.path, "$.source");
		kernel_spec_free(s);
	}
}

static void test_key_inputs(void **state)
{
	struct fixture *fx = *state;
	char k1[65], k2[65], k3[65];
	key_of(fx, SPEC("[\"a.patch\",\"b.patch\"]"), k1);
	assert_int_equal(strlen(k1), 64);
	key_of(fx, SPEC("[\"a.patch\",\"b.patch\"]"), k2);
	assert_string_equal(k1, k2);
	/* the series file lists the same patches in the same order */
	key_of(fx,
	       "{\"source\":\"tarball:linux.tar.xz\",\"series\":\"series\",\"config\":\"frag."
	       "config\"}",
	       k2);
	assert_string_equal(k1, k2);
	/* content-addressed: a renamed copy is the same kernel */
	key_of(fx, SPEC("[\"a-copy.patch\",\"b.patch\"]"), k2);
	assert_string_equal(k1, k2);

	/* order */
	key_of(fx, SPEC("[\"b.patch\",\"a.patch\"]"), k2);
	assert_string_not_equal(k1, k2);
	/* fewer patches */
	key_of(fx, SPEC("[\"a.patch\"]"), k2);
	assert_string_not_equal(k1, k2);
	key_of(fx, SPEC("[]"), k3);
	assert_string_not_equal(k2, k3);

	/* patch content */
	write_file(fx->dir, "b.patch", "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+e\n");
	key_of(fx, SPEC("[\"a.patch\",\"b.patch\"]"), k2);
	assert_string_not_equal(k1, k2);
	write_file(fx->dir, "b.patch", "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n");
	key_of(fx, SPEC("[\"a.patch\",\"b.patch\"]"), k2);
	assert_string_equal(k1, k2);

	/* config fragment content */
	write_file(fx->dir, "frag.config", "CONFIG_SMP=n\n");
	key_of(fx, SPEC("[\"a.patch\",\"b.patch\"]"), k2);
	assert_string_not_equal(k1, k2);
	write_file(fx->dir, "frag.config", "CONFIG_SMP=y # why\n");

	/* compiler */
	fx->compiler = "gcc (test) 2.0\n";
	key_of(fx, SPEC("[\"a.patch\",\"b.patch\"]"), k2);
	assert_string_not_equal(k1, k2);
	fx->compiler = "gcc (test) 1.0\nCopyright\n";

	/* source content: a new tarball at the same path (new size, new mtime) */
	write_file(fx->dir, "linux.tar.xz", "another tarball\n");
	key_of(fx, SPEC("[\"a.patch\",\"b.patch\"]"), k2);
	assert_string_not_equal(k1, k2);
	write_file(fx->dir, "linux.tar.xz", "not really a tarball, only hashed here\n");
	key_of(fx, SPEC("[\"a.patch\",\"b.patch\"]"), k2);
	assert_string_equal(k1, k2);
}

/* git sources: the key follows the commit the ref names, not the ref's name. */
static void test_git_source(void **state)
{
	struct fixture *fx = *state;
	/* git rev-parse (and gcc) really run here */
	free(cmd_dry_run_end());
	char cmd[1024];
	snprintf(
	    cmd, sizeof(cmd),
	    "set -e; cd %s && git init -q tree && cd tree && "
	    "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m one && "
	    "git tag v1 && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m two",
	    fx->dir);
	if (system(cmd) != 0)
		skip();
	char json[512], k_head[65], k_v1[65], k_again[65];
	snprintf(json, sizeof(json),
		 "{\"source\":\"git:%s/tree@HEAD\",\"patches\":[],\"config\":\"frag.config\"}",
		 fx->dir);
	key_of(fx, json, k_head);
	snprintf(json, sizeof(json),
		 "{\"source\":\"git:%s/tree@v1\",\"patches\":[],\"config\":\"frag.config\"}",
		 fx->dir);
	key_of(fx, json, k_v1);
	assert_string_not_equal(k_head, k_v1);
	snprintf(json, sizeof(json),
		 "{\"source\":\"git:%s/tree@HEAD~1\",\"patches\":[],\"config\":\"frag.config\"}",
		 fx->dir);
	key_of(fx, json, k_again);
	assert_string_equal(k_v1, k_again);

	snprintf(
	    json, sizeof(json),
	    "{\"source\":\"git:%s/tree@no-such-ref\",\"patches\":[],\"config\":\"frag.config\"}",
	    fx->dir);
	struct kernel_spec *s = spec_from(fx, json);
	struct sl_error err = {0};
	char key[65];
	assert_true(kbuild_key_in(fx->cache, s, key, &err) < 0);
	assert_int_equal(err.kind, ERR_NOT_FOUND);
	assert_non_null(strstr(err.message, "'no-such-ref'"));
	kernel_spec_free(s);
}

static struct kbuild_artifact *build(struct fixture *fx, const char *json,
				     unsigned long long max_bytes, int *ret_r)
{
	struct kernel_spec *s = spec_from(fx, json);
	struct kbuild_opts o = {.cache_dir = fx->cache,
				.jobs = 2,
				.log_fd = -1,
				.cache_max_bytes = max_bytes,
				.no_sandbox = fx->no_sandbox,
				.tree_slots = fx->tree_slots};
	struct kbuild_artifact *a = NULL;
	struct sl_error err = {0};
	int r = kbuild_build(&o, s, &a, &err);
	kernel_spec_free(s);
	if (ret_r)
		*ret_r = r;
	else if (r < 0)
		fail_msg("kbuild_build: %s", err.message);
	return a;
}

/* Replaces every occurrence of from in *text with to. */
static void replace_all(char **text, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to);
	char *out = calloc(1, strlen(*text) * (tl > fl ? tl / (fl ? fl : 1) + 2 : 1) + 1);
	char *o = out;
	for (const char *p = *text; *p;) {
		if (fl && strncmp(p, from, fl) == 0) {
			memcpy(o, to, tl);
			o += tl;
			p += fl;
		} else
			*o++ = *p++;
	}
	*o = '\0';
	free(*text);
	*text = out;
}

/* A recorded "bwrap OPTIONS -- [prlimit/setpriv ... --] CMD" line as
 * "sandbox(rw:A ro:B ...) cd DIR && CMD": the binds a step gets, whoever
 * runs the test (root's sandbox adds setpriv and an inner bwrap binding /
 * at /; util/sandbox.h), and the command. Other lines are kept. */
static void collapse_sandbox(char **text)
{
	size_t cap = strlen(*text) + 1;
	char *out = calloc(1, cap), *o = out;
	char *save = NULL;
	for (char *l = strtok_r(*text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *last = NULL;
		for (char *p = strstr(l, " -- "); p; p = strstr(p + 1, " -- "))
			last = p;
		if (strncmp(l, "bwrap ", 6) != 0 || !last) {
			o += sprintf(o, "%s\n", l);
			continue;
		}
		*last = '\0';
		char binds[1024] = "", dir[512] = "";
		char *tsave = NULL, *prev = NULL;
		for (char *t = strtok_r(l, " ", &tsave); t; t = strtok_r(NULL, " ", &tsave)) {
			if (prev && strcmp(prev, "--chdir") == 0)
				snprintf(dir, sizeof(dir), "%s", t);
			if (prev &&
			    (strcmp(prev, "--bind") == 0 || strcmp(prev, "--ro-bind") == 0) &&
			    strcmp(t, "/") != 0 && strstr(binds, t) == NULL)
				snprintf(binds + strlen(binds), sizeof(binds) - strlen(binds),
					 "%s%s:%s", binds[0] ? " " : "",
					 strcmp(prev, "--bind") == 0 ? "rw" : "ro", t);
			prev = t;
		}
		o += sprintf(o, "sandbox(%s) cd %s && %s\n", binds, dir, last + 4);
	}
	free(*text);
	*text = out;
	(void)cap;
}

/* Ends the dry run (and starts the next), compares what it recorded, with
 * the temporary paths replaced by @CACHE@, @TREE@ and @TMP@ and the
 * sandbox collapsed (collapse_sandbox), to tests/data/kbuild/<name>. */
static void assert_commands(struct fixture *fx, const char *name)
{
	char *text = cmd_dry_run_end();
	dry_run_begin(fx);
	char real[PATH_MAX];
	assert_non_null(realpath(fx->cache, real));
	replace_all(&text, real, "@CACHE@");
	char *trees = fs_path_join(real, "trees");
	DIR *d = opendir(trees);
	assert_non_null(d);
	for (struct dirent *de; (de = readdir(d));)
		if (strlen(de->d_name) == 16)
			replace_all(&text, de->d_name, "@TREE@");
	closedir(d);
	free(trees);
	assert_non_null(realpath(fx->dir, real));
	replace_all(&text, real, "@TMP@");
	collapse_sandbox(&text);

	char *root = fs_data_dir();
	char *dir = fs_path_join(root, "tests/data/kbuild");
	char *path = fs_path_join(dir, name);
	char *want = NULL;
	struct sl_error err = {0};
	if (getenv("SCHEDLAB_UPDATE_GOLDEN"))
		assert_int_equal(fs_write_file_atomic(path, text, strlen(text), &err), 0);
	if (fs_read_file(path, 1 << 20, &want, NULL, &err) < 0)
		fail_msg("%s (SCHEDLAB_UPDATE_GOLDEN=1 writes it)", err.message);
	if (strcmp(text, want) != 0)
		fail_msg("the commands differ from %s:\n%s", path, text);
	free(want);
	free(path);
	free(dir);
	free(root);
	free(text);
}

/* The command lines of a build, a rebuild that reverts one patch, a patch
 * whose dry run fails and a fragment option that Kconfig drops. */
static void test_build_commands(void **state)
{
	struct fixture *fx = *state;
	write_file(fx->dir, "frag.config", "CONFIG_SMP=y # why\n# CONFIG_HZ is not set\n");
	struct kbuild_artifact *a = build(fx, SPEC("[\"a.patch\",\"b.patch\"]"), 0, NULL);
	assert_false(a->cached);
	assert_int_equal(fx->builds, 1);
	char *cfg = NULL;
	struct sl_error err = {0};
	assert_int_equal(fs_read_file(a->config, 1 << 20, &cfg, NULL, &err), 0);
	assert_string_equal(cfg, "# CONFIG_KVM is not set\nCONFIG_SMP=y\n# CONFIG_HZ is not set\n");
	free(cfg);
	kbuild_artifact_free(a);
	/* both patches (dry run and real) and the three makes, not tar or gcc */
	assert_int_equal(fx->sandboxed, 7);
	assert_commands(fx, "build.cmds");

	/* b.patch is reverted from the tree, c.patch applied on a.patch */
	write_file(fx->dir, "c.patch", "--- a/z\n+++ b/z\n@@ -1 +1 @@\n-e\n+f\n");
	a = build(fx, SPEC("[\"a.patch\",\"c.patch\"]"), 0, NULL);
	assert_false(a->cached);
	kbuild_artifact_free(a);
	assert_commands(fx, "rebuild.cmds");

	/* a hunk fails: the build stops after the patch's dry run */
	fx->fail = true;
	int r = 0;
	a = build(fx, SPEC("[\"a.patch\",\"c.patch\",\"b.patch\"]"), 0, &r);
	assert_int_equal(r, -EINVAL);
	assert_null(a);
	assert_commands(fx, "patch-fails.cmds");
	fx->fail = false;

	/* Kconfig drops an option the fragment asks for */
	write_file(fx->dir, "frag.config", "CONFIG_SMP=y\nCONFIG_KVM_INTEL=y\n");
	fx->drop = "CONFIG_KVM_INTEL";
	struct kernel_spec *s = spec_from(fx, SPEC("[\"a.patch\"]"));
	struct kbuild_opts o = {.cache_dir = fx->cache, .jobs = 2, .log_fd = -1};
	r = kbuild_build(&o, s, &a, &err);
	kernel_spec_free(s);
	assert_true(r < 0);
	assert_string_equal(err.code, "config_option_dropped");
	assert_non_null(strstr(err.message, "config option 'CONFIG_KVM_INTEL=y' from 'frag.config' "
					    "was dropped by Kconfig"));
	assert_commands(fx, "config-dropped.cmds");
}

/* An untrusted spec makes in a copy of obj/ that is gone afterwards: obj/
 * is never bound into its sandbox, and what the build leaves (the fake
 * bzImage) does not reach obj/. A trusted spec makes in obj/ itself. */
static void test_untrusted_copy(void **state)
{
	struct fixture *fx = *state;
	write_file(fx->dir, "frag.config", "CONFIG_SMP=y\n");
	/* the untrusted spec's base (no series: no patches), so obj/ holds it */
	struct kbuild_artifact *a = build(fx, SPEC("[]"), 0, NULL);
	kbuild_artifact_free(a);
	assert_int_equal(fx->copies, 0);
	char *tree = NULL;
	char *trees = fs_path_join(fx->cache, "trees");
	DIR *d = opendir(trees);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.' && !strchr(e->d_name, '.'))
			tree = fs_path_join(trees, e->d_name);
	closedir(d);
	free(trees);
	assert_non_null(tree);
	char *obj = fs_path_join(tree, "obj");
	char *copy = fs_path_join(tree, "obj-untrusted");
	char *bz = fs_path_join(obj, "arch/x86/boot/bzImage");
	assert_true(fs_exists(bz)); /* the trusted build made in obj/ */
	fs_rm_rf(bz, NULL);
	write_file(obj, "trusted.o", "trusted object\n");
	free(cmd_dry_run_end());
	dry_run_begin(fx);

	a = build(fx,
		  "{\"source\":\"tarball:linux.tar.xz\",\"patches\":[\"b.patch\"],"
		  "\"config\":\"frag.config\",\"untrusted\":true}",
		  0, NULL);
	assert_false(a->cached);
	assert_true(fs_exists(a->bzimage));
	kbuild_artifact_free(a);
	assert_int_equal(fx->copies, 1);
	assert_int_equal(fx->builds, 2); /* the base was not built again */
	char *text = cmd_dry_run_end();
	char want[PATH_MAX * 2 + 64];
	snprintf(want, sizeof(want), "cp -a --reflink=auto %s %s", obj, copy);
	assert_non_null(strstr(text, want));
	/* make sees the copy at obj/'s path (the paths it recorded stay valid) */
	snprintf(want, sizeof(want), "--bind %s %s ", copy, obj);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "O=%s ", obj);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "O=%s ", copy);
	assert_null(strstr(text, want));
	snprintf(want, sizeof(want), "bind %s ", obj);
	assert_null(strstr(text, want)); /* obj/ itself is not in any sandbox */
	free(text);
	dry_run_begin(fx);
	assert_false(fs_exists(copy));
	assert_false(fs_exists(bz)); /* the untrusted build's output stayed in its copy */
	free(tree);
	free(obj);
	free(copy);
	free(bz);
}

/* The tree's trusted object directory and its marker. */
static void tree_obj(struct fixture *fx, char **ret_obj, char **ret_marker)
{
	char *trees = fs_path_join(fx->cache, "trees");
	DIR *d = opendir(trees);
	assert_non_null(d);
	char *tree = NULL;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.' && !strchr(e->d_name, '.'))
			tree = fs_path_join(trees, e->d_name);
	closedir(d);
	free(trees);
	assert_non_null(tree);
	*ret_obj = fs_path_join(tree, "obj");
	*ret_marker = fs_path_join(*ret_obj, ".schedlab-complete");
	free(tree);
}

static void assert_marker(const char *marker, const char *key)
{
	char *text = NULL;
	struct sl_error err = {0};
	if (!key) {
		assert_false(fs_exists(marker));
		return;
	}
	assert_int_equal(fs_read_file(marker, 1024, &text, NULL, &err), 0);
	char want[80];
	snprintf(want, sizeof(want), "%s\n", key);
	/* then the stamp of .config and vmlinux */
	assert_int_equal(strncmp(text, want, strlen(want)), 0);
	assert_non_null(strchr(text + strlen(want), ':'));
	free(text);
}

#define UNTRUSTED(patches)                                                                         \
	"{\"source\":\"tarball:linux.tar.xz\",\"patches\":" patches                                \
	",\"config\":\"frag.config\",\"untrusted\":true}"

/* obj/'s marker names the last trusted build that completed there: gone
 * while a build runs (never seen by make) and after a failed one, written
 * after a success. An untrusted build whose base (here: no patches) obj/
 * does not hold complete builds the base in obj/ first, then makes in its
 * copy; one whose base obj/ holds only copies. */
static void test_obj_marker(void **state)
{
	struct fixture *fx = *state;
	write_file(fx->dir, "frag.config", "CONFIG_SMP=y\n");
	struct kbuild_artifact *a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	char *obj = NULL, *marker = NULL;
	tree_obj(fx, &obj, &marker);
	assert_marker(marker, a->key);
	kbuild_artifact_free(a);

	/* a trusted build whose make fails (as one killed there) leaves none */
	fx->make_output = "";
	int r = 0;
	a = build(fx, SPEC("[\"b.patch\"]"), 0, &r);
	assert_true(r < 0);
	assert_marker(marker, NULL);
	fx->make_output = NULL;

	/* unmarked obj/: the base is built there first (trusted), then the copy */
	char base[65];
	key_of(fx, SPEC("[]"), base);
	fx->made_in[0] = '\0';
	int builds = fx->builds;
	a = build(fx, UNTRUSTED("[\"b.patch\"]"), 0, NULL);
	kbuild_artifact_free(a);
	assert_int_equal(fx->builds, builds + 2);
	assert_int_equal(fx->copies, 1);
	char *copy = NULL;
	assert_true(asprintf(&copy, "%s-untrusted", obj) > 0);
	char want[PATH_MAX * 2 + 4];
	snprintf(want, sizeof(want), "%s\n%s\n", obj, copy);
	assert_string_equal(fx->made_in, want);
	assert_marker(marker, base);

	/* marked with the base: only the copy is made */
	fx->made_in[0] = '\0';
	write_file(fx->dir, "d.patch", "--- a/w\n+++ b/w\n@@ -1 +1 @@\n-g\n+h\n");
	a = build(fx, UNTRUSTED("[\"d.patch\"]"), 0, NULL);
	kbuild_artifact_free(a);
	assert_int_equal(fx->builds, builds + 3);
	assert_int_equal(fx->copies, 2);
	snprintf(want, sizeof(want), "%s\n", copy);
	assert_string_equal(fx->made_in, want);
	assert_marker(marker, base);

	/* another complete trusted kernel in obj/ (or garbage): the base again */
	write_file(obj, ".schedlab-complete",
		   "0000000000000000000000000000000000000000000000000000000000000000\n");
	fx->made_in[0] = '\0';
	write_file(fx->dir, "c.patch", "--- a/z\n+++ b/z\n@@ -1 +1 @@\n-e\n+f\n");
	a = build(fx, UNTRUSTED("[\"c.patch\"]"), 0, NULL);
	snprintf(want, sizeof(want), "%s\n%s\n", obj, copy);
	assert_string_equal(fx->made_in, want);
	assert_marker(marker, base);
	/* a make that does not keep the marker (an older schedlab) changed
	 * .config after the marker was written: the base again */
	kbuild_artifact_free(a);
	char *dotconfig = fs_path_join(obj, ".config");
	struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
	assert_int_equal(utimensat(AT_FDCWD, dotconfig, ts, 0), 0);
	free(dotconfig);
	fx->made_in[0] = '\0';
	write_file(fx->dir, "e.patch", "--- a/v\n+++ b/v\n@@ -1 +1 @@\n-i\n+j\n");
	a = build(fx, UNTRUSTED("[\"e.patch\"]"), 0, NULL);
	assert_string_equal(fx->made_in, want);
	assert_marker(marker, base);
	assert_int_equal(fx->made_marked, 0); /* no make ever saw the marker */
	kbuild_artifact_free(a);
	free(copy);
	free(obj);
	free(marker);
}

/* --no-sandbox: the same steps, none of them in bwrap. */
/* The order in which a build tries a tree's work areas (kbuild_area.c). */
static void test_area_order(void **state)
{
	(void)state;
	size_t order[4];
	kbuild_area_order((int[]){-1, -1}, 2, order);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 1);
	/* most patches in common first, the lower index on a tie, new areas last */
	kbuild_area_order((int[]){0, 2, -1, 2}, 4, order);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 0);
	assert_int_equal(order[3], 2);
}

struct held_lock {
	int fd;
	useconds_t for_us;
};

static void *release_later(void *arg)
{
	struct held_lock *h = arg;
	usleep(h->for_us);
	close(h->fd);
	return NULL;
}

static char *read_text(const char *path)
{
	char *text = NULL;
	struct sl_error err = {0};
	assert_int_equal(fs_read_file(path, 1 << 20, &text, NULL, &err), 0);
	return text;
}

static int build_failing(struct fixture *fx, const char *json, struct kbuild_failure *f,
			 struct sl_error *err);

/* Builds of one tree at once (the prefixes of a series, built side by
 * side): with two slots, a build
 * that finds area 0 busy takes area 1, which is seeded from area 0 (once
 * area 0's build let it go) and whose sandboxed steps see it at area 0's
 * paths; a later build goes to the area holding most of its patches. One
 * slot (the default) never makes an area. */
static void test_work_areas(void **state)
{
	struct fixture *fx = *state;
	write_file(fx->dir, "frag.config", "CONFIG_SMP=y\n");
	fx->tree_slots = 2;
	struct kbuild_artifact *a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	char *obj = NULL, *marker = NULL;
	tree_obj(fx, &obj, &marker);
	char *tree = strdup(obj);
	*strrchr(tree, '/') = '\0';
	char *area1 = NULL, *lock0 = NULL, *src0 = NULL, *obj1 = NULL, *src1 = NULL;
	assert_true(asprintf(&area1, "%s.1", tree) > 0 && asprintf(&lock0, "%s.lock", tree) > 0 &&
		    asprintf(&src0, "%s/src", tree) > 0 && asprintf(&obj1, "%s/obj", area1) > 0 &&
		    asprintf(&src1, "%s/src", area1) > 0);
	assert_false(fs_exists(area1)); /* area 0 was free */
	kbuild_artifact_free(a);
	assert_int_equal(fx->seeds, 0);

	/* area 0 busy: the build takes area 1 and seeds it when area 0 is free */
	struct held_lock h = {.fd = open(lock0, O_RDWR | O_CLOEXEC), .for_us = 300 * 1000};
	assert_true(h.fd >= 0);
	assert_int_equal(flock(h.fd, LOCK_EX | LOCK_NB), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, release_later, &h), 0);
	free(cmd_dry_run_end());
	dry_run_begin(fx);
	fx->made_in[0] = '\0';
	a = build(fx, SPEC("[\"b.patch\"]"), 0, NULL);
	pthread_join(t, NULL);
	char *text = cmd_dry_run_end();
	dry_run_begin(fx);
	assert_int_equal(fx->seeds, 2); /* cp -al of src/, cp -a of the rest */
	char *mk1 = fs_path_join(src1, "Makefile");
	assert_true(fs_exists(mk1));
	free(mk1);
	/* make ran in area 1's obj/, which its sandbox showed at area 0's path */
	char want[PATH_MAX * 2 + 4];
	snprintf(want, sizeof(want), "%s\n", obj1);
	assert_string_equal(fx->made_in, want);
	snprintf(want, sizeof(want), "--bind %s %s", obj1, obj);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "--ro-bind %s %s", src1, src0);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "--chdir %s ", src0);
	assert_non_null(strstr(text, want));
	free(text);
	char *log = read_text(a->log);
	assert_non_null(strstr(log, "work area 1 of 2 of the tree"));
	assert_non_null(strstr(log, "seeded work area 1"));
	free(log);
	kbuild_artifact_free(a);
	char *list1 = fs_path_join(area1, "applied/list"), *list = read_text(list1);
	assert_int_equal(strlen(list), 65); /* b.patch only: a.patch was reverted */
	free(list);
	free(list1);

	/* both areas free: b then a goes to area 1 (it holds b) */
	a = build(fx, SPEC("[\"b.patch\", \"a.patch\"]"), 0, NULL);
	log = read_text(a->log);
	assert_non_null(strstr(log, "work area 1 of 2 of the tree (1 of its patches applied"));
	assert_null(strstr(log, "seeded"));
	free(log);
	kbuild_artifact_free(a);
	assert_int_equal(fx->seeds, 2);

	/* a compiler error in area 1 names the file as the tree has it, not by
	 * area 1's path (nor by area 0's, of which area 1's is a longer form) */
	struct kbuild_failure f = {0};
	struct sl_error err = {0};
	fx->make_output = "";
	write_file(fx->dir, "c.patch", "--- a/z\n+++ b/z\n@@ -1 +1 @@\n-e\n+f\n");
	assert_true(build_failing(fx, SPEC("[\"b.patch\", \"c.patch\"]"), &f, &err) < 0);
	fx->make_output = NULL;
	assert_non_null(strstr(err.message, "(make exit 2): kernel/sched/rt.c:12:2: error"));
	assert_null(strstr(err.message, "<tree>.1"));
	assert_null(strstr(f.log_excerpt, ".1/src"));
	assert_null(strstr(f.log_excerpt, "/trees/"));
	kbuild_failure_clear(&f);

	/* one slot: area 0 only, whatever area 1 holds */
	fx->tree_slots = 0;
	write_file(fx->dir, "b2.patch", "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+e\n");
	fx->made_in[0] = '\0';
	a = build(fx, SPEC("[\"b.patch\", \"b2.patch\"]"), 0, NULL);
	snprintf(want, sizeof(want), "%s\n", obj);
	assert_string_equal(fx->made_in, want);
	log = read_text(a->log);
	assert_null(strstr(log, "work area"));
	free(log);
	kbuild_artifact_free(a);
	free(area1);
	free(lock0);
	free(src0);
	free(obj1);
	free(src1);
	free(tree);
	free(obj);
	free(marker);
}

static void test_no_sandbox(void **state)
{
	struct fixture *fx = *state;
	write_file(fx->dir, "frag.config", "CONFIG_SMP=y\n");
	fx->no_sandbox = true;
	struct kbuild_artifact *a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_false(a->cached);
	kbuild_artifact_free(a);
	assert_int_equal(fx->sandboxed, 0);
	char *text = cmd_dry_run_end();
	assert_null(strstr(text, "bwrap"));
	assert_non_null(strstr(text, "patch -p1 --dry-run"));
	assert_non_null(strstr(text, "bzImage"));
	free(text);
	dry_run_begin(fx);
}

/* A failure's excerpt is valid UTF-8 without control bytes but newline and
 * tab, at most KBUILD_EXCERPT_MAX bytes, and whole lines where it can be. */
static void assert_clean_excerpt(const char *x)
{
	assert_non_null(x);
	size_t n = strlen(x);
	assert_true(n > 0 && n <= KBUILD_EXCERPT_MAX);
	assert_true(utf8_valid(x, n, NULL));
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)x[i];
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			fail_msg("control byte 0x%02x at %zu in the excerpt", c, i);
	}
}

static int build_failing(struct fixture *fx, const char *json, struct kbuild_failure *f,
			 struct sl_error *err)
{
	struct kernel_spec *s = spec_from(fx, json);
	struct kbuild_opts o = {.cache_dir = fx->cache,
				.jobs = 2,
				.log_fd = -1,
				.failure = f,
				.tree_slots = fx->tree_slots};
	struct kbuild_artifact *a = NULL;
	int r = kbuild_build(&o, s, &a, err);
	kernel_spec_free(s);
	assert_null(a);
	return r;
}

/* What a failed build reports: the status in err.code, the patch or the
 * option, and a sanitized excerpt of the failing step's output. */
static void test_failure_report(void **state)
{
	struct fixture *fx = *state;
	struct kbuild_failure f = {0};
	struct sl_error err = {0};

	/* patch(1)'s output is untrusted: a bad byte, an escape, a CR */
	fx->fail = true;
	fx->patch_output = "checking file kernel/sched/r\xfft.c\r\n"
			   "Hunk #1 FAILED at 1925.\n"
			   "\x1b[31m1 out of 1 hunk FAILED\x1b[0m\n";
	assert_true(build_failing(fx, SPEC("[\"b.patch\"]"), &f, &err) < 0);
	assert_int_equal(err.kind, ERR_BUILD);
	assert_string_equal(err.code, "patch_does_not_apply");
	assert_string_equal(f.patch, "b.patch");
	assert_string_equal(f.option, "");
	assert_int_equal(strlen(f.key), 64);
	assert_clean_excerpt(f.log_excerpt);
	assert_non_null(strstr(f.log_excerpt, "Hunk #1 FAILED at 1925."));
	assert_non_null(strstr(f.log_excerpt, "r\xef\xbf\xbdt.c"));
	assert_non_null(strstr(f.log_excerpt, "patch 1/1 'b.patch' does not apply"));
	/* the message quotes the file name patch(1) printed: sanitized too */
	assert_true(utf8_valid(err.message, strlen(err.message), NULL));
	assert_non_null(strstr(err.message, "hunk #1 FAILED at line 1925"));
	kbuild_failure_clear(&f);
	assert_null(f.log_excerpt);
	fx->fail = false;
	fx->patch_output = NULL;

	/* make fails after pages of output: the last lines, whole */
	size_t cap = 64 * 1024;
	char *out = calloc(1, cap);
	for (int i = 0; strlen(out) < 20000; i++) {
		size_t l = strlen(out);
		snprintf(out + l, cap - l, "  CC      kernel/obj%d.o\n", i);
	}
	fx->make_output = out;
	memset(&err, 0, sizeof(err));
	assert_true(build_failing(fx, SPEC("[\"a.patch\"]"), &f, &err) < 0);
	assert_string_equal(err.code, "build_failed");
	assert_non_null(strstr(err.message,
			       "): kernel/sched/rt.c:12:2: error: #error planted build "
			       "failure"));
	assert_string_equal(f.patch, "");
	assert_clean_excerpt(f.log_excerpt);
	assert_true(strlen(f.log_excerpt) > KBUILD_EXCERPT_MAX - 100);
	assert_true(strncmp(f.log_excerpt, "  CC      kernel/obj", 20) == 0);
	assert_non_null(strstr(f.log_excerpt,
			       "\nkernel/sched/rt.c:12:2: error: #error planted build "
			       "failure\n"));
	/* the shared tree's path is taken out: it is this host's, not the patch's */
	assert_null(strstr(f.log_excerpt, "/trees/"));
	assert_non_null(strstr(f.log_excerpt, "Entering directory '<tree>/src'"));
	assert_non_null(strstr(f.log_excerpt, "Error 2"));
	/* nothing of the steps before make */
	assert_null(strstr(f.log_excerpt, "olddefconfig"));
	kbuild_failure_clear(&f);

	/* a parallel make compiles on after the error: pages of it push the
	 * error out of the tail, and the excerpt puts it back first */
	fx->make_output = "";
	fx->make_after = out;
	memset(&err, 0, sizeof(err));
	assert_true(build_failing(fx, SPEC("[\"a.patch\"]"), &f, &err) < 0);
	assert_clean_excerpt(f.log_excerpt);
	assert_true(strlen(f.log_excerpt) <= KBUILD_EXCERPT_MAX);
	assert_true(strncmp(f.log_excerpt,
			    "kernel/sched/rt.c:12:2: error: #error planted build "
			    "failure\n",
			    60) == 0);
	assert_non_null(strstr(f.log_excerpt, "\n...\n  CC      kernel/obj"));
	assert_non_null(strstr(f.log_excerpt, "Error 2"));
	kbuild_failure_clear(&f);
	fx->make_after = NULL;
	fx->make_output = NULL;
	free(out);

	/* Kconfig drops an option: its name, and the lines that said so */
	write_file(fx->dir, "frag.config", "CONFIG_SMP=y\nCONFIG_KVM_INTEL=y\nCONFIG_KVM=y\n");
	fx->drop = "CONFIG_KVM";
	memset(&err, 0, sizeof(err));
	assert_true(build_failing(fx, SPEC("[\"a.patch\"]"), &f, &err) < 0);
	assert_string_equal(err.code, "config_option_dropped");
	assert_string_equal(f.option, "CONFIG_KVM_INTEL");
	assert_clean_excerpt(f.log_excerpt);
	assert_non_null(strstr(f.log_excerpt, "'CONFIG_KVM_INTEL=y'"));
	assert_non_null(strstr(f.log_excerpt, "'CONFIG_KVM=y'"));
	kbuild_failure_clear(&f);
	kbuild_failure_clear(NULL);

	/* a failure with no failure struct asked for still has its code */
	memset(&err, 0, sizeof(err));
	assert_true(build_failing(fx, SPEC("[\"a.patch\"]"), NULL, &err) < 0);
	assert_string_equal(err.code, "config_option_dropped");
}

/* A debug preset (kernel_spec.h): its fragment beside the config, merged
 * after it (its options win), checked like it, in the key only when set,
 * built in objs-debug/NAME, recorded in meta.json. */
#define DEBUG_SPEC                                                                                 \
	"{\"source\":\"tarball:linux.tar.xz\",\"patches\":[\"a.patch\"],\"config\":\"frag."        \
	"config\",\"debug\":\"lockdep\"}"
static void test_debug_preset(void **state)
{
	struct fixture *fx = *state;
	write_file(fx->dir, "debug-lockdep.config",
		   "CONFIG_BUG=y # why\n# CONFIG_SMP is not set\n");
	struct kernel_spec *s = spec_from(fx, DEBUG_SPEC);
	assert_string_equal(s->debug, "lockdep");
	assert_non_null(strstr(s->debug_config, "/debug-lockdep.config"));
	kernel_spec_free(s);

	char normal[65], debug[65], k[65];
	key_of(fx, SPEC("[\"a.patch\"]"), normal);
	key_of(fx, DEBUG_SPEC, debug);
	assert_string_not_equal(normal, debug);
	write_file(fx->dir, "debug-lockdep.config", "CONFIG_BUG=y\n");
	key_of(fx, DEBUG_SPEC, k);
	assert_string_not_equal(k, debug); /* the preset's content is in the key */
	key_of(fx, SPEC("[\"a.patch\"]"), k);
	assert_string_equal(k, normal); /* ...and only in a debug kernel's */

	write_file(fx->dir, "debug-lockdep.config",
		   "CONFIG_BUG=y # why\n# CONFIG_SMP is not set\n");
	struct kbuild_artifact *a = build(fx, DEBUG_SPEC, 0, NULL);
	char *cfg = NULL;
	struct sl_error err = {0};
	assert_int_equal(fs_read_file(a->config, 1 << 20, &cfg, NULL, &err), 0);
	/* frag.config's CONFIG_SMP=y replaced in place by the preset's "not set" */
	assert_string_equal(cfg, "# CONFIG_KVM is not set\nCONFIG_HZ=250\n# CONFIG_SMP is not "
				 "set\nCONFIG_BUG=y\n");
	free(cfg);
	json_object *v;
	assert_true(json_object_object_get_ex(a->meta, "debug", &v));
	assert_string_equal(json_object_get_string(v), "lockdep");
	assert_true(json_object_object_get_ex(a->meta, "debug_config_sha256", &v));
	kbuild_artifact_free(a);
	/* its own object directory: the normal one is never reconfigured */
	char *trees = fs_path_join(fx->cache, "trees");
	bool found = false;
	DIR *d = opendir(trees);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		char *p = NULL;
		assert_true(asprintf(&p, "%s/%s/objs-debug/lockdep/.config", trees, e->d_name) > 0);
		found |= fs_exists(p);
		free(p);
	}
	closedir(d);
	free(trees);
	assert_true(found);

	/* An option of the preset Kconfig drops is named with the preset's file. */
	write_file(fx->dir, "debug-lockdep.config", "CONFIG_BUG=y\nCONFIG_KVM_INTEL=y\n");
	fx->drop = "CONFIG_KVM_INTEL";
	s = spec_from(fx, DEBUG_SPEC);
	struct kbuild_opts o = {.cache_dir = fx->cache, .jobs = 2, .log_fd = -1};
	memset(&err, 0, sizeof(err));
	a = NULL;
	assert_true(kbuild_build(&o, s, &a, &err) < 0);
	kernel_spec_free(s);
	assert_null(a);
	assert_string_equal(err.code, "config_option_dropped");
	assert_non_null(strstr(err.message, "'CONFIG_KVM_INTEL=y' from 'debug-lockdep.config'"));
	fx->drop = NULL;

	/* refused: a bad name, a missing fragment, a fragment without a name */
	const struct {
		const char *json, *want;
	} bad[] = {
	    {"{\"source\":\"x\",\"config\":\"frag.config\",\"debug\":\"Lock dep\"}", "lowercase"},
	    {"{\"source\":\"x\",\"config\":\"frag.config\",\"debug\":\"kasan\"}",
	     "debug-kasan.config"},
	    {"{\"source\":\"x\",\"config\":\"frag.config\",\"debug_config\":\"frag.config\"}",
	     "no 'debug' name"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *j = json_tokener_parse(bad[i].json);
		struct kernel_spec *t = NULL;
		memset(&err, 0, sizeof(err));
		assert_true(kernel_spec_from_json(j, fx->dir, &t, &err) < 0);
		if (!strstr(err.message, bad[i].want))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].json, err.message,
				 bad[i].want);
		json_object_put(j);
	}
}

static void test_hit_and_miss(void **state)
{
	struct fixture *fx = *state;
	struct kbuild_artifact *a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_int_equal(fx->builds, 1);
	assert_false(a->cached);
	assert_true(fs_exists(a->bzimage));
	assert_true(fs_exists(a->config));
	assert_true(fs_exists(a->log));
	assert_true(fs_exists(a->meta_path));
	assert_non_null(strstr(a->dir, a->key));
	json_object *v;
	assert_true(json_object_object_get_ex(a->meta, "key", &v));
	assert_string_equal(json_object_get_string(v), a->key);
	assert_true(json_object_object_get_ex(a->meta, "compiler", &v));
	assert_string_equal(json_object_get_string(v), "gcc (test) 1.0");
	assert_true(json_object_object_get_ex(a->meta, "source_version", &v));
	assert_string_equal(json_object_get_string(v), "6.1.99");
	assert_true(json_object_object_get_ex(a->meta, "patches", &v));
	assert_int_equal(json_object_array_length(v), 1);
	json_object *p0 = json_object_array_get_idx(v, 0), *name;
	assert_true(json_object_object_get_ex(p0, "name", &name));
	assert_string_equal(json_object_get_string(name), "a.patch");
	char key[65];
	snprintf(key, sizeof(key), "%s", a->key);
	kbuild_artifact_free(a);

	a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_int_equal(fx->builds, 1);
	assert_true(a->cached);
	assert_string_equal(a->key, key);
	kbuild_artifact_free(a);

	a = build(fx, SPEC("[\"a.patch\",\"b.patch\"]"), 0, NULL);
	assert_int_equal(fx->builds, 2);
	assert_false(a->cached);
	assert_string_not_equal(a->key, key);
	kbuild_artifact_free(a);
	kbuild_artifact_free(NULL);
}

/* A config with SCHED_CLASS_EXT: tools/sched_ext is built after bzImage in
 * the sandbox against the tree's vmlinux, the loaders land in the entry's
 * sched_ext/; an entry without them (an older schedlab's) is a miss that gets
 * them added, its kernel kept (docs/sched-ext.md). */
static void test_sched_ext_schedulers(void **state)
{
	struct fixture *fx = *state;
	struct kbuild_artifact *a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_int_equal(fx->scx_builds, 0);
	_cleanup_free_ char *none = fs_path_join(a->dir, KBUILD_SCX_DIR);
	assert_false(fs_exists(none));
	kbuild_artifact_free(a);

	write_file(fx->dir, "frag.config",
		   "CONFIG_SMP=y\nCONFIG_NET=y\nCONFIG_SCHED_CLASS_EXT=y\n");
	a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_int_equal(fx->scx_builds, 1);
	assert_true(kbuild_config_has_scx(a->config));
	assert_non_null(strstr(fx->scx_cmd, "/tools/sched_ext O="));
	assert_non_null(strstr(fx->scx_cmd, "/obj/vmlinux"));
	assert_non_null(strstr(fx->scx_cmd, " CLANG=clang-16"));
	_cleanup_free_ char *scx = fs_path_join(a->dir, KBUILD_SCX_DIR);
	for (const char *const *n = sched_ext_schedulers(); *n; n++) {
		_cleanup_free_ char *p = fs_path_join(scx, *n);
		struct stat st;
		assert_int_equal(stat(p, &st), 0);
		assert_true(st.st_mode & 0100);
	}
	kbuild_artifact_free(a);
	a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_true(a->cached);
	assert_int_equal(fx->scx_builds, 1);
	struct sl_error err = {0};
	assert_int_equal(fs_rm_rf(scx, &err), 0);
	write_file(a->dir, "bzImage", "the kernel another job may be booting");
	kbuild_artifact_free(a);
	a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_false(a->cached);
	assert_int_equal(fx->scx_builds, 2);
	assert_true(fs_exists(scx));
	char *bz = NULL;
	assert_int_equal(fs_read_file(a->bzimage, 1 << 20, &bz, NULL, &err), 0);
	assert_string_equal(bz, "the kernel another job may be booting");
	free(bz);
	kbuild_artifact_free(a);

	/* without NET (or BPF_EVENTS) libbpf cannot load anything: no build, a reason */
	write_file(fx->dir, "frag.config", "CONFIG_SCHED_CLASS_EXT=y\n");
	a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_int_equal(fx->scx_builds, 2);
	_cleanup_free_ char *nodir = fs_path_join(a->dir, KBUILD_SCX_DIR);
	_cleanup_free_ char *nonet = fs_path_join(nodir, KBUILD_SCX_FAILED);
	char *text = NULL;
	assert_int_equal(fs_read_file(nonet, 1 << 20, &text, NULL, &err), 0);
	assert_non_null(strstr(text, "neither CONFIG_NET nor CONFIG_BPF_EVENTS"));
	free(text);
	kbuild_artifact_free(a);

	/* schedulers that do not build leave a good kernel and say why */
	fx->scx_fail = true;
	write_file(fx->dir, "frag.config", "CONFIG_NET=y\nCONFIG_SCHED_CLASS_EXT=y\n");
	a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_int_equal(fx->scx_builds, 3);
	assert_true(fs_exists(a->bzimage));
	_cleanup_free_ char *dir = fs_path_join(a->dir, KBUILD_SCX_DIR);
	_cleanup_free_ char *failed = fs_path_join(dir, KBUILD_SCX_FAILED);
	char *why = NULL;
	assert_int_equal(fs_read_file(failed, 1 << 20, &why, NULL, &err), 0);
	assert_non_null(strstr(why, "did not build (make exit 2)"));
	free(why);
	kbuild_artifact_free(a);
	a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_true(a->cached);
	assert_int_equal(fx->scx_builds, 3);
	kbuild_artifact_free(a);
}

/* A kernel cached before meta.json kept the sched name lists gets them on
 * its next hit from its tree (which holds exactly its patches), written into
 * meta.json so later hits read nothing more (kbuild.c, names_backfill()). */
static void test_names_backfill(void **state)
{
	struct fixture *fx = *state;
	struct kbuild_artifact *a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_false(json_object_object_get_ex(a->meta, "sched_features", NULL));
	kbuild_artifact_free(a);
	/* the fixture's source has no kernel/sched/: give its tree one */
	_cleanup_free_ char *trees = fs_path_join(fx->cache, "trees");
	DIR *d = opendir(trees);
	assert_non_null(d);
	char tree_src[PATH_MAX] = "";
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.' && !strstr(e->d_name, ".lock"))
			snprintf(tree_src, sizeof(tree_src), "%s/%s/src", trees, e->d_name);
	closedir(d);
	assert_true(tree_src[0]);
	_cleanup_free_ char *sched = fs_path_join(tree_src, "kernel/sched");
	struct sl_error err = {0};
	assert_int_equal(fs_mkdir_p(sched, &err), 0);
	write_file(sched, "features.h", "SCHED_FEAT(PLACE_LAG, true)\n");

	a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
	assert_true(a->cached);
	json_object *arr = NULL;
	assert_true(json_object_object_get_ex(a->meta, "sched_features", &arr));
	assert_string_equal(json_object_get_string(json_object_array_get_idx(arr, 0)), "PLACE_LAG");
	char *text = NULL;
	assert_int_equal(fs_read_file(a->meta_path, 1 << 20, &text, NULL, &err), 0);
	assert_non_null(strstr(text, "PLACE_LAG"));
	free(text);
	kbuild_artifact_free(a);
	assert_int_equal(fx->builds, 1);
}

static void test_failure_is_not_cached(void **state)
{
	struct fixture *fx = *state;
	fx->fail = true;
	int r = 0;
	struct kbuild_artifact *a = build(fx, SPEC("[\"b.patch\"]"), 0, &r);
	assert_int_equal(r, -EINVAL);
	assert_null(a);
	assert_int_equal(fx->builds, 0);
	/* no half artifact; the log of the failure is kept for people */
	char key[65];
	key_of(fx, SPEC("[\"b.patch\"]"), key);
	char *kernels = fs_path_join(fx->cache, "kernels");
	char *dir = fs_path_join(kernels, key);
	char *failed = NULL, *tmp = NULL;
	assert_true(asprintf(&failed, "%s.failed.log", dir) > 0);
	assert_true(asprintf(&tmp, "%s.tmp", dir) > 0);
	assert_false(fs_exists(dir));
	assert_false(fs_exists(tmp));
	assert_true(fs_exists(failed));
	/* the next request tries again, and a success clears the failure log */
	char *log = NULL;
	struct sl_error err = {0};
	assert_int_equal(fs_read_file(failed, 1 << 20, &log, NULL, &err), 0);
	assert_non_null(strstr(log, "patch 1/1 'b.patch' does not apply: file 'kernel/sched/rt.c' "
				    "hunk #2 FAILED at line 1234."));
	free(log);
	fx->fail = false;
	a = build(fx, SPEC("[\"b.patch\"]"), 0, NULL);
	assert_int_equal(fx->builds, 1);
	assert_false(a->cached);
	assert_false(fs_exists(failed));
	kbuild_artifact_free(a);
	free(kernels);
	free(dir);
	free(failed);
	free(tmp);
}

static void test_eviction_lru(void **state)
{
	struct fixture *fx = *state;
	fx->bzimage_bytes = 100 * 1024;
	/* each artifact is a bit over 100 KiB on disk; the bound holds two */
	unsigned long long max = 260 * 1024;
	struct kbuild_artifact *a = build(fx, SPEC("[\"a.patch\"]"), max, NULL);
	char ka[65];
	snprintf(ka, sizeof(ka), "%s", a->key);
	char *da = strdup(a->dir);
	kbuild_artifact_free(a);
	sleep(1); /* last-used stamps have 1 s resolution in the sort */
	struct kbuild_artifact *b = build(fx, SPEC("[\"b.patch\"]"), max, NULL);
	char *db = strdup(b->dir);
	kbuild_artifact_free(b);
	sleep(1);
	/* using a makes b the least recently used */
	a = build(fx, SPEC("[\"a.patch\"]"), max, NULL);
	assert_true(a->cached);
	kbuild_artifact_free(a);
	sleep(1);
	struct kbuild_artifact *c = build(fx, SPEC("[\"a.patch\",\"b.patch\"]"), max, NULL);
	assert_false(c->cached);
	assert_true(fs_exists(c->bzimage)); /* never the one just built */
	assert_true(fs_exists(da));
	assert_false(fs_exists(db));
	kbuild_artifact_free(c);
	int builds = fx->builds;
	b = build(fx, SPEC("[\"b.patch\"]"), max, NULL);
	assert_false(b->cached);
	assert_int_equal(fx->builds, builds + 1);
	kbuild_artifact_free(b);
	free(da);
	free(db);
}

/* A build whose make leaves a FIFO or a symlink to a device as its
 * bzImage fails at once, naming the file and the reason, and caches
 * nothing. It runs in a child with an alarm: a host that opens the FIFO
 * blocks (the build's lock and slot with it), and the alarm turns that
 * into a failure instead of a hung suite. */
static void test_bzimage_not_regular(void **state)
{
	struct fixture *fx = *state;
	const char kinds[] = {'f', 'z'};
	for (size_t i = 0; i < sizeof(kinds); i++) {
		fx->bzimage_kind = kinds[i];
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			alarm(20);
			struct kbuild_failure f = {0};
			struct sl_error err = {0};
			int r = build_failing(fx, SPEC("[\"a.patch\"]"), &f, &err);
			bool ok =
			    r < 0 && err.kind == ERR_BUILD &&
			    strstr(err.message, "arch/x86/boot/bzImage") &&
			    strstr(err.message, kinds[i] == 'f' ? "not a regular file (a FIFO)"
								: "symbolic link");
			if (!ok)
				fprintf(stderr, "kbuild_build: r=%d '%s'\n", r, err.message);
			kbuild_failure_clear(&f);
			_exit(ok ? 0 : 1);
		}
		int status = 0;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFSIGNALED(status))
			fail_msg("the build with a '%c' bzImage blocked until SIGALRM", kinds[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		/* nothing cached: the next build with a real image builds */
		fx->bzimage_kind = 0;
		int builds = fx->builds;
		struct kbuild_artifact *a = build(fx, SPEC("[\"a.patch\"]"), 0, NULL);
		assert_false(a->cached);
		assert_int_equal(fx->builds, builds + 1);
		kbuild_artifact_free(a);
		char *kernels = fs_path_join(fx->cache, "kernels");
		struct sl_error err = {0};
		assert_int_equal(fs_rm_rf(kernels, &err), 0);
		free(kernels);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_spec_parse, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_series_read, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_sources, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_key_inputs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_git_source, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_build_commands, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failure_report, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_sandbox, setup, teardown),
	    cmocka_unit_test(test_area_order),
	    cmocka_unit_test_setup_teardown(test_work_areas, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_untrusted_copy, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_obj_marker, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_debug_preset, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hit_and_miss, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sched_ext_schedulers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_names_backfill, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failure_is_not_cached, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_eviction_lru, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bzimage_not_regular, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
