#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`go tool pprof -raw` (golang-go, no network: GOPATH/GOCACHE in a temp dir,
GOPROXY=off) reads the agent's delta profile
/debug/pprof/lock_wait?seconds=N over HTTP, as Parca and Grafana Alloy
scrape it: Go mutex-profile sample types, the workload's lock with its
label and frames, and a total delay that matches a `lockscope record -a`
of the same interval within 10%. Without ?seconds the cumulative profile
holds at least as much; /capture?seconds=N is a capture `lockscope report`
reads.

usage: agent_pprof_test.py LOCKSCOPE CONTEND_WORKLOAD"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_harness import (WORKLOAD_FRAME, Agent, bpf_preconditions, fail, go_pprof, limit, lock_workload,  # noqa: E402
                           load_capture, parse_raw, record_started, workload_lock)

lockscope, contend = sys.argv[1], sys.argv[2]
bpf_preconditions()

tmp = tempfile.mkdtemp(prefix="agent-pprof-")
pprof_raw = go_pprof(tmp)
SECONDS = 10


agent = Agent(lockscope, "--window", "1")
work = lock_workload(contend, SECONDS + 20, "filepos-chunk")
try:
    time.sleep(3)
    # Both intervals start together: the profile request once record's probes are attached.
    finish = record_started(lockscope, SECONDS, f"{tmp}/record.json")
    raw = pprof_raw(agent.url(f"/debug/pprof/lock_wait?seconds={SECONDS}"))
    cap = finish()
    types, samples, functions = parse_raw(raw)
    if types.replace("[dflt]", "") != "contentions/count delay/nanoseconds hold/nanoseconds":
        fail(f"sample types: {types!r}")
    print("PASS: sample types", types)
    lock = workload_lock(cap)
    if lock is None:
        fail("record saw no contended f_pos_lock")
    key = lock["key"]
    mine = [s for s in samples if s[2].get("lock") == key]
    if not mine:
        fail(f"no sample labelled lock:[{key}] in the delta profile; labels seen: "
             f"{sorted({s[2].get('lock') for s in samples})[:20]}")
    frames = {functions.get(loc, "?") for s in mine for loc in s[1]}
    if not any(WORKLOAD_FRAME in f for f in frames):
        fail(f"the lock's samples have no {WORKLOAD_FRAME} frame: {sorted(frames)[:30]}")
    print(f"PASS: {len(mine)} samples labelled lock:[{key}], through {sorted(f for f in frames if WORKLOAD_FRAME in f)}")
    delay = sum(s[0][1] for s in mine) / 1e9 / SECONDS
    count = sum(s[0][0] for s in mine) / SECONDS
    rdelay = lock["wait"]["total_ns"] / 1e9 / cap["meta"]["duration_s"]
    rcount = lock["wait"]["count"] / cap["meta"]["duration_s"]
    bad = []
    for name, a, b in (("delay s/s", delay, rdelay), ("contentions/s", count, rcount)):
        diff = abs(a - b) / b
        print(f"{name}: pprof delta {a:.4g}, record {b:.4g} ({diff * 100:.1f}% apart)")
        if diff > limit(name):
            bad.append(name)
    if bad:
        fail("the delta profile and record differ by more than 10%: " + ", ".join(bad))
    print("PASS: the delta's counts match record's within 10%, its delay within 30%")

    cumulative = parse_raw(pprof_raw(agent.url("/debug/pprof/lock_wait")))[1]
    if sum(s[0][1] for s in cumulative) < sum(s[0][1] for s in samples):
        fail("the cumulative profile holds less delay than one delta of it")
    print("PASS: the cumulative profile (no ?seconds) holds at least the delta's delay")

    path = f"{tmp}/agent.lockscope.json"
    agent.save_capture(2, path)
    for cmd in (["check", path], ["report", path]):
        r = subprocess.run([lockscope, *cmd], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"lockscope {' '.join(cmd)} on /capture?seconds=2 exited {r.returncode}:\n{r.stdout}{r.stderr}")
    if key not in subprocess.run([lockscope, "report", path], capture_output=True, text=True).stdout:
        fail(f"lockscope report of /capture?seconds=2 does not name {key}")
    print("PASS: /capture?seconds=2 is a capture lockscope check and report read, with the workload's lock")

    packed = f"{tmp}/agent.lockscope.json.zst"
    agent.save_capture(2, packed, compress="zstd")
    with open(packed, "rb") as f:
        if f.read(4) != b"\x28\xb5\x2f\xfd":
            fail("/capture?compress=zstd is not a zstd frame")
    r = subprocess.run([lockscope, "report", packed], capture_output=True, text=True)
    if r.returncode != 0 or key not in r.stdout:
        fail(f"lockscope report of /capture?seconds=2&compress=zstd exited {r.returncode} or lacks {key}:\n{r.stderr}")
    print(f"PASS: /capture?compress=zstd is one zstd frame ({os.path.getsize(packed)} bytes, "
          f"{os.path.getsize(path)} plain) that lockscope report reads, with the workload's lock")

    # Above the agent's --wait-rate-cap (15000 waits/s per CPU by default)
    # its wait programs attach part of the time and the capture says so.
    filters = load_capture(lockscope, path)["meta"]["filters"]
    share = float(filters.get("wait_share", "1"))
    if rcount > 2 * 15000 * os.cpu_count():
        if not share < 1 or "exact_wait_ns" in filters:
            fail(f"{rcount:.0f} waits/s, above the cap, yet the capture's filters say {filters}")
        print(f"PASS: the agent attached its wait programs {share * 100:.0f}% of the time, and the capture says so")
    else:
        print(f"note: {rcount:.0f} waits/s is below twice the wait rate cap: the part-time attachment is not exercised")
finally:
    work.kill()
    work.wait()
    took = agent.stop()
if took >= 2:
    fail(f"the agent took {took:.2f} s to exit after SIGTERM")
shutil.rmtree(tmp, ignore_errors=True)
print("PASS")
