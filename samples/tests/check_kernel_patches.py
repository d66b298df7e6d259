#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks the seed kernel patches in samples/kernel-patches/.

Every NN-name.patch must be a git-format patch whose header carries the fields
the README promises (Seed, Upstream, Model, Workload, Shape), name a sample
workload with flags that workload accepts, be listed in the directory's
README.md, and apply without fuzz (`patch --dry-run -p1 --fuzz=0`) to
Debian's linux-source-6.1. Only the files the patches touch are unpacked
from the tarball, into a temporary directory.

usage: check_kernel_patches.py PATCH_DIR WORKLOAD_DIR [TARBALL]
Exit 77 (CTest skip) when the tarball is absent.
"""
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
DEFAULT_TARBALL = "/usr/src/linux-source-6.1.tar.xz"
TREE_PREFIX = "linux-source-6.1/"
FIELDS = ("Seed", "Upstream", "Model", "Workload", "Shape")
NAME = re.compile(r"^(\d\d)-([a-z0-9]+(?:-[a-z0-9]+)*)\.patch$")


def header_fields(text):
    """Field name -> its lines (the first plus indented continuation lines),
    taken from the commit message: after the Subject, before the '---'."""
    head = text.split("\n---\n", 1)[0]
    fields, current = {}, None
    for line in head.splitlines():
        m = re.match(r"^([A-Z][A-Za-z-]*): ?(.*)$", line)
        if m and m.group(1) in FIELDS:
            current = m.group(1)
            fields[current] = [m.group(2).strip()]
        elif current and line.startswith("  "):
            fields[current].append(line.strip())
        else:
            current = None
    return fields


def touched_files(text):
    return re.findall(r"^diff --git a/(\S+) b/\S+$", text, re.MULTILINE)


def check_format(name, text):
    problems = []
    if not text.startswith("From "):
        problems.append("does not start with git format-patch's 'From <sha>' line")
    for marker in ("\nFrom: ", "\nSubject: [PATCH", "\n---\n", "\ndiff --git "):
        if marker not in text:
            problems.append("has no %r" % marker.strip())
    fields = header_fields(text)
    for f in FIELDS:
        if not " ".join(fields.get(f, [])).strip():
            problems.append("header field '%s:' is missing or empty" % f)
    m = NAME.match(name)
    seed = (fields.get("Seed", [""])[0].split() or [""])[0]
    if m and seed != m.group(2):
        problems.append("Seed: says %r but the file is named for %r" % (seed, m.group(2)))
    added = [l for l in text.split("\n---\n", 1)[-1].splitlines() if l.startswith("+") and not l.startswith("+++")]
    if not any("lockscope seed" in l for l in added):
        problems.append("adds no 'lockscope seed' comment to the code it changes")
    return problems, fields


def check_workload(fields, workload_dir):
    """The first line of Workload: is the command: a built sample workload
    and flags that the workload's --help lists (later lines are prose)."""
    words = fields.get("Workload", [""])[0].split()
    if not words:
        return ["Workload: has no command on its first line"]
    exe = os.path.join(workload_dir, words[0])
    if not os.access(exe, os.X_OK):
        return ["Workload: %r is not a sample workload (no %s)" % (words[0], exe)]
    helptext = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60).stdout
    flags = [w for w in words[1:] if w.startswith("--")]
    known = set(re.findall(r"^  (--[a-z0-9-]+)", helptext, re.MULTILINE))
    return ["Workload: %s has no flag %s" % (words[0], f) for f in flags if f not in known]


def dry_run(patch_path, tree):
    r = subprocess.run(["patch", "--dry-run", "-p1", "--fuzz=0", "-d", tree, "-i", patch_path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return ["does not apply: " + " / ".join(r.stdout.strip().splitlines()[-3:] + r.stderr.strip().splitlines())]
    if "offset" in r.stdout:
        print("  note: applies with offsets: " + " / ".join(r.stdout.strip().splitlines()))
    return []


def control_rejects(tmp, path, text, tree):
    """The control: the first patch with one context line changed must not
    apply, or the dry run proves nothing."""
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("@@"))
    ctx = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(" ") and lines[i].strip())
    lines[ctx] = " " + lines[ctx][1:] + " /* changed */"
    broken = os.path.join(tmp, "control.patch")
    with open(broken, "w") as f:
        f.write("\n".join(lines))
    if not dry_run(broken, tree):
        return ["control: %s with a changed context line still applied" % os.path.basename(path)]
    print("control: %s with a changed context line is rejected" % os.path.basename(path))
    return []


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    patch_dir, workload_dir = os.path.abspath(sys.argv[1]), sys.argv[2]
    tarball = sys.argv[3] if len(sys.argv) == 4 else DEFAULT_TARBALL
    names = sorted(n for n in os.listdir(patch_dir) if n.endswith(".patch"))
    failures = []
    if len(names) < 5:
        failures.append("%s: expected the five seed patches, found %d" % (patch_dir, len(names)))
    with open(os.path.join(patch_dir, "README.md")) as f:
        readme = f.read()

    texts, touched = {}, set()
    for name in names:
        if not NAME.match(name):
            failures.append("%s: not named NN-name.patch" % name)
        with open(os.path.join(patch_dir, name)) as f:
            texts[name] = f.read()
        problems, fields = check_format(name, texts[name])
        problems += check_workload(fields, workload_dir)
        if name not in readme:
            problems.append("is not in README.md's table")
        files = touched_files(texts[name])
        if not files:
            problems.append("touches no file")
        touched.update(files)
        failures += ["%s: %s" % (name, p) for p in problems]
        print("%s: header fields %s; touches %s" % (name, ", ".join(f for f in FIELDS if fields.get(f)),
                                                      ", ".join(files)))

    if not os.path.exists(tarball):
        for f in failures:
            print("FAIL " + f)
        if failures:
            return 1
        print("SKIP: %s is absent, so the patches were not applied (apt-get install linux-source-6.1; "
              "scripts/debian-packages.txt lists it)" % tarball)
        return SKIP

    with tempfile.TemporaryDirectory() as tmp:
        members = [TREE_PREFIX + f for f in sorted(touched)]
        r = subprocess.run(["tar", "-xJf", tarball, "-C", tmp, "--wildcards"] + members,
                           capture_output=True, text=True)
        if r.returncode != 0:
            failures.append("%s: cannot unpack %s: %s" % (tarball, " ".join(members), r.stderr.strip()))
        else:
            tree = os.path.join(tmp, TREE_PREFIX)
            for name in names:
                failures += ["%s: %s" % (name, p) for p in dry_run(os.path.join(patch_dir, name), tree)]
            if names and not failures:
                failures += control_rejects(tmp, os.path.join(patch_dir, names[0]), texts[names[0]], tree)

    for f in failures:
        print("FAIL " + f)
    if failures:
        return 1
    print("%d patches: headers complete, workloads valid, all apply to %s" % (len(names), tarball))
    return 0


if __name__ == "__main__":
    sys.exit(main())
