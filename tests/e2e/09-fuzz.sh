#!/usr/bin/env bash
# The untrusted-input parsers under libFuzzer with ASan and UBSan: the serial
# frame parser, the console event scanner, the workload output parsers and job
# validation (tests/fuzz/, docs/fuzzing.md). Builds the targets with clang and
# runs each for FUZZ_SECONDS (default 30); any crash, sanitizer report, failed
# invariant, leak or 10 s hang fails the test and leaves the input in
# build/fuzz/artifacts/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT"
e2e_need clang
[ -n "$(find /usr/lib/llvm-* -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null)" ] ||
	e2e_skip "needs libclang_rt.fuzzer (Debian's libclang-rt-14-dev)"
make --no-print-directory -j"$(nproc)" fuzz-build >/dev/null
tests/fuzz/run.sh "${FUZZ_SECONDS:-30}"
