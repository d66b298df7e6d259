#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`lockscope agent` with the probes off unless asked for, as record takes
them (--syscalls, --user-locks): read out every window like the default
probes. While `contend-workload semop` and `contend-workload mutex` run:
- lockscope_syscall_calls_total{syscall="semop"} grows by exactly the
  workload's semop() calls (nothing else on the test machine calls semop;
  probes.WindowDrain checks exact counts per window with failing calls);
  errors stay 0, the duration histogram counts every call;
- the workload's pthread mutex has its own series, type pthread-mutex, and
  the lock series together count at least its lock() calls (a lock's first
  window goes to lock="other": a series starts once the lock is ranked);
- `promtool check metrics` finds nothing to say about the scrape;
- /capture?seconds=N holds the syscall table and the user lock, and
  `lockscope report` prints them;
- --holder-stacks as record takes it: drained per window where the hold probe
  attaches, else skipped with the reason; /debug/pprof/lock_owners follows.

usage: agent_optin_test.py LOCKSCOPE CONTEND_WORKLOAD"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_harness import Agent, bpf_preconditions, fail, load_capture, skip  # noqa: E402

lockscope, contend = sys.argv[1], sys.argv[2]
bpf_preconditions()
tmp = tempfile.mkdtemp(prefix="agent-optin-")
SECONDS = 4


