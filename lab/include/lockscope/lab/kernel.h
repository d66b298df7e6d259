// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <functional>
#include <string>

namespace lockscope::lab {

// "--kernel NAME=SPEC". SPEC is a bzImage path, a .deb path, or
// "debian[:WHICH]" where WHICH is "6.1"/"generic" (linux-image-amd64),
// "cloud" (linux-image-cloud-amd64), a release like "6.1.0-57-cloud-amd64",
// or a full package name "linux-image-...".
struct KernelSpec {
    std::string name;  // label of the capture: [A-Za-z0-9_.-]+
    std::string spec;
};

KernelSpec parseKernelArg(const std::string& arg);

struct Kernel {
    std::string name;
    std::string image;        // bzImage to boot
    std::string description;  // "linux-image-6.1.0-57-cloud-amd64 6.1.192-3" or the path
    std::string version;      // from the bzImage header, e.g. "6.1.0-57-cloud-amd64 (debian-kernel@...) #1 SMP ..."
    std::string config;       // the build's .config when known (Debian packages ship it), else ""
};

using ProgressFn = std::function<void(const std::string&)>;

// Resolves and, for Debian packages, downloads (apt-get download) and
// unpacks into cache_dir/<package>/ once; later calls reuse it. Throws
// LabError with what to do.
Kernel resolveKernel(const KernelSpec& spec, const std::string& cache_dir, const ProgressFn& progress);

// The Debian package a debian[:WHICH] spec names before metapackage
// resolution ("linux-image-cloud-amd64"); throws LabError for a bad WHICH.
std::string debianPackageFor(const std::string& spec);

// The version string embedded in a bzImage's setup header ("" if none);
// throws LabError if the file is not a bzImage.
std::string bzImageVersion(const std::string& path);

// $XDG_CACHE_HOME/lockscope/lab, else ~/.cache/lockscope/lab.
std::string defaultCacheDir();

// The value of CONFIG_<name> in a .config ("y", "m", "n" when "is not set" or absent).
std::string kernelConfigValue(const std::string& config_path, const std::string& name);

} // namespace lockscope::lab
