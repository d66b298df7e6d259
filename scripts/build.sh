#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, then configures and builds lockscope into
# build/main (override with LOCKSCOPE_BUILD_DIR). Extra args go to cmake.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
build=${LOCKSCOPE_BUILD_DIR:-$top/build/main}
jobs=${LOCKSCOPE_JOBS:-$(nproc)}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKSCOPE_WERROR=ON "$@" >/dev/null
fi
cmake --build "$build" -j "$jobs"
