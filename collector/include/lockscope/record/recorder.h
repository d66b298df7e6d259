// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/probes/probes.h"
#include "lockscope/record/assemble.h"
#include "lockscope/record/record_filters.h"
#include "lockscope/record/run_as.h"

// One `lockscope record` run: attach the probes, run or watch the target,
// stop on its exit / the duration / Ctrl-C, and turn the maps into a Capture.
namespace lockscope::record {

// A problem the user can act on; what() is one line. The CLI exits 1.
class RecordError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct RecordOptions {
    std::vector<std::string> command;  // `-- CMD ARGS`: spawned and followed
    std::vector<pid_t> pids;           // -p: existing processes
    bool all = false;                  // -a: every process
    double duration_s = 0;             // -d: 0 = until the target exits or Ctrl-C
    probes::Options probe;             // tgids are filled in by the recorder
    AssembleOptions assemble;
    LockSelection locks;               // as given; selectLocks() puts it into probe and assemble
    std::string cgroup;                // --cgroup as given (probe holds its id)
    std::string label;
    std::vector<std::string> command_line;     // lockscope's own argv
    bool status_line = true;           // only shown when stderr is a terminal
    // Stopping the workload (-d, Ctrl-C, SIGTERM/SIGHUP/SIGQUIT, stdin
    // closed): SIGTERM to its process group, SIGKILL this long after.
    double kill_grace_s = 5;
    // Once the workload exited, its stdout is read until end of file or for
    // this long: a background process it started may hold the pipe forever.
    double drain_s = 2;
    std::optional<RunAs> run_as;       // the workload's user (nullopt: ours)
    bool stop_on_stdin_close = false;  // stdin at end of file stops like SIGTERM
    int workload_output_fd = 1;        // where the workload's stdout is copied
    std::string kallsyms = "/proc/kallsyms";
};

// True when this process may load BPF (root, or CAP_BPF + CAP_PERFMON).
bool haveBpfPrivileges();

// `log` gets the per-probe lines, the status line and warnings.
Capture runRecord(const RecordOptions& options, std::FILE* log = stderr);


} // namespace lockscope::record
