#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `lockscope lab bisect` refuses bad input before building anything: one line
# on stderr, a non-zero exit, and no output directory. The history is a small
# git repo made here (no kernel is built: every case fails its checks first).
# usage: bisect_input_test.sh LOCKSCOPE WORK_DIR
set -u
lockscope=$1
work=$2
rm -rf "$work"
# The build directory may lie inside a git checkout: git must not find it from "plain".
GIT_CEILING_DIRECTORIES=$(dirname "$work")
export GIT_CEILING_DIRECTORIES
mkdir -p "$work/repo" "$work/plain"
cd "$work/repo" || exit 1
git init -q && git config user.name t && git config user.email t@t.invalid
for i in 0 1 2; do echo "$i" >"f$i" && git add "f$i" && git commit -q -m "c$i"; done
git checkout -q -b side HEAD~2 && echo s >s && git add s && git commit -q -m side && git checkout -q -
cd "$work" || exit 1

fails=0
# expect NAME EXIT-NONZERO STDERR-SUBSTRING -- ARGS
expect() {
  name=$1 want=$2
  shift 3
  out=$work/out-$name
  "$lockscope" lab bisect -o "$out" "$@" >"$work/stdout" 2>"$work/stderr"
  rc=$?
  lines=$(wc -l <"$work/stderr")
  if [ "$rc" -eq 0 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" "$work/stderr" || [ -e "$out" ]; then
    echo "FAIL $name: exit $rc, $lines stderr lines, output dir $( [ -e "$out" ] && echo exists || echo absent ):"
    cat "$work/stderr"
    fails=$((fails + 1))
  else
    echo "ok   $name: exit $rc: $(cat "$work/stderr")"
  fi
}

expect not-git "not a git tree" -- --tree "$work/plain" --good HEAD~1 --bad HEAD -- true
expect no-dir "no such directory" -- --tree "$work/none" --good HEAD~1 --bad HEAD -- true
expect unknown-rev "unknown revision 'v9.9'" -- --tree "$work/repo" --good v9.9 --bad HEAD -- true
expect not-ancestor "is not an ancestor" -- --tree "$work/repo" --good side --bad HEAD -- true
expect reversed "is not an ancestor" -- --tree "$work/repo" --good HEAD --bad HEAD~2 -- true
expect same "the same commit" -- --tree "$work/repo" --good HEAD --bad HEAD -- true
expect no-workload "no workload" -- --tree "$work/repo" --good HEAD~2 --bad HEAD
expect missing-workload "workload '/no/such/program' not found" -- --tree "$work/repo" --good HEAD~2 --bad HEAD -- /no/such/program
expect bad-figure "unknown figure 'speed'" -- --tree "$work/repo" --good HEAD~2 --bad HEAD --figure speed -- true
expect one-run "one run a commit gives no verdict: use --runs 2 or more" -- --tree "$work/repo" --good HEAD~2 --bad HEAD --runs 1 -- true
expect max-runs "--max-runs (2) is below --runs (3)" -- --tree "$work/repo" --good HEAD~2 --bad HEAD --max-runs 2 -- true
expect no-resume "holds no bisect to resume" -- --resume "$work/plain"
expect resume-and-options "cannot change it" -- --resume "$work/plain" --lock x
[ "$fails" -eq 0 ]
