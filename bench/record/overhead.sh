#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Throughput cost of recording, whole runs side by side: each workload runs
# alone, under `lockscope record` as a user types it (every default probe,
# default budgets), under contention capture only (--no-cpu --no-hold
# --no-syscalls), and under `perf lock record`; the order of the modes rotates
# every round and the workloads alternate, so drift hits every mode alike.
# Prints per workload and mode the median ops/s, the cost against alone (from
# the medians, and the median of each round's cost against that round's
# alone run), the spread, and how many times perf's cost lockscope's is.
#
# With -s it then records each workload once more with
# kernel.bpf_stats_enabled=1 and prints every lockscope program's run count
# and run time (bpftool prog show) over the middle of the run: ns per run and
# share of the CPUs, robust to other load where throughput is not.
#
#   bench/record/overhead.sh [-r ROUNDS] [-d SECONDS] [-w WORKLOADS] [-m MODES] [-b BUILD_DIR] [-s]
#                            [-x 'FLAGS;FLAGS;...']
#
# WORKLOADS: comma-separated, of semop-multi, timer-stress, sem-postwait
# (default all three), and filepos (the record tests' contend-workload: four
# threads read() one file descriptor, whose f_pos_lock mutex the kernel
# reports 10^5 times a second even where it reports no spinning waits). MODES: comma-separated, of alone, lockscope,
# lockscope-wait, perf-lock, lockscope-exact (every wait and syscall timed),
# lockscope-sc (--syscalls: budgeted syscall timing), lockscope-nocpu (--no-cpu), lockscope-labels
# (lockscope-wait plus --lock-owner --lock-names --per-cgroup), lockscope-agent (the workload
# while `lockscope agent` records the whole system in 10-s windows; use -d 30 or more); default
# alone,lockscope,lockscope-wait,perf-lock; 'lockscope:FLAGS' records with
# FLAGS (space-separated), e.g. -m 'alone,lockscope,lockscope:--freq 199', and
# 'lockscope-agent:FLAGS' runs the agent with FLAGS. -x: the -s pass records once per
# ';'-separated set of record flags instead of once with the defaults (an
# empty set is the defaults), e.g. -x ';--lock-owner;--lock-names;--per-cgroup'.
# Needs root (BPF, perf).
set -euo pipefail

rounds=10 duration=3 build="" stats=0 variants_arg=""
workloads=semop-multi,timer-stress,sem-postwait
modes_arg=alone,lockscope,lockscope-wait,perf-lock
usage() {
    echo "usage: $0 [-r ROUNDS] [-d SECONDS] [-w WORKLOADS] [-m MODES] [-b BUILD_DIR] [-s] [-x 'FLAGS;...']" >&2
    exit 2
}
while getopts "r:d:w:m:b:x:sh" o; do
    case $o in
        r) rounds=$OPTARG ;; d) duration=$OPTARG ;; w) workloads=$OPTARG ;; m) modes_arg=$OPTARG ;;
        b) build=$OPTARG ;; s) stats=1 ;; x) variants_arg=$OPTARG ;; *) usage ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$0: -r needs a positive integer, got '$rounds'" >&2; exit 2; }
[[ $duration =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$0: -d needs seconds, got '$duration'" >&2; exit 2; }
IFS=, read -r -a wls <<<"$workloads"
IFS=, read -r -a modes <<<"$modes_arg"
for w in "${wls[@]}"; do
    case $w in semop-multi | timer-stress | sem-postwait | filepos) ;;
        *) echo "$0: unknown workload '$w' (semop-multi, timer-stress, sem-postwait, filepos)" >&2; exit 2 ;;
    esac
done
for m in "${modes[@]}"; do
    case $m in alone | lockscope | lockscope-wait | perf-lock | lockscope-exact | lockscope-sc | lockscope-nocpu | \
        lockscope-labels | lockscope-agent | lockscope-agent:-* | lockscope:-*) ;;
        *) echo "$0: unknown mode '$m'" >&2; exit 2 ;;
    esac
done
[[ " ${modes[*]} " == *" alone "* ]] || { echo "$0: the modes must include alone" >&2; exit 2; }

