#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`lockscope agent` without root: an unprivileged user (nobody) holding
only CAP_BPF, CAP_PERFMON and CAP_SYSLOG, set with setpriv as docs/agent.md
says (contrib/systemd/lockscope-agent.service grants the same), attaches the
probes, counts the workload's contention in /metrics and names its kernel
frames in the delta profile (kallsyms shows addresses only with
CAP_SYSLOG); its effective capabilities are exactly those three. Without
them it stops at start-up with one line and exit 1.

usage: agent_privileges_test.py LOCKSCOPE CONTEND_WORKLOAD"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_harness import Agent, bpf_preconditions, fail, lock_workload, skip  # noqa: E402

CAP_SYSLOG, CAP_PERFMON, CAP_BPF = 34, 38, 39
NOBODY = "65534"

lockscope, contend = sys.argv[1], sys.argv[2]
bpf_preconditions()
setpriv = shutil.which("setpriv")
if not setpriv:
    skip("no setpriv (Debian package: util-linux)")
with open("/proc/sys/kernel/cap_last_cap") as f:
    if int(f.read()) < CAP_BPF:
        skip("this kernel has no CAP_BPF/CAP_PERFMON (before 5.8): the agent needs root there")
as_nobody = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
caps = "+bpf,+perfmon,+syslog"


def status(pid):
    with open(f"/proc/{pid}/status") as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


# Without the capabilities: one line, exit 1, nothing served.
r = subprocess.run([*as_nobody, "--inh-caps=-all", lockscope, "agent", "--listen", "127.0.0.1:0"],
                   capture_output=True, text=True, timeout=60)
lines = r.stderr.strip().splitlines()
if r.returncode != 1 or len(lines) != 1 or "CAP_BPF+CAP_PERFMON" not in lines[0]:
    fail(f"without capabilities: exit {r.returncode}, stderr:\n{r.stderr}")
print("PASS: without capabilities:", lines[0])

agent = Agent(lockscope, "--window", "1", prefix=[*as_nobody, f"--inh-caps={caps}", f"--ambient-caps={caps}"])
work = lock_workload(contend, 30)
try:
    st = status(agent.proc.pid)
    if st["Uid"].split() != [NOBODY] * 4:
        fail(f"the agent runs as uid {st['Uid']}, not nobody")
    want = (1 << CAP_BPF) | (1 << CAP_PERFMON) | (1 << CAP_SYSLOG)
    if int(st["CapEff"], 16) != want:
        fail(f"effective capabilities {st['CapEff']}, want {want:016x} (bpf, perfmon, syslog)")
    print(f"PASS: runs as nobody with CapEff {st['CapEff']}")
    time.sleep(3)
    _, body = agent.get("/metrics")
    text = body.decode()
    attached = re.search(r'^lockscope_agent_probe_attached\{probe="lock_contention",[^}]*\} 1$', text, re.M)
    if not attached:
        fail("lock_contention is not attached:\n" + "\n".join(
            line for line in text.splitlines() if "probe_attached" in line))
    contentions = sum(float(v) for v in re.findall(r"^lockscope_lock_contentions_total\{[^}]*\} (\S+)$", text, re.M))
    if contentions <= 0:
        fail("no contention counted in /metrics while contend-workload ran")
    print(f"PASS: /metrics counts {contentions:.0f} contentions")
    _, gz = agent.get("/debug/pprof/lock_wait?seconds=2", timeout=60)
    profile = gzip.decompress(gz)
    if b"do_syscall_64" not in profile:
        fail("the delta profile names no do_syscall_64 frame: kernel addresses unresolved without root?")
    print("PASS: the delta profile names the kernel frames (do_syscall_64)")
    took = agent.stop()
    if took > 2.0:
        fail(f"SIGTERM took {took:.1f} s (limit 2 s)")
    if agent.proc.returncode != 0:
        fail(f"the agent exited {agent.proc.returncode} on SIGTERM:\n{agent.text()}")
    print(f"PASS: SIGTERM, exit 0 in {took:.2f} s")
finally:
    agent.stop()
    work.kill()
    work.wait()
