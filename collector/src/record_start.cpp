// SPDX-License-Identifier: GPL-2.0-or-later
// runRecord's first steps: check the targets, start the workload held before
// exec, and attach the probes with it in the filter.
#include <algorithm>
#include <fstream>
#include <unistd.h>

#include "lockscope/capture/lock_frames.h"
#include "lockscope/util/executable.h"
#include "record_steps.h"

namespace lockscope::record {
namespace {

uint64_t capabilityMask()
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("CapEff:", 0) == 0)
            return std::stoull(line.substr(7), nullptr, 16);
    return 0;
}

std::string probeLine(const ProbeStatus& p)
{
    std::string s = p.name + ": ";
    if (p.attached) {
        s += "attached via " + p.hook;
        if (!p.reason.empty())
            s += " (" + p.reason + ")";
    } else if (offByChoice(p)) {
        s += p.reason == kProbeDisabled ? std::string("off") : p.reason; // "off unless asked for (--hold)"
    } else {
        s += "skipped: " + (p.reason.empty() ? std::string("not attempted") : p.reason);
    }
    return s;
}

// The functions CPU samples are told apart by when their stack cannot be kept:
// those the lock and idle shares are made of.
std::vector<probes::AddressRange> cpuLeafFunctions(const KernelSymbols& symbols)
{
    std::vector<probes::AddressRange> out;
    for (auto [begin, end] : symbols.textRanges(
             [](std::string_view name) { return isSpinFunction(name) || isIdleFunction(name); }))
        out.push_back({begin, end});
    return out;
}

} // namespace

bool haveBpfPrivileges()
{
    if (geteuid() == 0)
        return true;
    constexpr unsigned kCapPerfmon = 38, kCapBpf = 39, kCapSysAdmin = 21;
    uint64_t caps = capabilityMask();
    bool sysAdmin = caps & (1ull << kCapSysAdmin);
    bool bpf = caps & (1ull << kCapBpf), perfmon = caps & (1ull << kCapPerfmon);
    return sysAdmin || (bpf && perfmon);
}

namespace detail {

double secondsSince(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

void checkTargets(const RecordOptions& opt)
{
    if (opt.command.empty() && opt.pids.empty() && !opt.all && opt.probe.comm.empty())
        throw RecordError("nothing to record: give -- CMD ARGS, -p PID, -a or --comm NAME");
    if (!haveBpfPrivileges())
        throw RecordError("recording needs root or CAP_BPF+CAP_PERFMON (run it with sudo, or grant them: docs/agent.md)");
    for (pid_t p : opt.pids)
        if (!processExists(p))
            throw RecordError("-p " + std::to_string(p) + ": no such process");
    if (!opt.command.empty() && util::findExecutable(opt.command[0]).empty())
        throw RecordError("cannot run '" + opt.command[0] +
                          "': not found or not executable (check the command after --)");
}

KernelSymbols loadKernelSymbols(const std::string& kallsyms)
{
    try {
        return KernelSymbols::load(kallsyms);
    } catch (const SymbolError& e) {
        throw RecordError(e.what());
    }
}

std::unique_ptr<WorkloadProcess> spawnWorkload(const RecordOptions& opt, UserSymbols& userSymbols)
{
    if (opt.command.empty())
        return nullptr;
    try {
        WorkloadOptions wopt;
        wopt.run_as = opt.run_as;
        // In its own process group the workload would be stopped (SIGTTIN)
        // reading the terminal; the GUI's stdin is its stop control.
        wopt.stdin_null = opt.stop_on_stdin_close || isatty(STDIN_FILENO);
        if (opt.probe.user_stacks || !opt.probe.user_locks.empty())
            wopt.at_exit = [&userSymbols](pid_t pid) { userSymbols.prepareLastTime(pid); };
        return std::make_unique<WorkloadProcess>(opt.command, wopt);
    } catch (const WorkloadError& e) {
        throw RecordError(e.what());
    }
}

probes::Options probeOptions(const RecordOptions& opt, const WorkloadProcess* workload,
                             const KernelSymbols& symbols)
{
    probes::Options popt = opt.probe;
    // In the filter before it execs, so its first lock is seen.
    if (workload)
        popt.tgids.push_back(uint32_t(workload->pid()));
    for (pid_t p : opt.pids)
        popt.tgids.push_back(uint32_t(p));
    popt.cpu_leaf_functions = cpuLeafFunctions(symbols);
    popt.lock_addrs = kernelLockFilter(opt.locks, symbols);
    if (!opt.all && popt.tgids.empty() && popt.comm.empty())
        throw RecordError("nothing to record");
    return popt;
}

namespace {

// How to turn on a probe that is off by default; "" for one that is on.
std::string howToAsk(const std::string& probe)
{
    for (const OptInProbe& o : kOptInProbes)
        if (o.probe == probe)
            return "--" + std::string(o.flag);
    // Off by default because it needs a binary to probe, not for its cost.
    return probe == "user_locks" ? "--user-locks or --user-lock" : "";
}

// The probes library says "disabled"; the capture says how to ask.
void sayHowToAskForOffProbes(std::vector<ProbeStatus>& probes)
{
    for (auto& p : probes) {
        if (p.attached || p.reason != kProbeDisabled)
            continue;
        if (auto ask = howToAsk(p.name); !ask.empty())
            p.reason = offUnlessAskedFor(ask);
    }
}

} // namespace

std::unique_ptr<probes::Session> attachProbes(const probes::Options& popt, Capture& capture,
                                              bool withWorkload, std::FILE* log)
{
    const auto attachStart = Clock::now();
    std::unique_ptr<probes::Session> session;
    try {
        session = probes::Session::open(popt);
    } catch (const probes::ProbeError& e) {
        throw RecordError(e.what());
    }
    capture.probes = session->status();
    sayHowToAskForOffProbes(capture.probes);
    for (const auto& p : capture.probes)
        std::fprintf(log, "%s\n", probeLine(p).c_str());
    // Events before this line are not seen: the workload is held until now,
    // a -p or -a target was running unobserved.
    const auto attachedCount = std::count_if(capture.probes.begin(), capture.probes.end(),
                                             [](const ProbeStatus& p) { return p.attached; });
    std::fprintf(log, "%ld probes attached in %.2f s: recording%s\n", static_cast<long>(attachedCount),
                 secondsSince(attachStart), withWorkload ? ", workload started" : "");
    std::fflush(log);
    return session;
}

} // namespace detail
} // namespace lockscope::record
