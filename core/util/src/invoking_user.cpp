// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/invoking_user.h"

#include <cerrno>
#include <cstdlib>
#include <pwd.h>
#include <unistd.h>
#include <vector>

namespace lockscope::util {
namespace {

// A decimal id from the environment; nullopt when unset or not a plain number.
std::optional<unsigned long> envId(const char* name)
{
    const char* v = std::getenv(name);
    if (!v || *v < '0' || *v > '9')
        return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const unsigned long id = std::strtoul(v, &end, 10);
    if (errno || *end || id >= static_cast<unsigned long>(static_cast<uid_t>(-1)))
        return std::nullopt;
    return id;
}

gid_t primaryGroup(uid_t uid)
{
    passwd pw {};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found)
        return pw.pw_gid;
    return static_cast<gid_t>(-1);
}

} // namespace

std::optional<InvokingUser> invokingUser()
{
    if (geteuid() != 0)
        return std::nullopt;
    if (auto uid = envId("SUDO_UID"); uid && *uid != 0) {
        const auto gid = envId("SUDO_GID");
        const auto u = static_cast<uid_t>(*uid);
        return InvokingUser { u, gid ? static_cast<gid_t>(*gid) : primaryGroup(u) };
    }
    if (auto uid = envId("PKEXEC_UID"); uid && *uid != 0) {
        const auto u = static_cast<uid_t>(*uid);
        return InvokingUser { u, primaryGroup(u) };
    }
    return std::nullopt;
}

} // namespace lockscope::util