here=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -z $build ]]; then
    for d in "$here"/build/*/; do
        [[ -x $d/cli/lockscope && -x $d/samples/bin/semop-multi ]] && build=$d && break
    done
fi
lockscope=${build%/}/cli/lockscope
bin=${build%/}/samples/bin
[[ -x $lockscope ]] || { echo "$0: no lockscope binary in '${build:-build/*}' (build it or pass -b)" >&2; exit 1; }
contend=${build%/}/collector/tests/contend-workload
for w in "${wls[@]}"; do
    exe=$bin/$w
    [[ $w == filepos ]] && exe=$contend
    [[ -x $exe ]] || { echo "$0: no $exe (build the project)" >&2; exit 1; }
done
[[ $(id -u) -eq 0 ]] || { echo "$0: needs root (BPF and perf lock record)" >&2; exit 1; }
command -v perf >/dev/null || { echo "$0: perf not found (apt-get install linux-perf)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/lockscope-overhead.XXXXXX)
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
cleanup() {
    sysctl -qw kernel.bpf_stats_enabled="$stats_was" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# The workload's command line.
workload_cmd() {
    case $1 in
        semop-multi) echo "$bin/semop-multi --multi --threads 8 --duration $duration" ;;
        timer-stress) echo "$bin/timer-stress --duration $duration" ;;
        sem-postwait) echo "$bin/sem-postwait --pairs 4 --duration $duration" ;;
        filepos) echo "$contend filepos 4 $duration" ;;
    esac
}

# Runs the workload while `lockscope agent` (whole system, 10-s windows,
# attached before the workload starts: its steady state) records; appends
# the agent's CPU seconds per read-out to $tmp/agent-readouts.
# $1: the agent's further flags, one word each ("" for none).
under_agent() {
    local apid out flags
    read -r -a flags <<<"$1"
    shift
    "$lockscope" agent --listen 127.0.0.1:0 --window 10 "${flags[@]}" 2>"$tmp/agent.log" &
    apid=$!
    until grep -q serving "$tmp/agent.log" 2>/dev/null; do
        kill -0 "$apid" 2>/dev/null || { cat "$tmp/agent.log" >&2; return 1; }
        sleep 0.1
    done
    out=$("$@" 2>/dev/null)
    local port
    port=$(sed -n 's|.*serving http://[^:]*:\([0-9]*\)/.*|\1|p' "$tmp/agent.log")
    curl -s "http://127.0.0.1:$port/metrics" |
        awk '/^lockscope_agent_readout_cpu_seconds_total / {c = $2} /^lockscope_agent_windows_total / {w = $2}
             END {if (w > 0) printf "%d %.6f\n", w, c / w}' >>"$tmp/agent-readouts"
    kill -TERM "$apid"
    wait "$apid"
    echo "$out"
}

# Runs one mode of one workload and prints the workload's ops_per_sec.
run_mode() {
    local out wl flags
    read -r -a wl <<<"$(workload_cmd "$2")"
    case $1 in
        alone) out=$("${wl[@]}" 2>/dev/null) ;;
        lockscope) out=$("$lockscope" record -o "$tmp/a.json" -- "${wl[@]}" 2>/dev/null) ;;
        lockscope-wait) out=$("$lockscope" record --no-cpu --no-hold --no-syscalls -o "$tmp/b.json" \
                                -- "${wl[@]}" 2>/dev/null) ;;
        lockscope-exact) out=$("$lockscope" record --exact -o "$tmp/c.json" -- "${wl[@]}" 2>/dev/null) ;;
        lockscope-sc) out=$("$lockscope" record --syscalls -o "$tmp/d.json" -- "${wl[@]}" 2>/dev/null) ;;
        lockscope-nocpu) out=$("$lockscope" record --no-cpu -o "$tmp/e.json" -- "${wl[@]}" 2>/dev/null) ;;
        lockscope-labels) out=$("$lockscope" record --no-cpu --no-hold --no-syscalls --lock-owner --lock-names \
                                  --per-cgroup -o "$tmp/f.json" -- "${wl[@]}" 2>/dev/null) ;;
        perf-lock) out=$(perf lock record -o "$tmp/perf.data" -- "${wl[@]}" 2>/dev/null) ;;
        lockscope-agent) out=$(under_agent "" "${wl[@]}") ;;
        lockscope-agent:*) out=$(under_agent "${1#lockscope-agent:}" "${wl[@]}") ;;
        lockscope:*) read -r -a flags <<<"${1#lockscope:}"
                     out=$("$lockscope" record "${flags[@]}" -o "$tmp/g.json" -- "${wl[@]}" 2>/dev/null) ;;
    esac
    sed -n 's/.*"ops_per_sec": *\([0-9.e+]*\).*/\1/p' <<<"$out" | tail -n1
}

