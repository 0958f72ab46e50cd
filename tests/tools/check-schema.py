#!/usr/bin/python3
"""Validates JSON documents against one of schedlab's schemas with Debian's
python3-jsonschema (Draft 2020-12): an independent second opinion beside
schedlab's own C validator.

Usage: tests/tools/check-schema.py (job|result) FILE...
Exit status 0 when every file is valid; each error is printed with its path.
"""
import json
import pathlib
import sys

import jsonschema


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) > 1 and argv[1] in ("-h", "--help") else 2
    root = pathlib.Path(__file__).resolve().parents[2]
    schema = json.loads((root / "results-schema" / f"{argv[1]}.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for name in argv[2:]:
        doc = json.loads(pathlib.Path(name).read_text())
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:10]:
            path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
            print(f"{name}: {path}: {e.message[:300]}")
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
