#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A real Prometheus server (Debian's, started here on loopback with a
temporary data dir, scraping every second) scrapes `lockscope agent` while
contend-workload contends a file's f_pos_lock; its HTTP API answers rate() and
histogram_quantile() on the agent's series, and the figures agree within
10% with a `lockscope record -a` capture of the same interval.

usage: agent_prometheus_test.py LOCKSCOPE CONTEND_WORKLOAD"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_harness import Agent, bpf_preconditions, fail, limit, free_port, record, workload_lock, lock_workload, skip  # noqa: E402

lockscope, contend = sys.argv[1], sys.argv[2]
bpf_preconditions()

prometheus = shutil.which("prometheus")
if not prometheus:
    skip("no prometheus server (Debian package: prometheus)")

tmp = tempfile.mkdtemp(prefix="agent-prom-")
RECORD_S = 20


def query(port, expr, at):
    q = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query?{q}", timeout=10) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        fail(f"Prometheus query {expr!r}: {doc}")
    return doc["data"]["result"]


def scalar(port, expr, at):
    res = query(port, expr, at)
    if len(res) != 1:
        fail(f"Prometheus query {expr!r} at {at}: expected one series, got {res}")
    return float(res[0]["value"][1])


def start_prometheus(agent_port):
    port = free_port()
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: lockscope
    static_configs:
      - targets: ['127.0.0.1:{agent_port}']
""")
    log = open(os.path.join(tmp, "prometheus.log"), "w")
    proc = subprocess.Popen([prometheus, f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/data",
                             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                            stdout=log, stderr=log)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=2) as r:
                if r.status == 200:
                    return proc, port
        except OSError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.3)
    proc.kill()
    fail("Prometheus did not become ready:\n" + open(os.path.join(tmp, "prometheus.log")).read())


def wait_for_scrapes(port, n):
    deadline = time.time() + 30
    while time.time() < deadline:
        res = query(port, 'up{job="lockscope"}', time.time())
        if res and res[0]["value"][1] == "1":
            count = query(port, 'count_over_time(up{job="lockscope"}[1m])', time.time())
            if count and float(count[0]["value"][1]) >= n:
                return
        time.sleep(0.5)
    fail("Prometheus never scraped the agent (up != 1)")


def epoch(rfc3339):
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


agent = Agent(lockscope, "--window", "0.5")
prom, pport = start_prometheus(agent.port)
work = None
try:
    wait_for_scrapes(pport, 2)
    work = lock_workload(contend, RECORD_S + 12, "filepos-chunk")
    time.sleep(3)
    cap = record(lockscope, RECORD_S, os.path.join(tmp, "record.json"))
    time.sleep(3)  # the agent's read-out and Prometheus's scrape of the interval's end
    lock = workload_lock(cap)
    if lock is None or lock["wait"]["count"] < 1000:
        fail(f"record saw no contended f_pos_lock: {lock and lock['wait']}")
    key = lock["key"]
    print(f"workload lock: {key}, record: {lock['wait']['count']} waits, {lock['wait']['total_ns'] / 1e9:.3f} s waited")
    sel = '{job="lockscope",lock="%s"}' % key.replace("\\", "\\\\").replace('"', '\\"')

    t0 = epoch(cap["meta"]["start_time"])
    t1 = t0 + cap["meta"]["duration_s"]
    now = time.time()

    rate = scalar(pport, f"rate(lockscope_lock_contentions_total{sel}[5s])", t1 - 1)
    if not rate > 0:
        fail(f"rate(lockscope_lock_contentions_total{sel}[5s]) = {rate}")
    print(f"PASS: rate(contentions) = {rate:.0f}/s at the interval's end")

    p99 = scalar(pport, f"histogram_quantile(0.99, rate(lockscope_lock_wait_duration_seconds_bucket{sel}[10s]))", t1 - 1)
    if not (math.isfinite(p99) and p99 > 0):
        fail(f"histogram_quantile(0.99, ...) = {p99}")
    print(f"PASS: histogram_quantile(0.99) = {p99 * 1e6:.1f} us")

    # The same interval: the counters' values at its start and end, as
    # Prometheus stored them, against record's capture of it (rates: each
    # side's interval as it measured it).
    def over(metric):
        a = scalar(pport, f"{metric}{sel}", t0 + 1)
        b = scalar(pport, f"{metric}{sel}", t1)
        return (b - a) / (t1 - t0 - 1)

    checks = [("contentions/s", over("lockscope_lock_contentions_total"), lock["wait"]["count"] / cap["meta"]["duration_s"]),
              ("wait s/s", over("lockscope_lock_wait_seconds_total"), lock["wait"]["total_ns"] / 1e9 / cap["meta"]["duration_s"])]
    bad = []
    for name, prom_v, rec_v in checks:
        diff = abs(prom_v - rec_v) / rec_v
        print(f"{name}: Prometheus {prom_v:.4g}, record {rec_v:.4g} ({diff * 100:.1f}% apart)")
        if diff > limit(name):
            bad.append(name)
    if bad:
        fail("figures more than 10% apart: " + ", ".join(bad))
    print("PASS: Prometheus's counts agree with record's within 10%, wait time within 30%")

    # The agent's health made it too.
    windows = scalar(pport, 'lockscope_agent_windows_total{job="lockscope"}', now)
    if windows < 10:
        fail(f"lockscope_agent_windows_total = {windows}")
    lost = query(pport, 'lockscope_agent_events_lost_total{job="lockscope"}', now)
    print("agent health: windows", windows, "lost", {r["metric"]["reason"]: r["value"][1] for r in lost})
    attached = scalar(pport, 'lockscope_agent_wait_attached_ratio{job="lockscope"}', t1)
    print(f"agent: wait programs attached {attached * 100:.0f}% of the last window "
          f"({lock['wait']['count'] / cap['meta']['duration_s']:.0f} waits/s, cap {15000 * os.cpu_count()}/s)")

    # CPU sampling at the agent's own default rate (docs/agent.md), each CPU.
    hz = scalar(pport, 'lockscope_cpu_sampling_hertz{job="lockscope"}', now)
    samples = scalar(pport, 'rate(lockscope_cpu_samples_total{job="lockscope",state="all"}[20s])', t1)
    print(f"CPU sampling: {hz:g} Hz per CPU, {samples:.1f} samples/s on {os.cpu_count()} CPUs")
    if hz != 19:
        fail(f"lockscope_cpu_sampling_hertz = {hz}, not the agent's default 19")
    if not 0 < samples <= 1.2 * hz * os.cpu_count():
        fail(f"{samples:.1f} CPU samples/s: not within {hz:g} Hz on each of {os.cpu_count()} CPUs")
finally:
    if work:
        work.kill()
        work.wait()
    took = agent.stop()
    prom.terminate()
    prom.wait(timeout=20)
print(f"agent exited {took:.2f} s after SIGTERM")
if took >= 2:
    fail(f"the agent took {took:.2f} s to exit after SIGTERM")
shutil.rmtree(tmp, ignore_errors=True)
print("PASS")
