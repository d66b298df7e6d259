#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`lockscope agent --cgroup` on a cgroup of its own (made here, empty at
first) while a hot lock is contended outside it (`contend-workload
filepos-chunk`, well above --wait-rate-cap):
- the filter keeps every outside wait out of the figures (no contention
  counted while the cgroup is empty);
- the wait programs still run for every one of those reports, so the rate
  the cap is compared with counts them: the agent samples
  (lockscope_agent_wait_attached_ratio < 1). Compared after the filter, it
  saw no waits and stayed attached all the time, paying the whole cost;
- the same load started inside the cgroup is counted.

usage: agent_cgroup_test.py LOCKSCOPE CONTEND_WORKLOAD"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_harness import Agent, bpf_preconditions, fail, lock_workload, skip  # noqa: E402

lockscope, contend = sys.argv[1], sys.argv[2]
bpf_preconditions()


def cgroup2_mount():
    """Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or its
    unified/ beside v1 controllers), None without one."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            dash = fields.index("-")
            if fields[dash + 1] == "cgroup2" and fields[3] == "/":
                return fields[4]
    return None


ROOT = cgroup2_mount()
if not ROOT:
    skip("no cgroup v2 hierarchy is mounted")
name = f"/lockscope-agent-cgroup-{os.getpid()}"
group = ROOT + name
os.mkdir(group)


def metric(text, name):
    """The sum of a family's samples, 0 when absent."""
    return sum(float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))


def join_group():
    with open(f"{group}/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))


agent = None
outside = None
try:
    agent = Agent(lockscope, "--window", "1", "--no-cpu", "--cgroup", name)
    outside = lock_workload(contend, 10, "filepos-chunk")
    ratio, deadline = 1.0, time.time() + 8
    while time.time() < deadline and ratio >= 1:
        time.sleep(0.5)
        metrics = agent.get("/metrics")[1].decode()
        ratio = metric(metrics, "lockscope_agent_wait_attached_ratio")
    waits = metric(metrics, "lockscope_lock_contentions_total")
    if ratio >= 1:
        fail("the cgroup is empty, the hot lock outside it: the agent never sampled "
             f"(lockscope_agent_wait_attached_ratio {ratio})")
    if waits != 0:
        fail(f"{waits:.0f} contentions counted while the cgroup held no task")
    print(f"PASS: outside load only: attached ratio {ratio:.3f}, no contention counted")
    outside.wait()
    outside = None
    inside = subprocess.Popen([contend, "filepos-chunk", "2", "3"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, preexec_fn=join_group)
    if inside.wait(timeout=60) != 0:
        fail(f"contend-workload in the cgroup exited {inside.returncode}")
    time.sleep(2.5)  # two windows: its waits read out
    waits = metric(agent.get("/metrics")[1].decode(), "lockscope_lock_contentions_total")
    if waits <= 0:
        fail("the same load inside the cgroup was not counted")
    print(f"PASS: the load inside the cgroup: {waits:.0f} contentions counted")
finally:
    if outside:
        outside.kill()
        outside.wait()
    took = agent.stop() if agent else 0
    os.rmdir(group)
if took >= 2:
    fail(f"the agent took {took:.2f} s to exit after SIGTERM")
print("PASS")
