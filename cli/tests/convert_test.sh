#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# lockscope convert: old -> compact + zstd -> old gives the same text as the
# old file rewritten directly (the baseline fixture byte for byte), `check` reads the compressed compact file,
# a capture compressed by hand with zstd or pzstd (Debian's zstd package) reads as the plain one, and a damaged
# compressed file is one line and exit 1.
# usage: convert_test.sh LOCKSCOPE FIXTURES_DIR
set -u
L=$1 F=$2
D=$(mktemp -d) || exit 1
trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for name in baseline patched owners; do
  "$L" convert "$F/$name.lockscope.json" -o "$D/$name.lockscope.json.zst" 2>/dev/null || fail "convert $name"
  out=$("$L" check "$D/$name.lockscope.json.zst") || fail "check $name.zst"
  case $out in *": ok ("*) ;; *) fail "check said: $out" ;; esac
  "$L" convert "$D/$name.lockscope.json.zst" -o "$D/$name.back.lockscope.json" --capture-version 1 --pretty 2>/dev/null \
    || fail "convert back $name"
  "$L" convert "$F/$name.lockscope.json" -o "$D/$name.v1.lockscope.json" --capture-version 1 --pretty 2>/dev/null \
    || fail "convert $name to version 1"
  cmp -s "$D/$name.v1.lockscope.json" "$D/$name.back.lockscope.json" || fail "$name: old -> compact.zst -> old differs"
  [ "$(head -c 4 "$D/$name.lockscope.json.zst" | od -An -tx1 | tr -d ' \n')" = 28b52ffd ] || fail "$name: not zstd"
done
cmp -s "$F/baseline.lockscope.json" "$D/baseline.back.lockscope.json" || fail "baseline fixture not given back"
# pzstd puts a skippable frame ahead of each frame it writes.
for tool in zstd pzstd; do
  command -v $tool >/dev/null || fail "$tool is not installed (Debian: zstd)"
  $tool -q -c "$F/baseline.lockscope.json" > "$D/hand-$tool.lockscope.json.zst" || fail "$tool failed"
  "$L" convert "$D/hand-$tool.lockscope.json.zst" -o "$D/hand-$tool.lockscope.json" --capture-version 1 --pretty \
    2>/dev/null || fail "convert of the $tool file"
  cmp -s "$F/baseline.lockscope.json" "$D/hand-$tool.lockscope.json" || fail "the $tool file reads differently"
done
head -c 100 "$D/baseline.lockscope.json.zst" > "$D/cut.lockscope.json.zst"
err=$("$L" check "$D/cut.lockscope.json.zst" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "cut file: exit $rc"
[ "$err" = "$D/cut.lockscope.json.zst: truncated zstd data: the file ends inside a compressed frame" ] || fail "cut file said: $err"
echo ok
