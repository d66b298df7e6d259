#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# How right the agent's wait counts are, against a load that counts its own
# operations: contend-workload filepos-chunk (four threads reading one file
# 64 KiB at a time, each read() contending its f_pos_lock) runs 14 s beside
# `lockscope agent --window W [FLAGS]`; the agent's /capture of 8 s of it
# gives the lock's waits a second, the workload its reads a second. Prints
# the share the wait programs were attached and waits per read().
#
#   sudo bench/record/agent_estimates.sh [-b BUILD_DIR] [-w WINDOW_S] [-- AGENT_FLAGS...]
#
# e.g. -w 1 (sampled, short read-outs) against -- --wait-rate-cap 0.
set -euo pipefail

build=build/main window=10 port=9796
while getopts "b:w:" o; do
    case $o in
    b) build=$OPTARG ;;
    w) window=$OPTARG ;;
    *) echo "usage: $0 [-b BUILD_DIR] [-w WINDOW_S] [-- AGENT_FLAGS...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
tmp=$(mktemp -d)
trap 'kill $agent 2>/dev/null || true; rm -rf "$tmp"' EXIT

"$build/cli/lockscope" agent --listen 127.0.0.1:$port --window "$window" --no-cpu "$@" > "$tmp/agent.log" 2>&1 &
agent=$!
sleep 2
"$build/collector/tests/contend-workload" filepos-chunk 4 14 > "$tmp/workload.json" &
work=$!
sleep 4
curl -sf "http://127.0.0.1:$port/capture?seconds=8" > "$tmp/capture.json"
wait $work
"$build/cli/lockscope" convert "$tmp/capture.json" -o "$tmp/capture.v1.json" --capture-version 1 > "$tmp/convert.log" 2>&1 \
    || { cat "$tmp/convert.log" >&2; exit 1; }
python3 - "$tmp/capture.v1.json" "$tmp/workload.json" "window $window s, flags [$*]" <<'P'
import json, sys
cap = json.load(open(sys.argv[1]))
work = json.load(open(sys.argv[2]))["lockscope_result"]
lock = max(cap["locks"], key=lambda l: l["wait"]["count"])
d = cap["meta"]["duration_s"]
waits = lock["wait"]["count"] / d
print(f"{sys.argv[3]}: attached {cap['meta']['filters'].get('wait_share', '1')}, {lock['key']} "
      f"{waits:.0f} waits/s, {work['ops_per_sec']:.0f} reads/s, {waits / work['ops_per_sec']:.3f} waits per read")
P
