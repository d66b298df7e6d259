#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Throughput cost of recording: a contention-heavy workload (semop-multi
# --multi: 8 threads on one System V semaphore array lock) run alone, under
# `lockscope record` (all probes; all probes timing 1 in 16 syscalls;
# contention only, with the default stack budget; contention only walking
# every stack), and under
# `perf lock record`, alternating in each round so drift hits every mode alike.
# Prints median ops/s per mode and the ratios. Needs root (BPF, perf).
#
#   bench/record/overhead.sh [-r ROUNDS] [-d SECONDS] [-t THREADS] [-b BUILD_DIR]
set -euo pipefail

rounds=5 duration=3 threads=8 build=""
usage() { echo "usage: $0 [-r ROUNDS] [-d SECONDS] [-t THREADS] [-b BUILD_DIR]" >&2; exit 2; }
while getopts "r:d:t:b:h" o; do
    case $o in
        r) rounds=$OPTARG ;; d) duration=$OPTARG ;; t) threads=$OPTARG ;; b) build=$OPTARG ;; *) usage ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$0: -r needs a positive integer, got '$rounds'" >&2; exit 2; }
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "$0: -t needs a positive integer, got '$threads'" >&2; exit 2; }
[[ $duration =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$0: -d needs seconds, got '$duration'" >&2; exit 2; }

here=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -z $build ]]; then
    for d in "$here"/build/*/; do
        [[ -x $d/cli/lockscope && -x $d/samples/bin/semop-multi ]] && build=$d && break
    done
fi
lockscope=${build%/}/cli/lockscope
workload=${build%/}/samples/bin/semop-multi
[[ -x $lockscope ]] || { echo "$0: no lockscope binary in '${build:-build/*}' (build it or pass -b)" >&2; exit 1; }
[[ -x $workload ]] || { echo "$0: no semop-multi in '$build' (build target semop-multi)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "$0: needs root (BPF and perf lock record)" >&2; exit 1; }
command -v perf >/dev/null || { echo "$0: perf not found (apt-get install linux-perf)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/lockscope-overhead.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
wl=("$workload" --multi --threads "$threads" --duration "$duration")

# Runs one mode and prints the workload's ops_per_sec.
run_mode() {
    local out
    case $1 in
        alone) out=$("${wl[@]}" 2>/dev/null) ;;
        lockscope) out=$("$lockscope" record -o "$tmp/a.json" -- "${wl[@]}" 2>/dev/null) ;;
        lockscope-s16) out=$("$lockscope" record --syscall-sample 16 -o "$tmp/c.json" -- "${wl[@]}" 2>/dev/null) ;;
        lockscope-wait) out=$("$lockscope" record --no-cpu --no-hold --no-syscalls -o "$tmp/b.json" \
                                -- "${wl[@]}" 2>/dev/null) ;;
        lockscope-wait-all) out=$("$lockscope" record --no-cpu --no-hold --no-syscalls --stack-budget 0 \
                                -o "$tmp/d.json" -- "${wl[@]}" 2>/dev/null) ;;
        perf-lock) out=$(perf lock record -o "$tmp/perf.data" -- "${wl[@]}" 2>/dev/null) ;;
    esac
    sed -n 's/.*"ops_per_sec":\([0-9.e+]*\).*/\1/p' <<<"$out" | tail -n1
}

modes=(alone lockscope lockscope-s16 lockscope-wait lockscope-wait-all perf-lock)
declare -A results
for ((r = 0; r < rounds; r++)); do
    # Rotate the order each round.
    for ((i = 0; i < ${#modes[@]}; i++)); do
        m=${modes[$(((i + r) % ${#modes[@]}))]}
        v=$(run_mode "$m")
        [[ -n $v ]] || { echo "$0: mode $m printed no lockscope_result" >&2; exit 1; }
        results[$m]+="$v "
        printf 'round %d  %-15s %12.0f ops/s\n' "$((r + 1))" "$m" "$v" >&2
    done
done

median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# (max - min) / median: how far one run can be from another on this machine.
spread() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; print (a[NR]-a[1])/m}'; }
base=$(median "${results[alone]}")
perf_m=$(median "${results[perf-lock]}")
echo
echo "semop-multi --multi --threads $threads --duration $duration, $rounds rounds, $(nproc) CPUs, $(uname -r)"
printf '%-19s %14s %10s %10s %10s\n' mode "median ops/s" "vs alone" "cost" "spread"
for m in "${modes[@]}"; do
    med=$(median "${results[$m]}")
    spr=$(spread "${results[$m]}")
    awk -v m="$m" -v v="$med" -v b="$base" -v s="$spr" \
        'BEGIN {printf "%-19s %14.0f %10.3f %9.1f%% %9.0f%%\n", m, v, v/b, (1 - v/b) * 100, s * 100}'
done
for m in lockscope lockscope-s16 lockscope-wait lockscope-wait-all; do
    med=$(median "${results[$m]}")
    awk -v m="$m" -v v="$med" -v b="$base" -v p="$perf_m" 'BEGIN {
        c = 1 - v/b; pc = 1 - p/b;
        if (pc <= 0) printf "%s costs %.1f%%; perf lock record showed no cost (%.1f%%): no ratio\n", m, c * 100, pc * 100;
        else if (c <= 0) printf "%s: no measurable cost (perf lock record costs %.1f%%)\n", m, pc * 100;
        else printf "%s: perf lock record costs %.1fx as much\n", m, pc / c }'
done