declare -A results
# Other load moves every number here: it is printed beside them.
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < rounds; r++)); do
    for w in "${wls[@]}"; do
        # Rotate the order each round.
        for ((i = 0; i < ${#modes[@]}; i++)); do
            m=${modes[$(((i + r) % ${#modes[@]}))]}
            v=$(run_mode "$m" "$w")
            [[ -n $v ]] || { echo "$0: $w under $m printed no lockscope_result" >&2; exit 1; }
            results[$w/$m]+="$v "
            printf 'round %d  %-13s %-24s %12.0f ops/s\n' "$((r + 1))" "$w" "$m" "$v" >&2
        done
    done
done

# Per workload and mode: median, cost from the medians, median of the paired
# per-round costs (each run against the same round's alone run), and spread:
# (max - min) / median of the runs, the paired costs' min..max.
summarize() {
    python3 - "$@" <<'EOF'
import statistics, sys
args = sys.argv[1:]
wl, perf_m = args[0], None
runs = {}
for a in args[1:]:
    m, vals = a.rsplit("=", 1)
    runs[m] = [float(x) for x in vals.split()]
alone = runs["alone"]
base = statistics.median(alone)
cost = {}
for m, v in runs.items():
    med = statistics.median(v)
    paired = [1 - x / a for x, a in zip(v, alone)]
    cost[m] = statistics.median(paired)
    spread = (max(v) - min(v)) / med
    print(f"{wl:<13} {m:<24} {med:>13.0f} {1 - med / base:>9.1%} {cost[m]:>9.1%} {spread:>8.0%}"
          f"   {min(paired):+.1%} .. {max(paired):+.1%}" if m != "alone" else
          f"{wl:<13} {m:<24} {med:>13.0f} {'':>9} {'':>9} {spread:>8.0%}")
# A workload that runs in two modes (semop-multi: ~6M or ~2M ops/s from run
# to run) pairs runs of different modes, which swamps a cost of a few
# percent. Split alone's and lockscope's runs (perf's are slower by
# themselves) at the geometric middle of the extremes when they span over
# 2x, and compare each mode with alone's runs of the same mode;
# how often each mode ran says whether recording moves the workload between
# them.
every = [x for m, v in runs.items() if m == "alone" or m.startswith("lockscope") for x in v]
if max(every) > 2 * min(every):
    cut = (max(every) * min(every)) ** 0.5
    print(f"{wl}: two modes, split at {cut:.0f} ops/s (fast: runs above it)")
    for mode_name, keep in (("fast", lambda x: x > cut), ("slow", lambda x: x <= cut)):
        a = [x for x in alone if keep(x)]
        for m, v in runs.items():
            if m != "alone" and not m.startswith("lockscope"):
                continue
            mv = [x for x in v if keep(x)]
            line = f"{wl:<13} {m:<24} {mode_name}: {len(mv)}/{len(v)} runs"
            if mv:
                line += f", median {statistics.median(mv):.0f}"
                if m != "alone" and a:
                    line += f", cost {1 - statistics.median(mv) / statistics.median(a):+.1%} against alone's {mode_name} runs"
            print(line)
if "perf-lock" in cost:
    pc = cost["perf-lock"]
    for m, c in cost.items():
        if m in ("alone", "perf-lock") or not m.startswith("lockscope"):
            continue
        if pc <= 0:
            print(f"{wl}: {m} {c:.1%}; perf lock record showed no cost ({pc:+.1%}): no ratio")
        elif c <= 0:
            print(f"{wl}: {m} has no measurable cost (paired median {c:+.1%}); perf lock record {pc:.1%}")
        else:
            print(f"{wl}: {m} {c:.1%}, perf lock record {pc:.1%}: perf costs {pc / c:.1f}x as much")
EOF
}

# What `record` as typed timed here: without fentry it leaves syscalls alone
# (the capture says why), which is most of the difference between kernels.
default_syscalls() {
    python3 - "$1" <<'EOF'
import json, sys
try:
    c = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(0)
skipped = c["meta"].get("syscall_timing_skipped", "")
hooks = sorted({p["hook"] for p in c["probes"] if p["name"].startswith("syscall:") and p["attached"]})
print("lockscope (record as typed): " + (skipped if skipped else "syscalls timed via " + (", ".join(hooks) or "nothing")))
EOF
}

echo
echo "$rounds rounds, $duration s each, $(nproc) CPUs, $(uname -r)," \
     "load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "lockscope = record as typed (default probes and budgets); lockscope-wait = contention only" \
     "(--no-cpu --no-hold --no-syscalls); perf-lock = perf lock record"
[[ -f $tmp/a.json ]] && default_syscalls "$tmp/a.json"
if [[ -s $tmp/agent-readouts ]]; then
    awk '{w += $1; c += $1 * $2} END {printf "lockscope-agent = lockscope agent (10-s windows): %d read-outs, %.2f ms CPU each\n", w, 1e3 * c / w}' \
        "$tmp/agent-readouts"
fi
printf '%-13s %-24s %13s %9s %9s %8s   %s\n' workload mode "median ops/s" "cost" "paired" "spread" "paired min .. max"
for w in "${wls[@]}"; do
    args=()
    for m in "${modes[@]}"; do
        args+=("$m=${results[$w/$m]}")
    done
    summarize "$w" "${args[@]}"
done

((stats)) || exit 0

# A process's BPF programs: name, run_time_ns and run_cnt (from their fdinfo).
prog_stats() {
    local names
    names=$(bpftool prog show 2>/dev/null | sed -n 's/^\([0-9]*\): .* name \(\S*\) .*/\1 \2/p')
    awk 'FNR == 1 {id = ""} /^prog_id:/ {id = $2} /^run_time_ns:/ {ns = $2} /^run_cnt:/ && id != "" {print id, ns, $2}' \
        /proc/"$1"/fdinfo/* 2>/dev/null | sort -u |
        awk -v names="$names" 'BEGIN {n = split(names, a, "\n"); for (i = 1; i <= n; i++) {split(a[i], p, " "); nm[p[1]] = p[2]}}
                               {print (nm[$1] != "" ? nm[$1] : "prog" $1), $2, $3}'
}

echo
echo "BPF cost per program (kernel.bpf_stats_enabled=1, which itself adds ~20-40 ns a run):"
sysctl -qw kernel.bpf_stats_enabled=1
IFS=';' read -r -a variants <<<"$variants_arg"
((${#variants[@]})) || variants=("")
for v in "${variants[@]}"; do
read -r -a vflags <<<"$v"
echo "record ${v:-(defaults)}"
printf '%-13s %-24s %12s %10s %10s\n' workload program "runs/s" "ns/run" "CPU share"
for w in "${wls[@]}"; do
    read -r -a wl <<<"$(workload_cmd "$w")"
    "$lockscope" record "${vflags[@]}" -o "$tmp/s.json" -- "${wl[@]}" >/dev/null 2>&1 &
    rec=$!
    # Past attach, then a window of the steady state.
    sleep 1
    t0=$(date +%s.%N)
    prog_stats "$rec" >"$tmp/s0"
    sleep "$(awk -v d="$duration" 'BEGIN {print (d > 2.5 ? d - 2 : 0.5)}')"
    t1=$(date +%s.%N)
    prog_stats "$rec" >"$tmp/s1"
    wait "$rec" || true
    python3 - "$w" "$tmp/s0" "$tmp/s1" "$t0" "$t1" "$(nproc)" <<'EOF'
import sys
wl, f0, f1, t0, t1, ncpu = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
def load(f):
    d = {}
    for line in open(f):
        name, ns, cnt = line.split()
        a = d.setdefault(name, [0, 0])
        a[0] += int(ns); a[1] += int(cnt)
    return d
a, b = load(f0), load(f1)
dt = t1 - t0
for name in sorted(b):
    ns = b[name][0] - a.get(name, [0, 0])[0]
    cnt = b[name][1] - a.get(name, [0, 0])[1]
    if cnt <= 0:
        continue
    print(f"{wl:<13} {name:<24} {cnt / dt:>12.0f} {ns / cnt:>10.0f} {ns / dt / 1e9 / ncpu:>10.2%}")
EOF
done
done
