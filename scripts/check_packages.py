#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Fails when a build used a file that scripts/setup.sh would not install.

A machine that once had a package installed by hand builds fine while a fresh
one fails (libqt6opengl6-dev was such a package). This maps every system file
the build used -- headers (ninja's dependency log), CMake package configs and
programs (CMakeCache), pkg-config files, and the shared libraries the built
binaries load -- to its Debian package, and requires that package to be in the
dependency closure of scripts/debian-packages.txt or in the base system
(Essential or Priority: required).

usage: check_packages.py --build DIR [--packages FILE] [--without PKG ...]
"""
import argparse
import glob
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEM_PREFIXES = ("/usr/", "/lib", "/bin/", "/sbin/", "/etc/", "/opt/")


def wanted_packages(path, without):
    with open(path, encoding="utf-8") as f:
        names = [l.strip() for l in f if l.strip() and not l.lstrip().startswith("#")]
    return [n for n in names if n not in without]


def installed_metadata():
    """Package -> (dependency alternatives, provides, is_base) for installed packages."""
    fmt = "${Package}\t${db:Status-Status}\t${Depends}\t${Pre-Depends}\t${Provides}\t${Essential}\t${Priority}\n"
    out = subprocess.run(["dpkg-query", "-W", "-f=" + fmt], capture_output=True, text=True, check=True).stdout
    meta, providers = {}, {}
    for line in out.splitlines():
        name, status, dep, predep, provides, essential, priority = line.split("\t")
        if status != "installed":
            continue
        groups = [g for g in (dep + "," + predep).split(",") if g.strip()]
        alts = [[strip_version(a) for a in g.split("|")] for g in groups]
        meta[name] = (alts, essential == "yes" or priority == "required")
        for p in provides.split(","):
            if p.strip():
                providers.setdefault(strip_version(p), []).append(name)
    return meta, providers


def strip_version(dep):
    return re.sub(r"\s*\(.*\)", "", dep).strip().split(":")[0]


def closure(roots, meta, providers):
    """Every installed package reachable from roots by Depends/Pre-Depends; each
    alternative that is installed counts (setup.sh lets apt pick)."""
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        for real in ([name] if name in meta else providers.get(name, [])):
            if real in seen:
                continue
            seen.add(real)
            for group in meta[real][0]:
                todo.extend(group)
    return seen


def owners_index():
    """Path -> packages, from dpkg's file lists (one pass; dpkg -S per file is slow)."""
    index = {}
    for listfile in glob.glob("/var/lib/dpkg/info/*.list"):
        pkg = os.path.basename(listfile)[:-5].split(":")[0]
        with open(listfile, encoding="utf-8", errors="replace") as f:
            for line in f:
                index.setdefault(line.rstrip("\n"), set()).add(pkg)
    return index


def path_variants(path):
    """The same file under merged-/usr aliases, and with links resolved."""
    out = [path, os.path.realpath(path)]
    for p in list(out):
        for a, b in (("/usr/lib/", "/lib/"), ("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/")):
            if p.startswith(a):
                out.append(b + p[len(a):])
            elif p.startswith(b):
                out.append(a + p[len(b):])
    return out


def ninja_deps(build):
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True, check=True).stdout
    return {l.strip() for l in out.splitlines() if l.startswith("    /")}


def cache_entries(build):
    with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if not l.startswith(("#", "//"))]


def link_inputs(build):
    out = subprocess.run(["ninja", "-C", build, "-t", "commands"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(?:^|\s)(/\S+\.(?:so|a))(?=\s|$)", out, re.M))


def cache_files(entries, linked):
    """Programs and package configs CMake found, and the libraries it found that
    a link line uses (FindOpenGL and friends also cache optional ones)."""
    files = set()
    for e in entries:
        m = re.match(r"([^:=]+):(FILEPATH|PATH)=(/.*)", e)
        if not m:
            continue
        key, kind, value = m.groups()
        if kind == "FILEPATH" and os.path.isfile(value):
            if not re.search(r"\.(so|a)$", value) or value in linked:
                files.add(value)
        elif key.endswith("_DIR") and os.path.isdir(value):
            files.update(glob.glob(os.path.join(value, "*onfig.cmake")))
    return files


def pkgconfig_files(entries):
    files = set()
    for e in entries:
        m = re.match(r"__pkg_config_arguments_[^:]+:INTERNAL=(.*)", e)
        if not m:
            continue
        for module in m.group(1).split(";"):
            if module and not module.isupper():
                r = subprocess.run(["pkg-config", "--path", module], capture_output=True, text=True)
                files.update(p for p in r.stdout.split() if p.startswith("/"))
    return files


def loaded_libraries(build):
    libs = set()
    for root, _, names in os.walk(build):
        for n in names:
            p = os.path.join(root, n)
            if not os.access(p, os.X_OK) or os.path.islink(p) or "CMakeFiles" in root:
                continue
            with open(p, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
            r = subprocess.run(["ldd", p], capture_output=True, text=True)
            libs.update(re.findall(r"=> (/\S+)", r.stdout))
    return libs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="a configured and built build directory")
    ap.add_argument("--packages", default=os.path.join(TOP, "scripts", "debian-packages.txt"))
    ap.add_argument("--without", action="append", default=[], help="pretend PKG is not in the list")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    if not os.path.isfile(os.path.join(build, "build.ninja")):
        sys.exit(f"check_packages: {build} has no build.ninja: build first (scripts/build.sh)")

    meta, providers = installed_metadata()
    roots = wanted_packages(args.packages, set(args.without))
    allowed = closure(roots + [p for p, m in meta.items() if m[1]], meta, providers)

    entries = cache_entries(build)
    linked = link_inputs(build)
    used = ninja_deps(build) | linked | cache_files(entries, linked) | pkgconfig_files(entries) | loaded_libraries(build)
    used = {p for p in used if p.startswith(SYSTEM_PREFIXES) and not p.startswith((TOP + "/", build + "/"))}

    index = owners_index()
    problems, packages = [], set()
    for path in sorted(used):
        owners = next((index[v] for v in path_variants(path) if v in index), None)
        if owners is None:
            problems.append(f"{path}: no Debian package owns it (installed by hand?)")
        elif not owners & allowed:
            problems.append(f"{path}: from {', '.join(sorted(owners))}, which scripts/setup.sh does not install "
                            f"(add it to {os.path.relpath(args.packages, TOP)})")
        else:
            packages |= owners & allowed
    for p in problems:
        print("check_packages:", p)
    print(f"check_packages: {len(used)} system files used by the build, from {len(packages)} packages; "
          f"{len(problems)} not installed by scripts/setup.sh")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
