# SPDX-License-Identifier: GPL-2.0-or-later
"""What the agent's end-to-end tests share: the agent, the workload, a
record of the same interval, free ports. Real processes only."""
import atexit
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


# The agents' logs: removed when the test passes, kept (and named) when it fails.
_logs = []
_failed = False


def _tidy_logs():
    for path in _logs:
        if _failed:
            print(f"agent log kept: {path}", flush=True)
        else:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def _failed_by_exception(kind, value, tb, previous=sys.excepthook):
    global _failed
    _failed = True
    previous(kind, value, tb)


atexit.register(_tidy_logs)
sys.excepthook = _failed_by_exception


def fail(msg):
    global _failed
    _failed = True
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def skip(msg):
    # ctest's SKIP_RETURN_CODE: the reason is printed, never a pass.
    print("SKIP: " + msg, flush=True)
    sys.exit(77)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Agent:
    """`lockscope agent` on a free loopback port; stop() sends SIGTERM and
    returns the seconds it took to exit."""

    def __init__(self, lockscope, *args, env=None, preexec=None, prefix=()):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="agent-", suffix=".log", delete=False)
        _logs.append(self.log.name)
        cmd = [*prefix, lockscope, "agent", "--listen", "127.0.0.1:0", *args]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, env=env, preexec_fn=preexec)
        self.port = None
        self.scheme = "http"
        deadline = time.time() + 60
        while time.time() < deadline:
            m = re.search(r"serving (https?)://[^:]+:(\d+)/", self.text())
            if m:
                self.scheme, self.port = m.group(1), int(m.group(2))
                return
            if self.proc.poll() is not None:
                fail(f"the agent exited {self.proc.returncode} before serving:\n{self.text()}")
            time.sleep(0.1)
        self.proc.kill()
        fail("the agent did not start serving in 60 s:\n" + self.text())

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def url(self, path):
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def get(self, path, timeout=30):
        with urllib.request.urlopen(self.url(path), timeout=timeout) as r:
            return r.status, r.read()

    def save_capture(self, seconds, path, compress=None):
        """GETs /capture?seconds=N into path (what a user does with curl)."""
        status, body = self.get(f"/capture?seconds={seconds}" + (f"&compress={compress}" if compress else ""))
        with open(path, "wb") as f:
            f.write(body)
        return status

    def stop(self):
        if self.proc.poll() is not None:
            return 0.0
        t0 = time.time()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("the agent did not exit within 10 s of SIGTERM")
        return time.time() - t0


