#!/usr/bin/env bash
# tier: host
# The include arrows of service/ follow service/LAYERS (docs/architecture.md):
# the tree passes, and the checker does fail on a planted upward include, on a
# planted cycle, on a file left directly in service/ and on a planted call
# circle inside kernel/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT"
check=tests/tools/check-layers.py

"$check" || e2e_fail "the tree breaks its own layering (above)"

e2e_tmpdir
plant() { # plant NAME: a fresh copy of service/ to break
	rm -rf "$E2E_TMP/$1"; mkdir -p "$E2E_TMP/$1"
	cp -r service "$E2E_TMP/$1/"
}
expect_fail() { # expect_fail NAME PATTERN
	local out
	if out=$("$check" "$E2E_TMP/$1"); then
		e2e_fail "$1: the checker passed a broken tree"
	fi
	grep -q -- "$2" <<<"$out" || e2e_fail "$1: expected '$2' in: $out"
	echo "$1: caught: $(grep -- "$2" <<<"$out" | head -n 1)"
}

plant upward
sed -i '0,/#include "util\/fs.h"/s//#include "util\/fs.h"\n#include "server\/store.h"/' "$E2E_TMP/upward/service/util/fs.c"
expect_fail upward 'util may not include server'

plant cycle
printf '#pragma once\n#include "util/b.h"\n' >"$E2E_TMP/cycle/service/util/a.h"
printf '#pragma once\n#include "util/a.h"\n' >"$E2E_TMP/cycle/service/util/b.h"
expect_fail cycle 'include cycle: util/a -> util/b -> util/a'

plant flat
printf 'int x;\n' >"$E2E_TMP/flat/service/stray.c"
expect_fail flat 'only main.c may stay directly in service/'

# kernel/'s files share kbuild-internal.h, so only their calls show a circle:
# the bottom (the build log) calling the orchestrator on top must fail.
plant callcycle
printf '\nvoid kbuild_log_planted(void);\nvoid kbuild_log_planted(void)\n{\n\tkbuild_build(0, 0, 0, 0);\n}\n' \
	>>"$E2E_TMP/callcycle/service/kernel/kbuild_log.c"
expect_fail callcycle 'call cycle inside service/kernel/: kbuild'
