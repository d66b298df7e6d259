#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's first command: set up, build, capture a sample workload
# (semop-multi in its whole-array-lock mode, the classic IPC semaphore
# benchmark) with `lockscope record`, and print the report.
# Needs root (or CAP_BPF+CAP_PERFMON) for the capture.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${LOCKSCOPE_BUILD_DIR:-$top/build/main}
"$top/scripts/build.sh"
lockscope=$build/cli/lockscope
workload=$build/samples/bin/semop-multi
out=$top/build/demo
mkdir -p "$out"
capture=$out/semop-multi.lockscope.json
# --syscalls: semtimedop's latency is this benchmark's story; record leaves
# it off by default for its cost (docs/recording.md).
"$lockscope" record --label demo --syscalls -o "$capture" -- \
  "$workload" --threads 8 --sems 4 --multi --duration 3
echo
"$lockscope" report "$capture" --top 10
echo
echo "capture: $capture   (HTML: $lockscope report $capture --format html > report.html)"
