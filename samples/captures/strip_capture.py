#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Shrink a lockscope capture to its top locks so an example pair stays small.

Keeps the LOCKS locks with the most hold + wait time, each with its SITES
busiest call sites, the CPU_STACKS most sampled on-CPU stacks, and only the
stacks those reference; everything else (meta, probes, stats, the CPU
sample totals, syscalls, functions, workload) is kept as is.
Stats still describe the whole recording, which is why the README says the
files were stripped. Validate the result with `lockscope check`.

--keep KEY keeps that lock (and SITES of its sites) whatever its rank, so
every run of a run set keeps the locks a test compares.

usage: strip_capture.py IN OUT [--locks 25] [--sites 6] [--cpu-stacks 50] [--keep KEY ...]
"""
import argparse
import json
import sys


def busy(entry):
    return sum(entry.get(k, {}).get("total_ns", 0) for k in ("hold", "wait"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--locks", type=int, default=25)
    ap.add_argument("--sites", type=int, default=6)
    ap.add_argument("--cpu-stacks", type=int, default=50)
    ap.add_argument("--keep", action="append", default=[], metavar="KEY")
    a = ap.parse_args()
    try:
        with open(a.input) as f:
            cap = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"strip_capture: cannot read {a.input}: {e}")
    if cap.get("format") != "lockscope-capture":
        sys.exit(f"strip_capture: {a.input} is not a lockscope capture (format {cap.get('format')!r})")
    ranked = sorted(cap.get("locks", []), key=busy, reverse=True)
    locks = ranked[: a.locks] + [l for l in ranked[a.locks :] if l.get("key") in a.keep]
    keep = set()
    for lock in locks:
        lock["sites"] = sorted(lock.get("sites", []), key=busy, reverse=True)[: a.sites]
        keep.update(s["stack_id"] for s in lock["sites"])
    cpu = cap.get("cpu")
    if isinstance(cpu, dict) and isinstance(cpu.get("stacks"), list):
        cpu["stacks"] = sorted(cpu["stacks"], key=lambda e: e.get("count", 0), reverse=True)[: a.cpu_stacks]
        keep.update(e["stack_id"] for e in cpu["stacks"] if "stack_id" in e)
    cap["locks"] = locks
    cap["stacks"] = [s for s in cap.get("stacks", []) if s["id"] in keep]
    with open(a.output, "w") as f:
        json.dump(cap, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
