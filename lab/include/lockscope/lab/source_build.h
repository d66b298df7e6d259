// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <vector>

#include "lockscope/lab/kernel.h"

namespace lockscope::lab {

// A kernel built from source by the lab:
//   src:PATH[@COMMIT][+a.patch[+b.patch...]]   a git kernel tree; COMMIT is
//       any revision; without it, HEAD plus the tree's uncommitted changes
//   debian-src:VERSION[+a.patch...]           /usr/src/linux-source-VERSION.tar.xz
// Patches are applied in order. '~/' at the start of a path is $HOME.
struct SourceSpec {
    enum class Kind { GitTree, DebianSource };
    Kind kind = Kind::GitTree;
    std::string path;     // tree (GitTree) or tarball (DebianSource), as given
    std::string commit;   // "" = HEAD and the working tree's changes
    std::string version;  // DebianSource: "6.1"
    std::vector<std::string> patches;
};

bool isSourceSpec(const std::string& spec);
// Throws LabError on a malformed spec; checks nothing on disk.
SourceSpec parseSourceSpec(const std::string& spec);

// The config fragment (lab/config/lab-kernel.config) merged onto
// `make tinyconfig`.
const std::string& labConfigFragment();

// What decides a built kernel: the exact source (tarball identity or commit),
// the tree's uncommitted diff, every patch's bytes, the config fragment.
// Two builds with equal inputs share one cached bzImage.
struct BuildInputs {
    std::string source_id;              // "debian-src /usr/src/...tar.xz 138008000 1732641120" or "git <sha>"
    std::vector<std::string> patch_texts;  // in order (the tree diff first, when there is one)
    std::string config;                 // the fragment
};
std::string buildKey(const BuildInputs& inputs);

// Stable 64-bit FNV-1a, hex: cache keys and tree names, not security.
std::string fnv1aHex(std::string_view data);

// Builds (or finds in cache_dir/kernels/) the kernel of a source spec.
// One build tree per source (cache_dir/trees/...): each build resets it to
// the source state, applies the patches, and runs an incremental make, so a
// pair differing in one file rebuilds that file and relinks. Progress lines
// at least every ~10 s during the build. Throws LabError with one line (a
// build failure appends the compiler's last lines).
Kernel buildKernelFromSource(const KernelSpec& spec, const std::string& cache_dir, const ProgressFn& progress);

// Creates dir (and parents) when missing; throws LabError, naming `option` to
// choose another, unless it is a directory owned by the caller that no other
// user can write or replace: not group/world-writable, reached through no
// other user's symbolic link, its ancestors owned by the caller or root and
// writable by others only with the sticky bit (/tmp). A cache another user
// can write could hand us a kernel to boot, or a marker to trust.
void ensureOwnedDirectory(const std::string& dir, const std::string& what, const std::string& option = "--cache");

} // namespace lockscope::lab
