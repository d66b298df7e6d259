// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/cgroup_paths.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include <sys/stat.h>
#include <sys/vfs.h>

namespace lockscope::record {
namespace {

constexpr long kCgroup2Magic = 0x63677270; // CGROUP2_SUPER_MAGIC, linux/magic.h

bool isCgroup2Dir(const std::string& dir)
{
    struct statfs fs {};
    return statfs(dir.c_str(), &fs) == 0 && fs.f_type == kCgroup2Magic;
}

uint64_t inodeOf(const std::string& dir)
{
    struct stat st {};
    return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? uint64_t(st.st_ino) : 0;
}

// "a//b/" -> "/a/b"; ".." is refused (a path outside the hierarchy).
std::string normalized(const std::string& path)
{
    std::string out;
    std::stringstream in(path);
    for (std::string part; std::getline(in, part, '/');) {
        if (part.empty() || part == ".")
            continue;
        if (part == "..")
            throw CgroupError("cgroup path '" + path + "' must not contain '..'");
        out += "/" + part;
    }
    return out.empty() ? "/" : out;
}

} // namespace

std::string cgroup2Mount()
{
    // mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SOURCE SUPEROPTS
    std::ifstream in("/proc/self/mountinfo");
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        std::vector<std::string> w;
        for (std::string x; f >> x;)
            w.push_back(x);
        size_t dash = 0;
        while (dash < w.size() && w[dash] != "-")
            ++dash;
        if (dash + 1 < w.size() && w[dash + 1] == "cgroup2" && w.size() > 4 && w[3] == "/")
            return w[4];
    }
    throw CgroupError("no cgroup v2 hierarchy is mounted (cgroup2 in /proc/self/mountinfo)");
}

CgroupTarget cgroupTarget(const std::string& path)
{
    if (path.empty())
        throw CgroupError("empty cgroup path");
    const std::string mount = cgroup2Mount();
    std::string rel = path;
    if (rel.rfind(mount + "/", 0) == 0 || rel == mount)
        rel = rel.substr(mount.size());
    rel = normalized(rel);
    const std::string dir = rel == "/" ? mount : mount + rel;
    const uint64_t id = inodeOf(dir);
    if (!id || !isCgroup2Dir(dir))
        throw CgroupError("'" + path + "' is no cgroup v2 directory (looked for " + dir + ")");
    CgroupTarget t;
    t.id = id;
    t.path = rel;
    if (rel != "/")
        for (char c : rel)
            if (c == '/')
                ++t.level;
    return t;
}

std::string CgroupPaths::pathOf(uint64_t id)
{
    if (!paths_.count(id) && walks_ < 2)
        walk();
    auto it = paths_.find(id);
    return it == paths_.end() ? std::string() : it->second;
}

void CgroupPaths::walk()
{
    ++walks_;
    paths_.clear();
    namespace fs = std::filesystem;
    std::error_code ec;
    paths_[inodeOf(mount_)] = "/";
    // Cgroups come and go while we walk: errors skip a directory, never stop.
    for (fs::recursive_directory_iterator it(mount_, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
        if (!it->is_directory(ec) || it->is_symlink(ec))
            continue;
        if (uint64_t id = inodeOf(it->path().string()))
            paths_[id] = "/" + it->path().lexically_relative(mount_).string();
    }
}

} // namespace lockscope::record