def lock_workload(contend, seconds, mode="filepos"):
    """contend-workload filepos: four threads read() one shared file
    descriptor a byte at a time, so its f_pos_lock mutex is contended 10^5
    times a second or more. A sleeping lock's waits are reported on every
    kernel, where spinning waits (semop-multi's array lock) are not on some
    hosts (PVM without paravirt spinlocks). At normal priority: boosted
    (autogroup nice -10, as record's tests run semop-multi) its mutex
    spinning starves the agent and Prometheus on 2 CPUs (5-s answers to
    /metrics, failed 1-s scrapes).

    mode filepos-chunk reads 64 KiB at a time: the same lock at a rate above
    the agent's --wait-rate-cap, which the probes' own cost hardly changes.
    On filepos the agent, attached part of the time, sees the lock ~20%
    less often than a record attached all the time: while both are attached
    the 1-byte reads' critical sections carry both sessions' programs."""
    return subprocess.Popen([contend, mode, "4", str(seconds)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def load_capture(lockscope, path):
    """A capture as these tests read it: record writes the compact layout
    (format version 2, frames as symbol ids), so it is read back through
    `lockscope convert --capture-version 1`, the layout with named frames."""
    plain = path + ".v1.json"
    r = subprocess.run([lockscope, "convert", path, "-o", plain, "--capture-version", "1"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"lockscope convert {path} exited {r.returncode}:\n{r.stderr}")
    with open(plain) as f:
        return json.load(f)


def record(lockscope, seconds, out):
    """`lockscope record -a` of the next `seconds`; returns the capture."""
    r = subprocess.run([lockscope, "record", "-a", "-d", str(seconds), "-o", out],
                       capture_output=True, text=True, timeout=seconds + 120)
    if r.returncode != 0:
        fail(f"lockscope record exited {r.returncode}:\n{r.stderr}")
    return load_capture(lockscope, out)


def record_started(lockscope, seconds, out, *args):
    """`lockscope record -a -d seconds [args]` started; returns once its
    probes are attached (its interval has begun) with a function that waits
    for it and returns the capture."""
    proc = subprocess.Popen([lockscope, "record", "-a", "-d", str(seconds), "-o", out, *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "probes attached" in line:
            break

    def finish():
        rest = proc.stderr.read()
        if proc.wait(timeout=seconds + 120) != 0:
            fail(f"lockscope record exited {proc.returncode}:\n{''.join(seen)}{rest}")
        return load_capture(lockscope, out)
    return finish


def limit(figure):
    """Counts must agree within 10%. Wait time within 30%: the two sessions
    time each other, since each one's programs run inside the other's timed
    interval (the one attached first reads the clock first at both begin and
    end, so the other's waits leave out the first one's begin program and
    take in its end program), and untimed waits are estimated from each
    session's own sample of timed ones. With semop-multi's ~300-ns waits
    (begin programs ~100-140 ns) they were 8.5-24% apart."""
    return 0.30 if "s/s" in figure else 0.10


# A frame every wait of the workload's lock passes through: f_pos_lock is
# taken in fdget_pos (read, readv, lseek).
WORKLOAD_FRAME = "fdget_pos"


def workload_lock(capture):
    """The workload's lock in a capture: the lock with most waits whose
    stacks pass through WORKLOAD_FRAME."""
    stacks = {s["id"]: s for s in capture["stacks"]}
    best = None
    for lock in capture["locks"]:
        through = False
        for site in lock.get("sites", []):
            frames = stacks.get(site["stack_id"], {}).get("frames", [])
            if any((WORKLOAD_FRAME in f.get("function", "")) for f in frames):
                through = True
        if through and (best is None or lock["wait"]["count"] > best["wait"]["count"]):
            best = lock
    return best


def bpf_preconditions():
    if os.geteuid() != 0:
        skip("needs root to load BPF programs")


def go_pprof(tmp):
    """A function running `go tool pprof -raw URL` (golang-go, no network:
    GOPATH/GOCACHE in tmp, GOPROXY=off) and returning its output; skips
    without the go tool."""
    import shutil
    go = shutil.which("go") or ("/usr/lib/go/bin/go" if os.path.exists("/usr/lib/go/bin/go") else None)
    if not go:
        skip("no go tool (Debian package: golang-go)")
    env = dict(os.environ, GOPATH=f"{tmp}/gopath", GOCACHE=f"{tmp}/gocache", HOME=tmp, GOFLAGS="", GOPROXY="off",
               GO111MODULE="off")

    def raw(url):
        r = subprocess.run([go, "tool", "pprof", "-raw", url], capture_output=True, text=True, env=env, timeout=120)
        if r.returncode != 0:
            fail(f"go tool pprof -raw {url} exited {r.returncode}:\n{r.stderr}")
        return r.stdout
    return raw


def parse_raw(text):
    """go tool pprof -raw's output as (sample type line, [(values, location
    ids, labels)], {location id: function}); labels hold string and numeric
    labels alike (owner_tid:[1234 ])."""
    lines = text.splitlines()
    try:
        at = lines.index("Samples:")
    except ValueError:
        fail("no Samples: in go tool pprof -raw's output:\n" + text[:2000])
    types = lines[at + 1].strip()
    samples, functions = [], {}
    i = at + 2
    while i < len(lines) and lines[i] != "Locations":
        m = re.match(r"^\s+([\d ]+?): ([\d ]*)$", lines[i])
        if m:
            labels = {}
            j = i + 1
            while j < len(lines) and re.match(r"^\s+\w+:\[", lines[j]):
                labels.update((k, v.strip()) for k, v in re.findall(r"(\w+):\[([^\]]*)\]", lines[j]))
                j += 1
            samples.append(([int(x) for x in m.group(1).split()], [int(x) for x in m.group(2).split()], labels))
        i += 1
    for line in lines[i + 1:]:
        m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", line)
        if m:
            functions[int(m.group(1))] = m.group(2)
    return types, samples, functions
