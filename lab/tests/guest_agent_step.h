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
    std::string script = "ifconfig lo 127.0.0.1 up; /usr/bin/lockscope agent " + args +
                         " --listen 127.0.0.1:9755 > " + log + " 2>&1 & a=$!; i=0; until grep -q serving " + log +
                         "; do i=$((i+1)); [ $i -gt 120 ] && break; sleep 1; done; " + load + "; sleep " +
                         std::to_string(settle_s) + "; ";
    std::vector<std::string> outputs = {log};
    for (const auto& [file, path] : fetches) {
        script += "wget -q -O /lab/out/" + file + " http://127.0.0.1:9755" + path + "; ";
        outputs.push_back("/lab/out/" + file);
    }
    script += "kill $a; wait $a; echo agent_exit=$?";
    return {name, {"/bin/sh", "-c", script}, outputs};
}

} // namespace lab_test
