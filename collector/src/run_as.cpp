// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/run_as.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "lockscope/util/invoking_user.h"

extern char** environ;

namespace lockscope::record {

std::optional<RunAs> invokingUserCredentials()
{
    const auto user = util::invokingUser();
    if (!user)
        return std::nullopt;
    RunAs r;
    r.uid = user->uid;
    r.gid = user->gid == static_cast<gid_t>(-1) ? static_cast<gid_t>(user->uid) : user->gid;
    r.user = std::to_string(r.uid);
    r.home = "/";
    passwd pw {};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (getpwuid_r(r.uid, &pw, buf.data(), buf.size(), &found) == 0 && found) {
        r.user = pw.pw_name;
        r.home = pw.pw_dir;
        int n = 64;
        r.groups.resize(size_t(n));
        while (getgrouplist(pw.pw_name, r.gid, r.groups.data(), &n) < 0) {
            r.groups.resize(size_t(n) + 1);
            n = int(r.groups.size());
        }
        r.groups.resize(size_t(n));
    }
    if (r.groups.empty())
        r.groups.push_back(r.gid);
    return r;
}

std::vector<std::string> environmentFor(const RunAs& who)
{
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string kv = *e;
        const std::string key = kv.substr(0, kv.find('='));
        if (key != "HOME" && key != "USER" && key != "LOGNAME")
            env.push_back(kv);
    }
    env.push_back("HOME=" + who.home);
    env.push_back("USER=" + who.user);
    env.push_back("LOGNAME=" + who.user);
    return env;
}

} // namespace lockscope::record
