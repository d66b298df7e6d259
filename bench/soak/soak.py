#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Soak: `lockscope record` for a long run under a fork-heavy load (a shell
spawning /bin/true in a loop) plus a syscall-heavy one (semop-multi --multi
and timer-stress), sampling the recorder's RSS and the entries of every BPF
map it holds. After the recording it samples the RSS every 0.2 s while the
capture is assembled and written, and the peak over the whole run comes from
the recorder's rusage (ru_maxrss). A benchmark, not a test: it prints a time
series and a summary; bench/soak/README.md keeps the numbers.

  bench/soak/soak.py [-d SECONDS] [-i INTERVAL] [-m all|workload] [-n NICE] [-b BUILD_DIR] [-- EXTRA RECORD FLAGS]

-m all:      `lockscope record -a -d SECONDS` with the loads running beside it.
-m workload: `lockscope record -d SECONDS -- sh -c LOADS`: the loads are the
             workload, so every process they fork joins the pid filter.
The loads run under `nice -n NICE` (default 10) so the recorder keeps up.
Needs root. On a shared machine take /tmp/lockscope-bpf.lock around short
runs; a 10-minute run would hold it from everyone.
"""
import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

COUNTED_TYPES = {"hash", "lru_hash", "percpu_hash", "lru_percpu_hash", "stack_trace"}


def build_dir(arg):
    if arg:
        return arg
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for d in sorted(glob.glob(os.path.join(top, "build", "*"))):
        if os.access(os.path.join(d, "cli", "lockscope"), os.X_OK):
            return d
    sys.exit("soak.py: no build/*/cli/lockscope (build it or pass -b)")


def status_kib(pid, *names):
    """The named /proc/PID/status fields in KiB (VmRSS, VmHWM, RssAnon, ...); None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return tuple(int(fields[n].split()[0]) for n in names)
    except (OSError, KeyError, ValueError):
        return None


def rss_kib(pid):
    return status_kib(pid, "VmRSS", "VmHWM")


def map_ids(pid):
    ids = set()
    for info in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            with open(info) as f:
                for line in f:
                    if line.startswith("map_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return sorted(ids)


def bpftool(*args):
    out = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else None


def map_usage(pid, meta):
    usage = {}
    for mid in map_ids(pid):
        if mid not in meta:
            show = bpftool("map", "show", "id", str(mid)) or {}
            meta[mid] = (show.get("name", str(mid)), show.get("type", "?"), show.get("max_entries", 0))
        name, mtype, max_entries = meta[mid]
        if mtype not in COUNTED_TYPES:
            continue
        dump = bpftool("map", "dump", "id", str(mid))
        if dump is not None:
            usage[name] = (len(dump), max_entries)
    return usage


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-d", type=float, default=600, help="recording seconds (default 600)")
    ap.add_argument("-i", type=float, default=10, help="seconds between samples (default 10)")
    ap.add_argument("-m", choices=["all", "workload"], default="all")
    ap.add_argument("-n", type=int, default=10, help="nice level of the loads (default 10)")
    ap.add_argument("-b", default="", help="build directory (default: the first build/* with a lockscope)")
    ap.add_argument("extra", nargs="*", help="extra `lockscope record` flags (after --)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("soak.py: needs root (BPF)")
    b = build_dir(a.b)
    lockscope = os.path.join(b, "cli", "lockscope")
    semop = os.path.join(b, "samples", "bin", "semop-multi")
    timer = os.path.join(b, "samples", "bin", "timer-stress")
    secs = str(int(a.d) + 5)
    loads = [
        "while :; do /bin/true; done",
        f"{semop} --multi --threads 2 --duration {secs} >/dev/null",
        f"{timer} --procs 1 --threads 2 --duration {secs} >/dev/null",
    ]
    tmp = tempfile.mkdtemp(prefix="lockscope-soak-")
    cap = os.path.join(tmp, "soak.lockscope.json")
    cmd = [lockscope, "record", "-d", str(a.d), "-o", cap, *a.extra]
    background = []
    nice = ["nice", "-n", str(a.n)]
    if a.m == "all":
        cmd.append("-a")
        for load in loads:
            background.append(subprocess.Popen([*nice, "sh", "-c", load], start_new_session=True,
                                               stdout=subprocess.DEVNULL))
    else:
        cmd += ["--", *nice, "sh", "-c", " & ".join(loads) + " & wait"]
    err = open(os.path.join(tmp, "record.err"), "w")
    rec = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    meta, peak_maps = {}, {}
    start = time.monotonic()
    assembly = []  # (t, rss) after the recording time, while the capture is assembled and written
    rc, maxrss = None, None
    print("t_s\trss_kib\thwm_kib\t" + "maps (entries/max)", flush=True)
    try:
        # Not rec.poll(): it would reap the recorder before wait4 reads its rusage.
        while os.waitid(os.P_PID, rec.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            left = a.d - (time.monotonic() - start)
            time.sleep(a.i if left > a.i else max(left, 0.2))
            r = rss_kib(rec.pid)
            if r is None:
                break
            t = time.monotonic() - start
            if t >= a.d:
                assembly.append((t, r[0]))
                print(f"{t:.1f}\t{r[0]}\t{r[1]}\t(recording over: assembling, writing)", flush=True)
                continue
            usage = map_usage(rec.pid, meta)
            for name, (n, mx) in usage.items():
                peak_maps[name] = (max(n, peak_maps.get(name, (0, mx))[0]), mx)
            maps = " ".join(f"{k}={n}/{mx}" for k, (n, mx) in sorted(usage.items()) if n)
            print(f"{t:.0f}\t{r[0]}\t{r[1]}\t{maps}", flush=True)
        # wait4 rather than Popen.wait: its rusage has the peak RSS of the whole run.
        _, status, usage = os.wait4(rec.pid, 0)
        rc, maxrss = os.waitstatus_to_exitcode(status), usage.ru_maxrss
        rec.returncode = rc
    finally:
        for p in background:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        if rec.poll() is None:
            rec.kill()
    err.close()
    with open(os.path.join(tmp, "record.err")) as f:
        warnings = [l.strip() for l in f if l.startswith(("warning", "note", "lockscope record"))]
    print(f"# mode {a.m}, {a.d:.0f} s, exit {rc}, capture {os.path.getsize(cap) if os.path.exists(cap) else 0} bytes")
    if assembly:
        print(f"# after the recording: {len(assembly)} RSS samples over {assembly[-1][0] - a.d:.1f} s, "
              f"max {max(r for _, r in assembly)} KiB")
    print(f"# peak RSS of the whole run (ru_maxrss): {maxrss} KiB")
    print("# peak map entries: " + " ".join(f"{k}={n}/{mx}" for k, (n, mx) in sorted(peak_maps.items())))
    for w in warnings:
        print("# " + w)
    print(f"# files in {tmp}")


if __name__ == "__main__":
    main()
