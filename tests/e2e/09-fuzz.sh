#!/usr/bin/env bash
# tier: host
# The untrusted-input parsers under libFuzzer with ASan and UBSan: the serial
# frame parser, the console event scanner, the workload output parsers and job
# validation (tests/fuzz/, docs/fuzzing.md). Builds the targets with clang and
# runs each briefly, a smoke run that replays the committed reproducers and
# the seeds: FUZZ_SECONDS (default 5); the targets of a guest's frames
# through the run record, the ELF reader, the multipart form, the config and
# patch-output parsers and the sched names FUZZ_SHORT_SECONDS (default 3).
# The long runs (30 s a target and more) are make fuzz's. Any crash, sanitizer report, failed
# invariant, leak or 10 s hang fails the test and leaves the input in
# build/fuzz/artifacts/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT"
e2e_need clang
[ -n "$(find /usr/lib/llvm-* -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null)" ] ||
	e2e_skip "needs libclang_rt.fuzzer (Debian's libclang-rt-14-dev)"
make --no-print-directory -j"$(nproc)" fuzz-build >/dev/null
short='^fuzz_(run_record|elfdeps|multipart|kernel_config|sched_names)$'
rc=0
# every other target (a new one included) at the full time
long=$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c; done | grep -Ev "$short" | paste -sd'|')
tests/fuzz/run.sh "${FUZZ_SECONDS:-5}" "^($long)$" || rc=1
tests/fuzz/run.sh "${FUZZ_SHORT_SECONDS:-3}" "$short" || rc=1
exit $rc
