#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's test command: set up, build, and run every test.
#  - unit and integration tests in parallel,
#  - then the ones that load BPF programs or boot qemu guests, one at a time
#    (they measure the kernel and must not disturb each other),
#  - then the seed kernel pairs built from source (label kernel-build),
#  - then the capture reader's fuzzer for a bounded time (clang build).
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
  cmake --build "$fuzz" -j "$(nproc)" --target capture_fuzz
  (cd "$fuzz" && ctest --output-on-failure -R capture_fuzz_bounded) || status=1
else
  echo "test.sh: skipped: the fuzzer needs clang, which is not installed" >&2
fi
exit $status
