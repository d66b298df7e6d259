#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What export and import write, as root for a sudo/pkexec user (OutputFile,
# core/capture/include/lockscope/capture/output_file.h): the user's
# file, 0600; a device written in place, not replaced; '-' is stdout.
# Usage: output_files_test.sh LOCKSCOPE CAPTURE LOCK_STAT_TEXT
set -eu
bin=$1 capture=$2 lockstat=$3
[ "$(id -u)" = 0 ] || { echo "skipped: needs root to write files for another user"; exit 77; }
dir=$(mktemp -d /tmp/lockscope-output-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
owned() { # FILE: owned by 65534:65533, mode 600
  [ "$(stat -c '%u:%g %a' "$1")" = "65534:65533 600" ] || fail "$1 is $(stat -c '%u:%g %a' "$1"), want 65534:65533 600"
}

SUDO_UID=65534 SUDO_GID=65533 "$bin" export "$capture" --format folded -o "$dir/e.folded"
owned "$dir/e.folded"
SUDO_UID=65534 SUDO_GID=65533 "$bin" import lock-stat "$lockstat" -o "$dir/i.lockscope.json"
owned "$dir/i.lockscope.json"
PKEXEC_UID=65534 "$bin" report "$capture" -o "$dir/r.txt"
[ "$(stat -c '%u %a' "$dir/r.txt")" = "65534 600" ] || fail "report under pkexec is $(stat -c '%u %a' "$dir/r.txt")"
"$bin" export "$capture" --format folded -o "$dir/root.folded"
[ "$(stat -c '%u %a' "$dir/root.folded")" = "0 600" ] || fail "without sudo the file stays root's"

# A private null device: replacing it would leave a regular file.
mknod "$dir/null" c 1 3
"$bin" export "$capture" --format folded -o "$dir/null"
[ -c "$dir/null" ] || fail "the device node was replaced"
[ "$(ls -A "$dir" | grep -c '^\.')" = 0 ] || fail "temporary files left: $(ls -A "$dir")"

out=$("$bin" export "$capture" --format folded -o -)
[ -n "$out" ] || fail "-o - wrote nothing to stdout"
[ ! -e ./- ] || fail "-o - made a file named '-'"

# A wrong target is one line and exit 1.
if "$bin" export "$capture" --format folded -o "$dir" 2>"$dir/err"; then fail "exported onto a directory"; fi
[ "$(wc -l <"$dir/err")" = 1 ] || fail "not one line: $(cat "$dir/err")"
grep -q "is a directory" "$dir/err" || fail "$(cat "$dir/err")"
echo ok
