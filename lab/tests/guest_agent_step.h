// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// A guest step that runs `lockscope agent` on the guest's loopback beside a
// load and fetches what it serves, for the lab's guest fixtures.
#include <string>
#include <utility>
#include <vector>

#include "lockscope/lab/guest.h"

namespace lab_test {

// Starts the agent with args (logging to /lab/out/<name>.log), waits until it
// serves (up to 120 s: loading the probes is slow under TCG), runs load,
// waits settle_s for its last windows, GETs each (file, path) into
// /lab/out/<file>, and stops it.
inline lockscope::lab::GuestStep agentStep(const std::string& name, const std::string& args,
                                           const std::string& load, int settle_s,
                                           const std::vector<std::pair<std::string, std::string>>& fetches)
{
    const std::string log = "/lab/out/" + name + ".log";
    std::string script = "ifconfig lo 127.0.0.1 up; /usr/bin/lockscope agent ";
    script += args;
    script += " --listen 127.0.0.1:9755 > ";
    script += log;
    script += " 2>&1 & a=$!; i=0; until grep -q serving ";
    script += log;
    script += "; do i=$((i+1)); [ $i -gt 120 ] && break; sleep 1; done; ";
    script += load;
    script += "; sleep ";
    script += std::to_string(settle_s);
    script += "; ";
    std::vector<std::string> outputs = {log};
    for (const auto& [file, path] : fetches) {
        const std::string out = "/lab/out/" + file;
        script += "wget -q -O ";
        script += out;
        script += " http://127.0.0.1:9755";
        script += path;
        script += "; ";
        outputs.push_back(out);
    }
    script += "kill $a; wait $a; echo agent_exit=$?";
    return {name, {"/bin/sh", "-c", script}, outputs};
}

} // namespace lab_test
