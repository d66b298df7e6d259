// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

// cgroup v2 ids (what bpf_get_current_cgroup_id returns: the kernfs id, which
// is the cgroup directory's inode number) and paths ("/a/b", from the root of
// the cgroup2 hierarchy, as /proc/PID/cgroup's "0::" line writes them).
namespace lockscope::record {

class CgroupError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Where the cgroup2 hierarchy is mounted ("/sys/fs/cgroup", or
// "/sys/fs/cgroup/unified" on hybrid hosts); throws CgroupError if nowhere.
std::string cgroup2Mount();

// A cgroup to filter on: its id and depth under the root (the root is 0).
struct CgroupTarget {
    uint64_t id = 0;
    uint32_t level = 0;
    std::string path; // "/a/b"
};

// PATH as given to --cgroup: a cgroup path ("/a/b", or "a/b") under the
// cgroup2 root, or a directory under the mount ("/sys/fs/cgroup/a/b").
// Throws CgroupError naming the path when it is no cgroup v2 directory.
CgroupTarget cgroupTarget(const std::string& path);

// id -> path, by walking the hierarchy once (once more on a miss: a cgroup
// created after the first walk). "" for an id no cgroup has (removed).
class CgroupPaths {
public:
    explicit CgroupPaths(std::string mount) : mount_(std::move(mount)) {}
    std::string pathOf(uint64_t id);

private:
    void walk();
    std::string mount_;
    std::map<uint64_t, std::string> paths_;
    int walks_ = 0;
};

} // namespace lockscope::record
