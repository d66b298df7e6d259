#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs what is missing, then configures and builds lockscope into
# build/main (override with LOCKSCOPE_BUILD_DIR). Extra args go to cmake.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
build=${LOCKSCOPE_BUILD_DIR:-$top/build/main}
jobs=${LOCKSCOPE_JOBS:-$(nproc)}
# ccache makes a second checkout (or a rebuilt tree) cheap: paths below the
# checkout's parent are hashed relative and the build directory is left out
# of the hash, so clones and worktrees share hits.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$top")} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Configure whenever there is no build.ninja: a first run, or a configure
# that failed (it leaves CMakeCache.txt behind but writes no build.ninja).
# Once build.ninja exists, ninja re-runs cmake itself when a CMakeLists changes.
if [ ! -f "$build/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKSCOPE_WERROR=ON \
    "${launcher[@]}" "$@" >/dev/null
fi
cmake --build "$build" -j "$jobs"
