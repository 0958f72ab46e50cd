# schedlab: plain Make. Every service/*.c (but main.c) goes into one library
# that the CLI and the unit tests link; each workloads/*.c is a static guest
# binary; each tests/unit/test_*.c is a cmocka program built with ASan+UBSan.
#   make            build everything into build/
#   make demo       set up the machine and run the seed reproduction
#   make check      set up the machine and run every test
#   make check-unit the fast inner loop: unit tests only
#   make check-host every test that boots no guest (unit + host-tier e2e)
#   make check-container  the Dockerfile, built and run with podman
#   make fuzz       build the libFuzzer targets (clang) and run each briefly
#   make SANITIZER=address   an ASan/UBSan build of everything

BUILD    ?= build
CC       ?= cc
PKGS     := json-c libvirt libmicrohttpd sqlite3 libarchive gsl libcrypto libcurl libpcre2-8 libseccomp
WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes -Werror
CFLAGS   ?= -O2 -g
GUEST_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -Iservice -Iworkloads
BASE_CFLAGS := $(GUEST_CFLAGS) -MMD -MP
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm
ifeq ($(SANITIZER),address)
  SAN := -fsanitize=address,undefined -fno-omit-frame-pointer
endif
TEST_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer

LIB_SRCS   := $(filter-out service/main.c,$(wildcard service/*/*.c)) $(wildcard workloads/proto/*.c)
LIB_SRCS   := $(sort $(wildcard $(LIB_SRCS)))
LIB_OBJS   := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
TLIB_OBJS  := $(patsubst %.c,$(BUILD)/tobj/%.o,$(LIB_SRCS))
AGENT_SRCS := $(wildcard workloads/agent/*.c) $(wildcard workloads/proto/*.c)
WL_SRCS    := $(wildcard workloads/*.c)
WL_BINS    := $(patsubst workloads/%.c,$(BUILD)/workloads/%,$(WL_SRCS))
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
UNIT_HELPERS := $(wildcard tests/unit/helpers/*.c)
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

.PHONY: all setup demo check check-unit check-e2e clean format lint
all: $(BUILD)/schedlab $(BUILD)/agent $(WL_BINS) $(BENCH_BINS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(SAN) -c $< -o $@
$(BUILD)/tobj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) -O1 -g $(TEST_SAN) -c $< -o $@

$(BUILD)/libschedlab.a: $(LIB_OBJS)
	@rm -f $@; ar rcs $@ $^
$(BUILD)/libschedlab-test.a: $(TLIB_OBJS)
	@rm -f $@; ar rcs $@ $^

# Objects, not the archive: main.c refers to subcommands weakly, and a weak
# reference does not pull a member out of an archive.
$(BUILD)/schedlab: $(BUILD)/obj/service/main.o $(LIB_OBJS)
	$(CC) $(CFLAGS) $(SAN) -o $@ $^ $(PKG_LIBS)

# Benchmark helpers (bench/*.c, run by their bench/*.sh), linked like the CLI.
$(BUILD)/bench/%: bench/%.c $(BUILD)/libschedlab.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(SAN) -o $@ $< $(BUILD)/libschedlab.a $(PKG_LIBS)

# Guest binaries are static: the initramfs carries no libc for them.
$(BUILD)/agent: $(AGENT_SRCS) $(wildcard workloads/agent/*.h workloads/proto/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) $(shell pkg-config --cflags json-c) -O2 -g -static -o $@ $(AGENT_SRCS) $(shell pkg-config --libs json-c) -lpthread
$(BUILD)/workloads/%: workloads/%.c $(wildcard workloads/*.h) $(wildcard workloads/proto/*.c)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) $(shell pkg-config --cflags json-c) -O2 -g -static -o $@ $< $(wildcard workloads/lib/*.c workloads/proto/*.c) $(shell pkg-config --libs json-c) -lpthread -lm

$(BUILD)/tests/%: tests/unit/%.c $(UNIT_HELPERS) $(BUILD)/libschedlab-test.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) -Itests/unit -O1 -g $(TEST_SAN) -o $@ $< $(UNIT_HELPERS) $(BUILD)/libschedlab-test.a $(PKG_LIBS) -lcmocka

# libFuzzer targets (tests/fuzz/, docs/fuzzing.md): the library is rebuilt
# with clang and coverage instrumentation into build/fobj.
FUZZ_CC    ?= clang
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_OBJS  := $(patsubst %.c,$(BUILD)/fobj/%.o,$(LIB_SRCS))
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
$(BUILD)/fobj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASE_CFLAGS) $(PKG_CFLAGS) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c $< -o $@
$(BUILD)/libschedlab-fuzz.a: $(FUZZ_OBJS)
	@rm -f $@; ar rcs $@ $^
$(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/libschedlab-fuzz.a
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASE_CFLAGS) $(PKG_CFLAGS) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(BUILD)/libschedlab-fuzz.a $(PKG_LIBS)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)
fuzz: fuzz-build
	@tests/fuzz/run.sh

setup:
	@scripts/setup.sh

demo: setup
	@$(MAKE) --no-print-directory all
	@rc=0; $(BUILD)/schedlab run examples/seed-reproduction.json -o $(BUILD)/demo-result.json \
	  --report $(BUILD)/demo-report.html --junit $(BUILD)/demo-junit.xml || rc=$$?; \
	  echo "result: $(BUILD)/demo-result.json  report: $(BUILD)/demo-report.html (exit $$rc)"; \
	  [ $$rc -ne 2 ]

check-unit:
	@scripts/setup.sh --with-tests --packages-only
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@tests/tools/check-layers.py
	@tests/run.sh --unit

# Every test that boots no guest: the unit programs and the e2e scripts
# marked "# tier: host" (docs/testing.md).
.PHONY: check-host
check-host:
	@scripts/setup.sh --with-tests
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@tests/tools/check-layers.py
	@tests/run.sh --host

check-e2e: all
	@tests/run.sh --e2e

check:
	@scripts/setup.sh --with-tests
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@SCHEDLAB_E2E_STRICT=1 tests/run.sh --all

# The container, built and run for real with podman (tests/e2e/80-container.sh).
.PHONY: check-container
check-container: all
	@tests/run.sh --e2e 80-container

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# cppcheck does not model __attribute__((cleanup)) on a struct pointer
# (kbuild_artifact_freep) and reports each early return as a leak; LSan in the
# unit tests and fuzz targets checks those paths for real.
lint: $(BUILD)/schedlab
	@tests/tools/check-sizes.py
	@tests/tools/check-flake-rates.py
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
	  --suppress=memleak:service/kernel/kbuild.c --suppress=memleak:service/kernel/kbuild_cache.c -Iservice -Iworkloads service workloads

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
