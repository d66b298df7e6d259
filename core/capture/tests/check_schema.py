#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Validates the capture fixtures against docs/capture.schema.json.

usage: check_schema.py SCHEMA FIXTURES_DIR

Every *.lockscope.json directly in FIXTURES_DIR must validate. Every malformed
fixture marked "reject" in malformed/expected-errors.tsv must fail validation,
"accept" ones (only the reader's cross-checks catch them) must pass, and
"not-json" ones must not parse as JSON. Exit 77 (skipped) without jsonschema."""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)


def load(path):
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def main():
    schema_path, fixtures = sys.argv[1], sys.argv[2]
    schema = load(schema_path)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []
    valid = sorted(f for f in os.listdir(fixtures) if f.endswith(".lockscope.json"))
    if len(valid) < 2:
        failures.append(f"expected the baseline/patched fixtures in {fixtures}, found {valid}")
    for name in valid:
        errors = list(validator.iter_errors(load(os.path.join(fixtures, name))))
        for e in errors[:3]:
            failures.append(f"{name}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
        print(f"{name}: {'valid' if not errors else 'INVALID'}")
    malformed = os.path.join(fixtures, "malformed")
    checked = 0
    with open(os.path.join(malformed, "expected-errors.tsv"), encoding="utf-8") as tsv:
        for line in tsv:
            if line.startswith("#"):
                continue
            name, expect, _message = line.rstrip("\n").split("\t", 2)
            path = os.path.join(malformed, name)
            try:
                doc = load(path)
            except (ValueError, UnicodeDecodeError, RecursionError):
                doc = None
            if expect == "not-json":
                if doc is not None:
                    # Deeply nested but well-formed JSON parses in Python; the reader's depth limit is not a schema matter.
                    print(f"malformed/{name}: parses as JSON (the reader rejects it for other reasons)")
                else:
                    print(f"malformed/{name}: not JSON, as expected")
                checked += 1
                continue
            if doc is None:
                failures.append(f"malformed/{name}: marked {expect} but is not JSON")
                continue
            ok = validator.is_valid(doc)
            if expect == "reject" and ok:
                failures.append(f"malformed/{name}: the schema accepts it but should reject it")
            elif expect == "accept" and not ok:
                failures.append(f"malformed/{name}: marked 'accept' (cross-check only) but the schema rejects it")
            else:
                print(f"malformed/{name}: schema {'accepts (reader cross-check)' if ok else 'rejects'}, as expected")
            checked += 1
    if checked < 20:
        failures.append(f"only {checked} malformed fixtures checked")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
