#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The package check passes on this build and names a package the list lacks."""
import subprocess
import sys

check, build = sys.argv[1], sys.argv[2]


def run(*extra):
    return subprocess.run([sys.executable, check, "--build", build, *extra], capture_output=True, text=True)


ok = run()
print(ok.stdout, ok.stderr, sep="")
if ok.returncode != 0:
    sys.exit("FAIL: the build uses files scripts/setup.sh would not install (see above)")

# libcli11-dev is header-only and nothing else depends on it: dropping it from
# the list must make the check fail and name it, as a fresh machine would.
missing = run("--without", "libcli11-dev")
if missing.returncode != 1 or "from libcli11-dev, which scripts/setup.sh does not install" not in missing.stdout:
    sys.exit(f"FAIL: without libcli11-dev the check exited {missing.returncode}:\n{missing.stdout}{missing.stderr}")
print("PASS: the check names libcli11-dev when the list lacks it")
