#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs the lockscope binary and checks exit code, stdout and stderr.

usage: run_cli.py LOCKSCOPE EXPECT_EXIT [--stderr-line TEXT] [--stderr-contains TEXT]
                  [--stdout-contains TEXT]... [--stdout-lines N] [--malformed FILE TSV] -- ARGS...

--malformed FILE TSV: expect exactly one stderr line "FILE: <message>" with the
message that TSV (core/capture/tests/fixtures/malformed/expected-errors.tsv)
lists for FILE's base name."""
import os
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    sep = argv.index("--")
    opts, args = argv[:sep], argv[sep + 1:]
    binary, expect_exit = opts[0], int(opts[1])
    checks = opts[2:]
    proc = subprocess.run([binary] + args, capture_output=True, timeout=60)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    problems = []
    if proc.returncode != expect_exit:
        problems.append(f"exit code {proc.returncode}, expected {expect_exit}")
    i = 0
    while i < len(checks):
        flag = checks[i]
        if flag == "--stderr-line":
            want = checks[i + 1]
            i += 2
            if err != want + "\n":
                problems.append(f"stderr is {err!r}, expected exactly the line {want!r}")
        elif flag == "--stderr-contains":
            want = checks[i + 1]
            i += 2
            if err.count("\n") != 1 or want not in err:
                problems.append(f"stderr is {err!r}, expected one line containing {want!r}")
        elif flag == "--stdout-contains":
            want = checks[i + 1]
            i += 2
            if want not in out:
                problems.append(f"stdout lacks {want!r}:\n{out}")
        elif flag == "--stdout-lines":
            want = int(checks[i + 1])
            i += 2
            if out.count("\n") != want:
                problems.append(f"stdout has {out.count(chr(10))} lines, expected {want}:\n{out}")
        elif flag == "--malformed":
            file, tsv = checks[i + 1], checks[i + 2]
            i += 3
            expected = None
            with open(tsv, encoding="utf-8") as f:
                for line in f:
                    if line.startswith("#"):
                        continue
                    name, _schema, message = line.rstrip("\n").split("\t", 2)
                    if name == os.path.basename(file):
                        expected = message
            if expected is None:
                problems.append(f"{file} is not listed in {tsv}")
            elif err != f"{file}: {expected}\n":
                problems.append(f"stderr is {err!r}, expected exactly {file + ': ' + expected!r}")
            if out:
                problems.append(f"stdout should be empty, is {out!r}")
        else:
            problems.append(f"unknown check {flag}")
            i += 1
    if problems:
        print(f"lockscope {' '.join(args)}:")
        for p in problems:
            print("  " + p)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
