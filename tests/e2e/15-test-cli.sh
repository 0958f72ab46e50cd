#!/usr/bin/env bash
# false-failure rate: 0 (deterministic: no job runs; the verdict words it greps
# are the exit codes in `schedlab test --help`).
# `schedlab test` as a user meets it, without guests: from a directory
# outside the repository, --dry-run with each PATCH form (a patch file, an
# mbox of two patches with a cover letter, a directory with a quilt series
# file, git:TREE@BASE..HEAD of a small repository whose commits touch
# kernel/sched/rt.c, several at once) and the patches in the printed job;
# options (--suite, --repeat, --base); bad input exits 2 with a sentence that
# says what is wrong; --help. Then `schedlab kernel tree` into a new
# directory: a git repository that tests/planted/comment-only.patch applies
# to (the tree every planted patch is written against), and a non-empty
# directory refused.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need git python3
e2e_tmpdir
T=$E2E_TMP
cp "$SCHEDLAB" "$T/schedlab" # immune to a concurrent relink
SCHEDLAB=$T/schedlab
export SCHEDLAB_DATA_DIR=$E2E_ROOT
PLANTED=$E2E_ROOT/tests/planted/comment-only.patch
cd "$T"

# A small git tree whose two commits touch kernel/sched/rt.c.
git init -q repo
git -C repo config user.name "E2E Test"
git -C repo config user.email e2e@example.invalid
mkdir -p repo/kernel/sched
printf 'static int a;\nstatic int b;\nstatic int c;\n' >repo/kernel/sched/rt.c
git -C repo add -A && git -C repo commit -qm base
sed -i 's/^static int a;/static int a; \/* one *\//' repo/kernel/sched/rt.c
git -C repo commit -qam "sched/rt: comment a"
sed -i 's/^static int c;/static int c; \/* three *\//' repo/kernel/sched/rt.c
git -C repo commit -qam "sched/rt: comment c"
git -C repo format-patch -q --cover-letter --stdout HEAD~2..HEAD >two.mbox
mkdir quilt
git -C repo format-patch -q -o "$T/quilt" HEAD~2..HEAD
(cd quilt && ls 0001-*.patch 0002-*.patch | sed -e '1i # a quilt series' >series)
cp "$PLANTED" comment-only.patch

dry() { # dry OUTFILE ARGS...: schedlab test --dry-run, must exit 0
	local out=$1
	shift
	"$SCHEDLAB" test --dry-run "$@" >"$out" || e2e_fail "schedlab test --dry-run $* exited $?"
}
check() { # check JOB.json PYTHON (j = the job, patched = its extra patches)
	python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
base = j["kernels"]["base"]["patches"]
patched_all = j["kernels"]["patched"]["patches"]
assert base == [{"series": "linux-6.1"}], base
assert patched_all[0] == {"series": "linux-6.1"}, patched_all
patched = patched_all[1:]
names = [p["name"] for p in patched]
print(sys.argv[1], "->", names)
exec(sys.argv[2])
PY
}

dry file.json comment-only.patch
check file.json '
assert names == ["comment-only.patch"]
assert patched[0]["content"] == open("comment-only.patch").read()
assert j["name"] == "comment-only", j["name"]
assert j["suite"] == "all" and j["repeat"] == {"min": 5, "max": 20}, (j["suite"], j["repeat"])
assert j["variants"]["baseline"]["kernel"] == "base" and j["variants"]["patched"]["kernel"] == "patched"
assert len(j["workloads"]) >= 1 and len(j["gates"]) >= 1, "suite all brings workloads and gates"
'
dry mbox.json two.mbox
check mbox.json '
assert names == ["0001-sched-rt-comment-a.patch", "0002-sched-rt-comment-c.patch"], names
assert "+static int a; /* one */" in patched[0]["content"] and "three" not in patched[0]["content"]
assert "+static int c; /* three */" in patched[1]["content"]
assert all("BLURB" not in p["content"] for p in patched), "the cover letter was kept"
assert j["name"] == "sched-rt-comment-a", j["name"]
'
dry quilt.json quilt
check quilt.json '
assert names == ["0001-sched-rt-comment-a.patch", "0002-sched-rt-comment-c.patch"], names
'
dry git.json "git:repo@HEAD~2..HEAD"
check git.json '
assert names == ["0001-sched-rt-comment-a.patch", "0002-sched-rt-comment-c.patch"], names
assert "kernel/sched/rt.c" in patched[1]["content"]
'
dry gitabs.json "git:$T/repo@HEAD~1..HEAD"
check gitabs.json 'assert names == ["0001-sched-rt-comment-c.patch"], names'
dry several.json comment-only.patch two.mbox "git:repo@HEAD~1..HEAD"
check several.json '
assert names == ["comment-only.patch", "0002-sched-rt-comment-a.patch",
                 "0003-sched-rt-comment-c.patch", "0004-sched-rt-comment-c.patch"], names
