#!/usr/bin/python3
"""Prints the ten largest C files and functions, and fails on one too large.

Usage: tests/tools/check-sizes.py [--top N] [ROOT]   (ROOT: the repository)

A file of service/, workloads/ or bench/ may have at most FILE_MAX
lines and a function at most FUNC_MAX. A function is what the project's style
writes: a line at column 0 that opens a parameter list, then a `{` alone at
column 0, up to the `}` at column 0 that closes it.

Files and functions that were already over the limits when the check came in
are listed in tests/tools/sizes-allowed.txt with their size then: each may
shrink but not grow, and a line for one that is now within the limits is
reported as stale, so the list only ever gets shorter. Exits 1 on a violation
or a stale line, 0 otherwise.
"""
import pathlib
import re
import sys

FILE_MAX = 700
FUNC_MAX = 150
DIRS = ("service", "workloads", "bench")
NAME = re.compile(r"^[A-Za-z_][^;{}=]*?\b([A-Za-z_]\w*)\s*\(")


def functions(lines):
    """Yields (name, first line number, length in lines) per function."""
    name, start = None, None
    for i, line in enumerate(lines):
        if start is None:
            m = NAME.match(line)
            if m and not line.startswith(("static const", "#")):
                name = m.group(1)
            if line.rstrip() == "{" and name:
                start = i
            elif line.strip() and not line.startswith((" ", "\t")) and not m:
                name = None if line.rstrip() != "{" else name
        elif line.startswith("}"):
            yield name, start + 1, i - start + 1
            name, start = None, None


def load_allowed(path):
    allowed = {}
    if not path.exists():
        return allowed
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            key, size = line.rsplit(None, 1)
            allowed[key] = int(size)
    return allowed


def main(argv):
    top = 10
    if len(argv) > 2 and argv[1] == "--top":
        top = int(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    root = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).parents[2])
    allowed = load_allowed(root / "tests" / "tools" / "sizes-allowed.txt")
    files, funcs = [], []
    for d in DIRS:
        for path in sorted((root / d).rglob("*.c")):
            rel = str(path.relative_to(root))
            lines = path.read_text(errors="replace").splitlines()
            files.append((len(lines), rel))
            for name, first, n in functions(lines):
                funcs.append((n, f"{rel}:{name}", first))
    files.sort(reverse=True)
    funcs.sort(reverse=True)
    print(f"largest files (limit {FILE_MAX} lines):")
    for n, rel in files[:top]:
        print(f"  {n:5d}  {rel}")
    print(f"largest functions (limit {FUNC_MAX} lines):")
    for n, key, first in funcs[:top]:
        print(f"  {n:5d}  {key} (line {first})")

    bad = 0
    seen = set()
    for n, key in [(n, rel) for n, rel in files] + [(n, key) for n, key, _ in funcs]:
        limit = FILE_MAX if ":" not in key else FUNC_MAX
        if n <= limit:
            continue
        seen.add(key)
        if key in allowed and n <= allowed[key]:
            continue
        was = f" (allowed {allowed[key]})" if key in allowed else ""
        print(f"TOO LARGE: {key} has {n} lines, over {limit}{was}")
        bad += 1
    for key in sorted(set(allowed) - seen):
        print(f"STALE: {key} is within the limit now; drop it from tests/tools/sizes-allowed.txt")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
