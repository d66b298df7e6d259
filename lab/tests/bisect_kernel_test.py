#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`lockscope lab bisect` on a synthetic kernel history (label kernel-build).

The history is made here from Debian's linux-source-6.1 tarball: the pristine
source, then eight commits: harmless ones (a comment in a built .c file, a file
outside the build), one that does not build and the next that mends it, and
the posix-timer-lookup seed (samples/kernel-patches/04: every timer_gettime()
takes the global hash_lock). Commit dates are fixed, so the commit ids, and
with them the lab's cached kernels, are the same in every build directory.

Checked, on real builds and real guest recordings:
  1. the bisect names the seed commit, skips the broken one saying it does not
     build, and judges at most ceil(log2(8)) + 2 = 5 commits; the lock is
     picked without --lock and is hash_lock;
  2. interrupted with SIGINT after its first step, --resume finishes it
     without recording that step again;
  3. a second bisect, over commits the first one built, finds every kernel in
     the cache;
  4. an A/A range (comment-only commits) is refused with one line, and a lock
     on neither endpoint is refused with one line.

usage: bisect_kernel_test.py LOCKSCOPE TIMER_STRESS SEED_PATCH WORK_DIR"""
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time

TARBALL = "/usr/src/linux-source-6.1.tar.xz"
HISTORY_VERSION = "1"  # change when the commits below change
SEED_SUBJECT = "posix-timers: look timers up under the global hash_lock (seed 04)"
BROKEN_SUBJECT = "fork: a commit that does not build"


def git(repo, *args, date=None):
    env = dict(os.environ)
    env.update({"GIT_AUTHOR_NAME": "Lab Bisect", "GIT_AUTHOR_EMAIL": "bisect@lockscope.invalid",
                "GIT_COMMITTER_NAME": "Lab Bisect", "GIT_COMMITTER_EMAIL": "bisect@lockscope.invalid"})
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def append(repo, path, text):
    with open(os.path.join(repo, path), "a", encoding="utf-8") as f:
        f.write(text)


def make_history(repo, patch):
    """The repo and its commit ids [base, c1..c8]; reused when already made."""
    marker = os.path.join(repo, ".git", "lockscope-history")
    if os.path.exists(marker):
        with open(marker, encoding="utf-8") as f:
            lines = f.read().split()
        if lines and lines[0] == HISTORY_VERSION:
            return lines[1:]
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    t0 = time.time()
    subprocess.run(["tar", "-xf", TARBALL, "--strip-components=1", "-C", repo], check=True)
    git(repo, "init", "-q")
    git(repo, "config", "gc.auto", "0")
    git(repo, "add", "-A", "-f", ".")
    shas = []
    day = [0]

    def commit(subject):
        day[0] += 1
        git(repo, "commit", "-q", "-m", subject, date=f"2026-01-{day[0]:02d}T12:00:00+00:00")
        shas.append(git(repo, "rev-parse", "HEAD"))

    commit("linux-source-6.1 as Debian ships it")
    append(repo, "kernel/sys.c", "\n/* lockscope bisect test: a comment in a built file */\n")
    git(repo, "add", "-f", "kernel/sys.c")
    commit("sys: a comment")
    append(repo, "Documentation/lockscope-bisect-note.txt", "A file outside the build.\n")
    git(repo, "add", "-f", "Documentation/lockscope-bisect-note.txt")
    commit("Documentation: a note outside the build")
    append(repo, "ipc/sem.c", "\n/* lockscope bisect test: another comment */\n")
    git(repo, "add", "-f", "ipc/sem.c")
    commit("ipc/sem: a comment")
    with open(os.path.join(repo, "kernel/fork.c"), encoding="utf-8") as f:
        fork = f.read()
    append(repo, "kernel/fork.c", "\n#error lockscope bisect test: this commit does not build\n")
    git(repo, "add", "-f", "kernel/fork.c")
    commit(BROKEN_SUBJECT)
    with open(os.path.join(repo, "kernel/fork.c"), "w", encoding="utf-8") as f:
        f.write(fork)
    git(repo, "add", "-f", "kernel/fork.c")
    commit("fork: mend the build")
    git(repo, "apply", "--index", patch)
    commit(SEED_SUBJECT)
    append(repo, "kernel/fork.c", "\n/* lockscope bisect test: a comment after the seed */\n")
    git(repo, "add", "-f", "kernel/fork.c")
    commit("fork: a comment")
    append(repo, "README.lockscope-bisect", "Outside the build, after the seed.\n")
    git(repo, "add", "-f", "README.lockscope-bisect")
    commit("a file outside the build")
    with open(marker, "w", encoding="utf-8") as f:
        f.write(HISTORY_VERSION + "\n" + "\n".join(shas) + "\n")
    print(f"history made in {time.time() - t0:.0f} s: {len(shas) - 1} commits after the base", flush=True)
    return shas


class Failures:
    def __init__(self):
        self.items = []

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.items.append(what)


def bisect_cmd(lockscope, repo, good, bad, out, workload, *extra, runs="5"):
    # Five runs: the seed's hash_lock hold time varies ~30% between runs on this loaded host, and with
    # three runs a side Welch's t at alpha 0.01 cannot call any change of a figure that noisy.
    return [lockscope, "lab", "bisect", "--tree", repo, "--good", good, "--bad", bad, "-o", out,
            "--runs", runs, "--record-args", "--no-cpu"] + list(extra) + ["--"] + workload


def load(out):
    with open(os.path.join(out, "bisect.json"), encoding="utf-8") as f:
        return json.load(f)


def check_answer(f, out, shas, label):
    state = load(out)
    result = state.get("result", {})
    first = result.get("first_bad", {})
    f.check(first.get("subject") == SEED_SUBJECT and first.get("sha") == shas[6],
            f"{label}: the first bad commit is the seed commit (got {first.get('subject')!r})")
    f.check(state.get("lock") == "hash_lock", f"{label}: the lock picked without --lock is hash_lock "
            f"(got {state.get('lock')!r}: {state.get('why')})")
    steps = state.get("steps", [])
    broken = [s for s in steps if s["commit"]["subject"] == BROKEN_SUBJECT]
    f.check(all(s["decision"] == "skip" and s["why"].startswith("does not build") for s in broken),
            f"{label}: the broken commit, when visited, is skipped as not building")
    judged = [s for s in steps if s["decision"] in ("good", "bad") or s["runs"] > 0]
    limit = math.ceil(math.log2(8)) + 2
    f.check(len(judged) <= limit, f"{label}: {len(judged)} commits judged (at most {limit})")
    md = os.path.join(out, "first-bad.md")
    f.check(os.path.exists(md) and "hash_lock" in open(md, encoding="utf-8").read(),
            f"{label}: first-bad.md compares the seed commit with its parent and shows hash_lock")
    return state


def main():
    lockscope, timer_stress, patch, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    repo = os.path.join(work, "linux-history")
    shas = make_history(repo, patch)
    base, tip = shas[0], shas[8]
    workload = [timer_stress, "--procs", "4", "--timers", "16", "--duration", "2"]
    f = Failures()

    # 1 + 2: a bisect interrupted after its first step, then resumed.
    d1 = os.path.join(work, "bisect-1")
    shutil.rmtree(d1, ignore_errors=True)
    t0 = time.time()
    p = subprocess.Popen(bisect_cmd(lockscope, repo, base, tip, d1, workload), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    interrupted = False
    for line in p.stderr:
        print(line, end="", flush=True)
        if line.startswith("bisect: step 1:"):
            p.send_signal(signal.SIGINT)
            interrupted = True
            break
    p.communicate(timeout=300)
    f.check(interrupted and p.returncode != 0, f"Ctrl-C after step 1 ends the bisect (exit {p.returncode})")
    state = load(d1)
    f.check(len(state["steps"]) == 1 and "result" not in state, "the state holds step 1 and no result")
    step1_runs = os.path.join(d1, "runs", state["steps"][0]["commit"]["sha"][:12])
    mtimes = {n: os.path.getmtime(os.path.join(step1_runs, n)) for n in os.listdir(step1_runs)} \
        if os.path.isdir(step1_runs) else {}
    r = subprocess.run([lockscope, "lab", "bisect", "--resume", d1], capture_output=True, text=True)
    print(r.stderr + r.stdout, flush=True)
    f.check(r.returncode == 0 and "first bad commit" in r.stdout, f"--resume finishes (exit {r.returncode})")
    f.check(all(os.path.getmtime(os.path.join(step1_runs, n)) == m for n, m in mtimes.items()),
            "--resume recorded nothing of step 1 again")
    f.check("step 1:" not in r.stderr, "--resume does not judge step 1 again")
    check_answer(f, d1, shas, "resumed")
    first_s = time.time() - t0
    log = open(os.path.join(d1, "bisect.log"), encoding="utf-8").read()
    f.check(log.count("git bisect good") + log.count("git bisect bad") + log.count("git bisect skip") ==
            2 + len(load(d1)["steps"]), "bisect.log holds the endpoints and one decision per step")

    # 3: a bisect of commits the first one built, every kernel from the cache. From the
    # ipc comment (judged good above) to the tip: the broken commit, the mend, the seed and
    # the two after it; three runs a side, as the seed's hash_lock moves by three orders.
    d2 = os.path.join(work, "bisect-2")
    shutil.rmtree(d2, ignore_errors=True)
    t0 = time.time()
    r = subprocess.run(bisect_cmd(lockscope, repo, shas[3], tip, d2, workload, runs="3"), capture_output=True,
                       text=True)
    second_s = time.time() - t0
    print(r.stderr + r.stdout, flush=True)
    f.check(r.returncode == 0, f"the second bisect finishes (exit {r.returncode})")
    state = check_answer(f, d2, shas, "second")
    builds = [s["build_s"] for s in state["steps"] if not s["why"].startswith("does not build")]
    f.check(all(b < 30 for b in builds), f"the second bisect built nothing (build times {builds})")
    print(f"first bisect (interrupted + resumed) {first_s:.0f} s, second {second_s:.0f} s", flush=True)

    # 4: refusals, one line each.
    d3 = os.path.join(work, "bisect-aa")
    shutil.rmtree(d3, ignore_errors=True)
    r = subprocess.run(bisect_cmd(lockscope, repo, base, shas[3], d3, workload, "--lock", "spinlock@__lock_timer"),
                       capture_output=True, text=True)
    print(r.stderr + r.stdout, flush=True)
    f.check(r.returncode == 1 and r.stdout.startswith("good and bad are alike for spinlock@__lock_timer")
            and r.stdout.count("\n") == 1, "an A/A range is refused with one line")
    d4 = os.path.join(work, "bisect-nolock")
    shutil.rmtree(d4, ignore_errors=True)
    r = subprocess.run(bisect_cmd(lockscope, repo, base, shas[3], d4, workload, "--lock", "no_such_lock", runs="2"),
                       capture_output=True, text=True)
    print(r.stderr + r.stdout, flush=True)
    f.check(r.returncode == 1 and "'no_such_lock' is on neither endpoint" in r.stdout and r.stdout.count("\n") == 1,
            "a lock on neither endpoint is refused with one line")

    if f.items:
        print(f"{len(f.items)} FAILED")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
