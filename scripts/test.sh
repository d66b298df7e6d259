#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's test command: set up, build, and run every test.
#  - unit and integration tests in parallel,
#  - then the ones that load BPF programs or boot qemu guests, one at a time
#    (they measure the kernel and must not disturb each other),
#  - then the seed kernel pairs built from source (label kernel-build),
#  - then the fuzzers (capture reader, importers, renderers) for a bounded time (clang build).
# Exits non-zero if any test fails.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${LOCKSCOPE_BUILD_DIR:-$top/build/main}
"$top/scripts/build.sh"
cd "$build"
status=0
ctest --output-on-failure -j "$(nproc)" -LE 'bpf|kernel-guest|kernel-build' || status=1
ctest --output-on-failure -L 'bpf|kernel-guest' -LE kernel-build || status=1
# Kernels built from source (cached in ~/.cache/lockscope/lab after the first run).
ctest --output-on-failure -L kernel-build || status=1
if command -v clang++ >/dev/null; then
  fuzz=$top/build/fuzz
  if [ ! -f "$fuzz/CMakeCache.txt" ]; then
    cmake -S "$top" -B "$fuzz" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DLOCKSCOPE_FUZZ=ON -DLOCKSCOPE_BUILD_GUI=OFF -DLOCKSCOPE_BUILD_BPF=OFF \
      -DLOCKSCOPE_BUILD_BENCH=OFF >/dev/null
  fi
  # The capture reader, each importer and each renderer (reports/fuzz), 10-30 s each.
  cmake --build "$fuzz" -j "$(nproc)" --target capture_fuzz import_perf_script_fuzz import_lock_stat_fuzz \
    render_text_fuzz render_md_fuzz render_html_fuzz render_json_fuzz render_folded_fuzz render_pprof_fuzz \
    render_pprof-holders_fuzz render_speedscope_fuzz
  (cd "$fuzz" && ctest --output-on-failure -R '_fuzz_bounded$') || status=1
else
  echo "test.sh: skipped: the fuzzer needs clang, which is not installed" >&2
fi
exit $status
