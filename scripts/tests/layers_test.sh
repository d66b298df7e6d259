#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cmake/LockscopeLayers.cmake stops a configure where a box links a box on its
# own floor or above, and lets a downward link through: two small projects
# with the real module, one of each.
set -euo pipefail
module=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

project() {  # $1: directory, $2: what core/capture links
  mkdir -p "$1/cmake" "$1/core/capture" "$1/probes"
  cp "$module" "$1/cmake/"
  cat >"$1/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(layers_probe LANGUAGES C)
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_SOURCE_DIR}/cmake")
include(LockscopeLayers)
add_subdirectory(core/capture)
add_subdirectory(probes)
lockscope_check_layers("${PROJECT_BINARY_DIR}/layers.md")
CM
  echo 'int c(void) { return 0; }' >"$1/core/capture/c.c"
  echo 'int p(void) { return 0; }' >"$1/probes/p.c"
  printf 'add_library(capture_lib STATIC c.c)\ntarget_link_libraries(capture_lib PRIVATE %s)\n' "$2" \
    >"$1/core/capture/CMakeLists.txt"
  printf 'add_library(probes_lib STATIC p.c)\ntarget_link_libraries(probes_lib PRIVATE m)\n' \
    >"$1/probes/CMakeLists.txt"
}

project "$work/up" probes_lib
if out=$(cmake -S "$work/up" -B "$work/up/build" 2>&1); then
  echo "FAIL: core/capture linking probes configured" >&2
  exit 1
fi
grep -q 'capture_lib (core/capture, floor 1) links probes_lib (probes, floor 2)' <<<"$out" || {
  echo "FAIL: the error does not name the upward link:" >&2
  echo "$out" >&2
  exit 1
}

project "$work/down" m
sed -i 's/PRIVATE m)/PRIVATE capture_lib)/' "$work/down/probes/CMakeLists.txt"
cmake -S "$work/down" -B "$work/down/build" >/dev/null
grep -q '| 2 | `probes/` | BPF programs and their loader | core/capture |' "$work/down/build/layers.md" || {
  echo "FAIL: the floors table does not show probes linking core/capture:" >&2
  cat "$work/down/build/layers.md" >&2
  exit 1
}
echo "ok: the upward link stops the configure, the downward one is in the table"