'
dry opts.json --suite rt --repeat 3 comment-only.patch
check opts.json 'assert j["suite"] == "rt" and j["repeat"] == 3, (j["suite"], j["repeat"])'
dry opts2.json --suite fair --repeat 4:9 comment-only.patch
check opts2.json 'assert j["suite"] == "fair" and j["repeat"] == {"min": 4, "max": 9}, j["repeat"]'
# --debug: both kernels debug builds, the suite's gates kept; the debug
# suite: all workloads on debug kernels, no metric gates (docs/kernel-bugs.md).
dry dbg.json --debug lockdep --suite rt comment-only.patch
check dbg.json 'assert [k.get("debug") for k in j["kernels"].values()] == ["lockdep"] * 2 and j["gates"] and all(v["debug"] == "lockdep" for v in j["variants"].values()), j["kernels"]'
dry dbgsuite.json --suite debug comment-only.patch
check dbgsuite.json 'assert [k.get("debug") for k in j["kernels"].values()] == ["lockdep"] * 2 and j["gates"] == [] and len(j["workloads"]) == 4, (j["kernels"], j["gates"])'
touch linux.tar.xz
dry base.json --base tarball:linux.tar.xz comment-only.patch
python3 - base.json "$T" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("base", "patched"):
    src = j["kernels"][k]["source"]
    assert src == "tarball:" + sys.argv[2] + "/linux.tar.xz", src
assert j["kernels"]["base"]["patches"] == [], "a tarball base carries no built-in series"
PY

expect2() { # expect2 MESSAGE-REGEX ARGS...: exit 2 and a message matching
	local want=$1 rc=0
	shift
	out=$("$SCHEDLAB" test --dry-run "$@" 2>&1 >/dev/null) || rc=$?
	echo "test $*: rc=$rc: $out"
	[ "$rc" -eq 2 ] || e2e_fail "schedlab test $* exited $rc, expected 2"
	echo "$out" | grep -Eq -- "$want" || e2e_fail "schedlab test $*: no '$want' in: $out"
}
printf 'Just words.\nNo diff at all.\n' >nodiff.txt
expect2 "PATCH 'missing.patch': No such file" missing.patch
expect2 "no diff" nodiff.txt
expect2 "no 'series' file" repo/kernel
expect2 "must look like 'git:TREE@BASE..HEAD'" "git:repo@HEAD"
expect2 "refs of letters" "git:repo@HEAD~1..--output=x"
expect2 "refs of letters" 'git:repo@HEAD;rm..HEAD'
expect2 "git format-patch exited" "git:repo@nosuchref..HEAD"
expect2 "not a directory" "git:nowhere@HEAD~1..HEAD"
expect2 "holds no commits" "git:repo@HEAD..HEAD"
expect2 "--suite must be rt, latency, fair, under-load, all or debug, not 'speed'" --suite speed comment-only.patch
expect2 "--debug must be lockdep .the one debug preset., not 'kasan'" --debug kasan comment-only.patch
expect2 "--repeat '0' is not N or MIN:MAX" --repeat 0 comment-only.patch
expect2 "--repeat '5:3' is not N or MIN:MAX" --repeat 5:3 comment-only.patch
expect2 "--repeat 'x' is not N or MIN:MAX" --repeat x comment-only.patch
expect2 "--base 'nonsense' is not" --base nonsense comment-only.patch
expect2 "give at least one PATCH"
"$SCHEDLAB" test --help >help.txt || e2e_fail "test --help exited $?"
grep -q 'Usage: schedlab test' help.txt && grep -q '0 pass, 1 fail' help.txt &&
	grep -q '3 inconclusive' help.txt && grep -q '2 error' help.txt ||
	e2e_fail "test --help lacks the usage or the exit codes"
"$SCHEDLAB" --help | grep -q '^  test ' || e2e_fail "schedlab --help does not list test"

# The tree patches apply to (Debian's source package: scripts/setup.sh installs it).
[ -f /usr/src/linux-source-6.1.tar.xz ] || e2e_skip "needs the Debian package linux-source-6.1"
start=$(date +%s)
"$SCHEDLAB" kernel tree tree >tree.out || e2e_fail "schedlab kernel tree exited $?"
secs=$(($(date +%s) - start))
echo "schedlab kernel tree took $secs s"
cat tree.out
grep -q "schedlab test git:$T/tree@schedlab-base..HEAD" tree.out || e2e_fail "kernel tree does not say how to test"
git -C tree apply --check "$PLANTED" || e2e_fail "comment-only.patch does not apply to the tree"
[ "$(git -C tree rev-list --count schedlab-base)" -eq 5 ] || e2e_fail "expected the base and 4 series commits"
git -C tree log --format=%s | tail -n 1 | grep -q "Base: Debian package linux-source-6.1 6\.1\." ||
	e2e_fail "the base commit does not name the package version"
git -C tree log -1 --format=%s schedlab-base | grep -q RT_CPUPRI || e2e_fail "the last commit is not the series' last patch"
[ -z "$(git -C tree status --porcelain | head -n 1)" ] || e2e_fail "the tree has uncommitted changes"
# Packed, with no loose object: a kernel's ~80 000 loose objects would make
# the user's first commit start a detached `git gc --auto`, repacking for
# minutes beside the guests of the job they run next.
loose=$(git -C tree count-objects | cut -d' ' -f1)
[ "$loose" -eq 0 ] || e2e_fail "the tree has $loose loose objects (git count-objects)"
# A user's change on top goes through git:TREE@schedlab-base..HEAD.
git -C tree apply "$PLANTED"
git -C tree -c user.name=E2E -c user.email=e2e@example.invalid commit -qam "sched/rt: document find_lowest_rq()"
dry tree.json "git:tree@schedlab-base..HEAD"
check tree.json '
assert names == ["0001-sched-rt-document-find_lowest_rq.patch"], names
assert "+ * find_lowest_rq - pick the CPU" in patched[0]["content"]
'
rc=0
out=$("$SCHEDLAB" kernel tree tree 2>&1) || rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "is not empty" || e2e_fail "a non-empty DIR was not refused: rc=$rc: $out"
