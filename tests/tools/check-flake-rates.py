#!/usr/bin/python3
"""Fails when an end-to-end script asserts a verdict without stating its
false-failure rate.

Usage: tests/tools/check-flake-rates.py [ROOT]   (ROOT: the repository)

A statistical test that fails one time in fifty, times a handful of such
tests, fails CI about one time in ten; docs/testing.md ("Statistical tests
and their false-failure rates") asks every e2e script that asserts a verdict
to say how often it fails on a correct product, worked out from
docs/statistics.md, and to keep that at most 1 in 1000. This check keeps the
first half true mechanically: a script of tests/e2e/ (and the planted
suite's driver, tests/planted/planted.sh) that

  - calls planted_expect_* (the planted suite's verdict checks),
  - compares a result's "verdict" (`["verdict"] ==`, `!=`, `in`, `not in`,
    jq's `.verdict ==`), or
  - greps for a comparison's or a job's verdict word (improved, regressed,
    unchanged, undecided, inconclusive, or "verdict: ...")

must have a line `# false-failure rate: ...` in its first 30 lines: the
rate, or why it is not shown, and where the number comes from. The number is
the author's to justify in that comment (the check cannot redo the
statistics). Exits 1 naming every script that lacks one, 0 otherwise.
"""
import pathlib
import re
import sys

HEAD_LINES = 30
RATE = re.compile(r"^#\s*false-failure rate:\s*\S")
ASSERTS = (
    ("calls planted_expect_*", re.compile(r"\bplanted_expect_\w+")),
    ("compares a verdict",
     re.compile(r"""\[\s*["']verdict["']\s*\]\s*(==|!=|not\s+in\b|in\b)"""
                r"""|(==|!=)\s*\w+\[\s*["']verdict["']\s*\]"""
                r"""|\.verdict\s*(==|!=)""")),
    ("greps a verdict word",
     re.compile(r"\bgrep\b[^|;]*(\b(improved|regressed|unchanged|undecided|inconclusive)\b"
                r"|verdict:)")),
)


def scripts(root):
    yield from sorted((root / "tests" / "e2e").glob("*.sh"))
    planted = root / "tests" / "planted" / "planted.sh"
    if planted.exists():
        yield planted


def why_statistical(lines):
    """The first assertion that needs a stated rate, as (line number, kind)."""
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith("#"):
            continue
        for kind, pattern in ASSERTS:
            if pattern.search(line):
                return i, kind
    return None


def main(argv):
    root = pathlib.Path(argv[1] if len(argv) > 1 else ".").resolve()
    if not (root / "tests" / "e2e").is_dir():
        print(f"check-flake-rates: no tests/e2e under '{root}'", file=sys.stderr)
        return 2
    missing, stated = [], 0
    for path in scripts(root):
        lines = path.read_text(errors="replace").splitlines()
        hit = why_statistical(lines)
        if hit is None:
            continue
        if any(RATE.match(line) for line in lines[:HEAD_LINES]):
            stated += 1
            continue
        rel = path.relative_to(root)
        missing.append(f"{rel}:{hit[0]}: {hit[1]}, but no '# false-failure rate: ...' "
                       f"line in its first {HEAD_LINES} lines")
    for m in missing:
        print(m)
    if missing:
        print(f"check-flake-rates: {len(missing)} script(s) assert a verdict without stating "
              f"their false-failure rate (docs/testing.md, 'Statistical tests and their "
              f"false-failure rates')")
        return 1
    print(f"check-flake-rates: {stated} verdict-asserting script(s), each states its rate")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