def metric(text, name, labels):
    """A sample's value, None when absent; labels: the exact label text."""
    m = re.search("^" + re.escape(f"{name}{{{labels}}}") + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def lock_total(text, name):
    return sum(float(v) for v in re.findall(rf"^{name}{{[^}}]*}} (\S+)$", text, re.M))


def run_workload(mode, threads):
    r = subprocess.run([contend, mode, str(threads), str(SECONDS)], capture_output=True, text=True,
                       timeout=SECONDS + 60)
    if r.returncode != 0:
        fail(f"contend-workload {mode} exited {r.returncode}:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])["lockscope_result"]["ops"]


def check_holder_stacks():
    """--holder-stacks as record takes it: its refused combinations, and the
    holder scan read out per window or skipped with the reason the log gives;
    /debug/pprof/lock_owners serves the holders exactly when it attached."""
    r = subprocess.run([lockscope, "agent", "--holder-stacks", "--hold-sample", "10"], capture_output=True,
                       text=True, timeout=30)
    if r.returncode == 0 or len(r.stderr.strip().splitlines()) != 1 or "--hold-sample" not in r.stderr:
        fail(f"agent --holder-stacks --hold-sample 10: exit {r.returncode}, stderr {r.stderr!r}")
    print(f"PASS: agent --holder-stacks --hold-sample 10 is refused: {r.stderr.strip()}")
    agent = Agent(lockscope, "--window", "1", "--no-cpu", "--holder-stacks")
    try:
        m = re.search(r"^holder_stacks: (attached|skipped)(.*)$", agent.text(), re.M)
        if not m:
            fail("the agent's log says nothing of holder_stacks:\n" + agent.text())
        try:
            status, body = agent.get("/debug/pprof/lock_owners?seconds=1")
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
        want = 200 if m.group(1) == "attached" else 404
        if status != want or (want == 200 and body[:2] != b"\x1f\x8b"):
            fail(f"holder_stacks {m.group(1)}: /debug/pprof/lock_owners answered {status} {body[:200]!r}")
        capture = f"{tmp}/holders.lockscope.json"
        agent.save_capture(1, capture)
        cap = load_capture(lockscope, capture)
        if cap["meta"]["filters"].get("holder_stacks") != "true":
            fail(f"the agent's capture does not say holder_stacks: {cap['meta']['filters']}")
        print(f"PASS: agent --holder-stacks: holder_stacks {m.group(1)}{m.group(2)}; "
              f"/debug/pprof/lock_owners {status}; its capture says so")
    finally:
        took = agent.stop()
    if took >= 2:
        fail(f"the agent took {took:.2f} s to exit after SIGTERM")


check_holder_stacks()

agent = Agent(lockscope, "--window", "1", "--syscalls", "--user-locks")
try:
    log = agent.text()
    for probe in ("syscall:semop", "user_lock:pthread_mutex_lock"):
        if not re.search(rf"^{probe}: attached", log, re.M):
            skip(f"{probe} did not attach here:\n{log}")
    time.sleep(2.5)
    before = agent.get("/metrics")[1].decode()
    sem_before = metric(before, "lockscope_syscall_calls_total", 'syscall="semop"') or 0
    semops = run_workload("semop", 2)
    locks = run_workload("mutex", 3)
    time.sleep(2.5)  # two windows: every call read out
    after = agent.get("/metrics")[1].decode()

    sem = metric(after, "lockscope_syscall_calls_total", 'syscall="semop"')
    if sem is None:
        fail("no lockscope_syscall_calls_total{syscall=\"semop\"} in /metrics:\n" + after[:3000])
    grew = sem - sem_before
    if not semops <= grew <= semops + 1000:
        fail(f"semop calls grew by {grew:.0f} over the workload's {semops}")
    errors = metric(after, "lockscope_syscall_errors_total", 'syscall="semop"')
    count = metric(after, "lockscope_syscall_duration_seconds_count", 'syscall="semop"')
    inf = metric(after, "lockscope_syscall_duration_seconds_bucket", 'syscall="semop",le="+Inf"')
    if errors != 0 or count != sem or inf != sem:
        fail(f"semop: errors {errors}, histogram count {count}, +Inf bucket {inf}, calls {sem}")
    print(f"PASS: semop calls grew by {grew:.0f} for the workload's {semops}; histogram count = calls, no errors")

    key = 'lock="pthread-mutex@ls_test_mutex_worker",lock_type="pthread-mutex",lock_name="",cgroup=""'
    own = metric(after, "lockscope_lock_contentions_total", key)
    if not own:
        fail("the workload's mutex has no series of its own:\n" +
             "\n".join(l for l in after.splitlines() if "pthread-mutex" in l)[:3000])
    total = lock_total(after, "lockscope_lock_contentions_total") - lock_total(before, "lockscope_lock_contentions_total")
    if total < locks:
        fail(f"the lock series grew by {total:.0f}, fewer than the workload's {locks} lock() calls")
    print(f"PASS: {key}: {own:.0f} waits in its own series; all series grew by {total:.0f} "
          f"for the workload's {locks} lock() calls")

    path = f"{tmp}/metrics.txt"
    with open(path, "w") as f:
        f.write(after)
    promtool = shutil.which("promtool")
    if not promtool:
        skip("no promtool (Debian package: prometheus)")
    with open(path) as f:
        r = subprocess.run([promtool, "check", "metrics"], stdin=f, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
        fail(f"promtool check metrics: exit {r.returncode}\n{r.stdout}{r.stderr}")
    print("PASS: promtool check metrics finds nothing to say")

    work = subprocess.Popen([contend, "semop", "2", "6"], stdout=subprocess.DEVNULL)
    mutex = subprocess.Popen([contend, "mutex", "3", "6"], stdout=subprocess.DEVNULL)
    capture = f"{tmp}/window.lockscope.json"
    agent.save_capture(3, capture)
    work.wait()
    mutex.wait()
    cap = load_capture(lockscope, capture)
    names = {s["name"] for s in cap.get("syscalls", []) if s["latency"]["count"] > 0}
    if "semop" not in names:
        fail(f"/capture?seconds=3 has no semop calls: {sorted(names)}")
    user = [l for l in cap["locks"] if l["type"] == "pthread-mutex" and l["wait"]["count"] > 0]
    if not user:
        fail("/capture?seconds=3 has no pthread-mutex lock")
    rep = subprocess.run([lockscope, "report", capture], capture_output=True, text=True, timeout=120)
    if rep.returncode != 0 or "semop" not in rep.stdout or "pthread-mutex" not in rep.stdout:
        fail(f"lockscope report of the window: exit {rep.returncode}\n{rep.stdout[:3000]}{rep.stderr}")
    print(f"PASS: /capture?seconds=3 holds {sorted(names)} and {len(user)} pthread-mutex locks; report prints them")
finally:
    took = agent.stop()
if took >= 2:
    fail(f"the agent took {took:.2f} s to exit after SIGTERM")
shutil.rmtree(tmp, ignore_errors=True)
print("PASS")
