#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`lockscope compare GOOD... -- CANDIDATE... --judge LOCK:FIGURE [--bad BAD...]`
on the committed A/A run sets (reports/tests/fixtures/aa: six real runs of the
semop workload on one kernel). Bad-like runs are those real runs with the
judged lock's every wait four times longer (its histograms shifted two log2
buckets, totals and extremes times four), written next to the build.

usage: judge_cli_test.py LOCKSCOPE AA_DIR WORK_DIR"""
import json
import os
import subprocess
import sys

LOCK = "spinlock@__schedule"
FIGURE = "mean_wait"  # the steadiest figure of these runs (CV 11% over six)


def slower(hist):
    hist = dict(hist)
    hist["hist"] = [0, 0] + hist["hist"][:-2]
    for k in ("total_ns", "min_ns", "max_ns"):
        hist[k] = hist[k] * 4
    return hist


def write_slower(src, dst):
    with open(src, encoding="utf-8") as f:
        cap = json.load(f)
    for lock in cap["locks"]:
        if lock["key"] == LOCK:
            lock["wait"] = slower(lock["wait"])
            for site in lock["sites"]:
                if "wait" in site:
                    site["wait"] = slower(site["wait"])
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(cap, f)


def main():
    lockscope, aa, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    run = lambda i: os.path.join(aa, f"aa{i}.lockscope.json")
    slow = lambda i: os.path.join(work, f"slow{i}.lockscope.json")
    for i in range(1, 7):
        write_slower(run(i), slow(i))
    good = [run(1), run(2), run(3)]
    # runs 3-5: within --max-loss-gap of the good runs' untimed-wait share (1, 2, 5 are 5.2 points apart)
    bad = [slow(3), slow(4), slow(5)]
    cases = [
        ("good-like", [run(4), run(5), run(6)], bad, 0, "good: " + LOCK),
        ("bad-like", [slow(1), slow(3), slow(5)], bad, 1, "bad: " + LOCK),
        ("noisy", [slow(4), run(5), slow(6)], bad, 125, "undecided: " + LOCK),
        ("no --bad, bad-like", [slow(1), slow(3), slow(5)], [], 1, "bad: "),
        ("unknown lock", [run(4)], bad, 128, None),
    ]
    failures = []
    for name, cand, bad_runs, want, text in cases:
        lock = "no_such_lock:" + FIGURE if name == "unknown lock" else LOCK + ":" + FIGURE
        argv = [lockscope, "compare"] + good + ["--"] + cand + ["--judge", lock]
        if bad_runs:
            argv += ["--bad"] + bad_runs
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        ok = p.returncode == want
        if text is not None:
            ok = ok and p.stdout.startswith(text) and p.stderr == ""
        else:
            ok = ok and p.stdout == "" and p.stderr.count("\n") == 1 and "no_such_lock" in p.stderr
        print(f"{name}: exit {p.returncode} (want {want}): {p.stdout.strip() or p.stderr.strip()}")
        if not ok:
            failures.append(name)
    # A usage error is no verdict either: git bisect run must stop, not read "bad".
    p = subprocess.run([lockscope, "compare", run(1), "--", run(2), "--judge", LOCK, "--bogus"],
                       capture_output=True, text=True, timeout=60)
    print(f"usage error: exit {p.returncode} (want 128)")
    if p.returncode != 128:
        failures.append("usage error")
    if failures:
        print("FAILED: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
