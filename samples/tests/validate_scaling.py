#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs lockscope-scaling briefly and validates its output against docs/scaling.schema.json."""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    harness, schema_path = sys.argv[1], sys.argv[2]
    try:
        import jsonschema
    except ImportError:
        print("SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
        return SKIP
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "scaling.json")
        subprocess.run([harness, "--duration", "0.05", "--max-threads", "2", "--output", out],
                       check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            doc = json.load(f)
    jsonschema.validate(doc, schema)
    # The schema must also reject what the reader rejects.
    bad = json.loads(json.dumps(doc))
    bad["pairs"][0]["variants"][0]["points"][0]["locks"][0]["wait"]["hist"] = [0]
    try:
        jsonschema.validate(bad, schema)
    except jsonschema.ValidationError:
        pass
    else:
        print("schema accepted a 1-bucket histogram")
        return 1
    print("scaling output validates against", schema_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
