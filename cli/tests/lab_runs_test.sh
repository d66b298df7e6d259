#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# How many runs `lockscope lab` records by default: three per kernel when it
# compares two or more kernels (one run a side gives no verdict), one for a
# single kernel, and what --runs says. A stand-in qemu first on PATH counts
# the boots and fails each at once, so no kernel runs; the lab reports the
# failed boots and exits 1.
# usage: lab_runs_test.sh LOCKSCOPE WORK_DIR
set -u
lockscope=$1
work=$2
rm -rf "$work"
mkdir -p "$work/bin"
# A bzImage header is all the lab checks before booting.
head -c 4096 /dev/zero >"$work/bzImage"
printf 'HdrS' | dd of="$work/bzImage" bs=1 seek=514 conv=notrunc 2>/dev/null
cat >"$work/bin/qemu-system-x86_64" <<SH
#!/bin/sh
echo boot >>"$work/boots"
exit 1
SH
chmod +x "$work/bin/qemu-system-x86_64"

fails=0
# expect NAME BOOTS -- LAB-ARGS
expect() {
  name=$1 want=$2
  shift 3
  rm -f "$work/boots"
  PATH="$work/bin:$PATH" "$lockscope" lab --accel tcg --boot-retries 0 --no-compare -o "$work/out-$name" \
    --cache "$work/cache" "$@" -- sleep 1 >"$work/log-$name" 2>&1
  rc=$?
  if grep -q "busybox" "$work/log-$name" && [ ! -e "$work/boots" ]; then
    echo "SKIP: the lab cannot build a guest here: $(tail -1 "$work/log-$name")"
    exit 77
  fi
  boots=$(cat "$work/boots" 2>/dev/null | wc -l)
  if [ "$rc" -ne 1 ] || [ "$boots" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, $boots boots (want 1 and $want)"
    cat "$work/log-$name"
    fails=$((fails + 1))
  else
    echo "ok $name: $boots boots"
  fi
}

expect two-kernels 6 -- -k "a=$work/bzImage" -k "b=$work/bzImage"
expect two-kernels-one-run 2 -- -k "a=$work/bzImage" -k "b=$work/bzImage" --runs 1
expect one-kernel 1 -- -k "a=$work/bzImage"
expect one-kernel-two-runs 2 -- -k "a=$work/bzImage" --runs 2
[ "$fails" -eq 0 ]
