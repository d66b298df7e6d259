// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/recorder.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstring>
#include <fstream>
#include <memory>
#include <poll.h>
#include <set>
#include <sstream>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lockscope/record/cgroup_paths.h"
#include "lockscope/capture/units.h"
#include "lockscope/record/kallsyms.h"
#include "lockscope/capture/lock_frames.h"
#include "lockscope/record/syscall_plan.h"
#include "lockscope/record/system_info.h"
#include "lockscope/record/user_symbols.h"
#include "lockscope/record/workload.h"
#include "lockscope/util/executable.h"

namespace lockscope::record {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// Blocks the stop signals and reads them from a signalfd, so that nothing
// runs in a signal handler; restores the mask on scope exit.
class StopSignals {
public:
    StopSignals()
    {
        sigemptyset(&set_);
        for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD})
            sigaddset(&set_, s);
        if (sigprocmask(SIG_BLOCK, &set_, &old_) != 0)
            throw RecordError(std::string("sigprocmask: ") + std::strerror(errno));
        fd_ = signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd_ < 0) {
            int e = errno;
            sigprocmask(SIG_SETMASK, &old_, nullptr);
            throw RecordError(std::string("signalfd: ") + std::strerror(e));
        }
        // A closed stdout (| head) must not kill the recorder before it writes.
        oldPipe_ = std::signal(SIGPIPE, SIG_IGN);
    }
    ~StopSignals()
    {
        ::close(fd_);
        sigprocmask(SIG_SETMASK, &old_, nullptr);
        std::signal(SIGPIPE, oldPipe_);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    int fd() const { return fd_; }

private:
    sigset_t set_{}, old_{};
    int fd_ = -1;
    void (*oldPipe_)(int) = SIG_DFL;
};

// Move-only: a copied descriptor would be closed twice.
struct ScopedFd {
    int fd = -1;
    explicit ScopedFd(int f) : fd(f) {}
    ScopedFd(ScopedFd&& o) noexcept : fd(o.fd) { o.fd = -1; }
    ScopedFd& operator=(ScopedFd&&) = delete;
    ScopedFd(const ScopedFd&) = delete;
    ~ScopedFd()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

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
    } else {
        s += "skipped: " + (p.reason.empty() ? std::string("not attempted") : p.reason);
    }
    return s;
}

std::string rate(double perSecond)
{
    char buf[32];
    if (perSecond >= 1e6)
        std::snprintf(buf, sizeof buf, "%.1fM", perSecond / 1e6);
    else if (perSecond >= 1e3)
        std::snprintf(buf, sizeof buf, "%.1fk", perSecond / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.0f", perSecond);
    return buf;
}

class StatusLine {
public:
    StatusLine(std::FILE* out, bool enabled) : out_(out), enabled_(enabled) {}
    void show(const std::string& text)
    {
        if (!enabled_)
            return;
        std::fprintf(out_, "\r\033[K%s", text.c_str());
        std::fflush(out_);
        shown_ = true;
    }
    void clear()
    {
        if (shown_) {
            std::fprintf(out_, "\r\033[K");
            std::fflush(out_);
            shown_ = false;
        }
    }

private:
    std::FILE* out_;
    bool enabled_;
    bool shown_ = false;
};

// The workload was told to stop: what is left of its group gets the rest of
// the grace period, then SIGKILL, so nothing of it outlives the recording.
void finishGroup(const WorkloadProcess& workload, Clock::time_point killAt, Clock::duration grace)
{
    const auto until = std::min(killAt, Clock::now() + grace);
    while (workload.groupAlive() && Clock::now() < until)
        ::usleep(20000);
    if (workload.groupAlive())
        workload.killGroup(SIGKILL);
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

// Processes whose user stacks have a symbol cache (not the workload, which
// the recording outlives by at most a moment): once one exits, its stacks
// seen so far are resolved and its cache freed, so a long -a recording keeps
// caches for live processes only.
void retireExited(UserSymbols& syms, std::set<uint32_t>& cached, const probes::Snapshot& snap,
                  const probes::Session& session)
{
    for (auto it = cached.begin(); it != cached.end();) {
        const uint32_t tgid = *it;
        if (processExists(pid_t(tgid))) {
            ++it;
            continue;
        }
        std::vector<uint64_t> addresses;
        for (const auto* records : {&snap.waits, &snap.user_waits, &snap.user_holds})
            for (const auto& r : *records)
                if (r.tgid == tgid && r.ustack_id >= 0)
                    for (uint64_t ip : session.userStack(r.ustack_id, tgid))
                        addresses.push_back(ip);
        syms.retire(pid_t(tgid), addresses);
        it = cached.erase(it);
    }
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

Capture runRecord(const RecordOptions& opt, std::FILE* log)
{
    if (opt.command.empty() && opt.pids.empty() && !opt.all && opt.probe.comm.empty())
        throw RecordError("nothing to record: give -- CMD ARGS, -p PID, -a or --comm NAME");
    if (!haveBpfPrivileges())
        throw RecordError("recording needs root or CAP_BPF+CAP_PERFMON (try: sudo lockscope record ...)");
    for (pid_t p : opt.pids)
        if (!processExists(p))
            throw RecordError("-p " + std::to_string(p) + ": no such process");

    if (!opt.command.empty()) {
        std::string found = findExecutable(opt.command[0]);
        if (found.empty())
            throw RecordError("cannot run '" + opt.command[0] +
                              "': not found or not executable (check the command after --)");
    }

    KernelSymbols symbols;
    try {
        symbols = KernelSymbols::load(opt.kallsyms);
    } catch (const SymbolError& e) {
        throw RecordError(e.what());
    }

    Capture capture;
    fillSystemMeta(capture.meta);
    capture.meta.label = opt.label;
    capture.meta.command = opt.command_line;
    capture.meta.filters = opt.filters;
    capture.workload.command = opt.command;

    StopSignals signals;
    std::unique_ptr<WorkloadProcess> workload;
    probes::Options popt = opt.probe;
    if (!opt.command.empty()) {
        try {
            WorkloadOptions wopt;
            wopt.run_as = opt.run_as;
            // In its own process group the workload would be stopped (SIGTTIN)
            // reading the terminal; the GUI's stdin is its stop control.
            wopt.stdin_null = opt.stop_on_stdin_close || isatty(STDIN_FILENO);
            workload = std::make_unique<WorkloadProcess>(opt.command, wopt);
        } catch (const WorkloadError& e) {
            throw RecordError(e.what());
        }
        // In the filter before it execs, so its first lock is seen.
        popt.tgids.push_back(uint32_t(workload->pid()));
    }
    for (pid_t p : opt.pids)
        popt.tgids.push_back(uint32_t(p));
    popt.cpu_leaf_functions = cpuLeafFunctions(symbols);
    if (!opt.all && popt.tgids.empty() && popt.comm.empty())
        throw RecordError("nothing to record");

    std::unique_ptr<probes::Session> session;
    const auto attachStart = Clock::now();
    if (popt.syscalls && !opt.syscall_timing_asked) {
        const SyscallPlan plan = planSyscallTiming(false, popt.syscall_backend, probes::syscallHooks());
        popt.syscall_backend = plan.backend;
        popt.syscalls = plan.skipped.empty();
        capture.meta.syscall_timing_skipped = plan.skipped;
    }
    try {
        session = probes::Session::open(popt);
    } catch (const probes::ProbeError& e) {
        throw RecordError(e.what());
    }
    capture.probes = session->status();
    if (!capture.meta.syscall_timing_skipped.empty())
        for (auto& p : capture.probes)
            if (p.name == "syscalls" && !p.attached)
                p.reason = capture.meta.syscall_timing_skipped; // not "disabled": nobody asked
    for (const auto& p : capture.probes)
        std::fprintf(log, "%s\n", probeLine(p).c_str());
    // Events before this line are not seen: the workload is held until now,
    // a -p or -a target was running unobserved.
    const auto attachedCount = std::count_if(capture.probes.begin(), capture.probes.end(),
                                             [](const ProbeStatus& p) { return p.attached; });
    std::fprintf(log, "%ld probes attached in %.2f s: recording%s\n", static_cast<long>(attachedCount),
                 secondsSince(attachStart), workload ? ", workload started" : "");
    std::fflush(log);

    auto wallStart = std::chrono::system_clock::now();
    auto start = Clock::now();
    capture.meta.start_time = rfc3339(wallStart);
    UserSymbols userSymbols;
    if (workload) {
        try {
            workload->release();
        } catch (const WorkloadError& e) {
            throw RecordError(e.what());
        }
    }

    std::vector<ScopedFd> targetFds;
    for (pid_t p : opt.pids) {
        targetFds.emplace_back(openPidFd(p));
        if (!processExists(p))
            std::fprintf(log, "warning: process %d exited while the probes were being attached\n", int(p));
    }

    StatusLine status(log, opt.status_line && isatty(fileno(log)));
    bool stop = false, stopping = false, draining = false, watchStdin = opt.stop_on_stdin_close;
    Clock::time_point killAt{}, drainUntil{};
    const auto grace = std::chrono::milliseconds(int64_t(opt.kill_grace_s * 1000));
    // -d, a stop signal or stdin closing: the workload's group gets SIGTERM
    // and the recording goes on until it exited; a second signal, or the
    // grace period running out, sends SIGKILL.
    auto requestStop = [&](bool insist) {
        if (!workload || workload->exited()) {
            stop = true;
        } else if (!stopping) {
            stopping = true;
            workload->terminate();
            killAt = Clock::now() + grace;
        } else if (insist) {
            workload->killGroup(SIGKILL);
        }
    };
    // User stacks (--user-stacks, and every user-lock event) are symbolized
    // from /proc/PID/maps, which is gone once a process exits: read it while
    // the process lives, for the workload and for every process seen with one.
    const bool wantUserSymbols = popt.user_stacks || !popt.user_locks.empty();
    bool userStacksPrepared = false;
    std::set<uint32_t> symbolizedTgids, cachedTgids; // cachedTgids: see retireExited
    double lastTick = 0;
    uint64_t lastEvents = 0, locksSeen = 0, drops = 0;
    double lastSnap = -10;
    while (!stop) {
        std::vector<pollfd> fds;
        fds.push_back({signals.fd(), POLLIN, 0});
        int stdinIdx = -1, outIdx = -1, exitIdx = -1;
        if (watchStdin) {
            stdinIdx = int(fds.size());
            fds.push_back({STDIN_FILENO, POLLIN, 0});
        }
        if (workload && workload->outputFd() >= 0) {
            outIdx = int(fds.size());
            fds.push_back({workload->outputFd(), POLLIN, 0});
        }
        if (workload && workload->exitFd() >= 0) {
            exitIdx = int(fds.size());
            fds.push_back({workload->exitFd(), POLLIN, 0});
        }
        size_t targetIdx = fds.size();
        for (const auto& t : targetFds)
            fds.push_back({t.fd, POLLIN, 0});  // fd -1 is ignored by poll
        int rc = ::poll(fds.data(), fds.size(), 250);
        if (rc < 0 && errno != EINTR)
            throw RecordError(std::string("poll: ") + std::strerror(errno));

        if (fds[0].revents & POLLIN) {
            signalfd_siginfo si{};
            while (::read(signals.fd(), &si, sizeof si) == ssize_t(sizeof si))
                if (si.ssi_signo != SIGCHLD)
                    requestStop(true);
        }
        if (stdinIdx >= 0 && fds[size_t(stdinIdx)].revents) {
            char buf[4096];
            ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                watchStdin = false;
                requestStop(false);
            }
        }
        if (outIdx >= 0 && (fds[size_t(outIdx)].revents & (POLLIN | POLLHUP | POLLERR))) {
            status.clear();
            workload->pumpOutput(opt.workload_output_fd);
        }
        if (workload) {
            bool exitedNow = (exitIdx >= 0 && (fds[size_t(exitIdx)].revents & POLLIN)) ||
                             workload->exitFd() < 0;
            if (!draining && exitedNow && workload->poll()) {
                draining = true;
                drainUntil = Clock::now() + std::chrono::milliseconds(int64_t(opt.drain_s * 1000));
            }
            if (draining && workload->outputFd() < 0)
                stop = true;
            if (draining && Clock::now() >= drainUntil) {
                workload->closeOutput();
                stop = true;
            }
            if (stopping && Clock::now() >= killAt) {
                workload->killGroup(SIGKILL);
                killAt = Clock::time_point::max();
            }
        }
        for (size_t i = 0; i < targetFds.size(); ++i) {
            bool gone = targetFds[i].fd >= 0 ? (fds[targetIdx + i].revents & POLLIN)
                                              : !processExists(opt.pids[i]);
            if (gone)
                stop = true;  // the watched process exited
        }
        double elapsed = secondsSince(start);
        if (opt.duration_s > 0 && elapsed >= opt.duration_s)
            requestStop(false);
        if (workload && wantUserSymbols && !userStacksPrepared && elapsed > 0.2 && !workload->exited()) {
            userSymbols.prepare(workload->pid());
            symbolizedTgids.insert(uint32_t(workload->pid()));
            userStacksPrepared = true;
        }
        if (!stop && elapsed - lastTick >= 0.5) {
            uint64_t ev = session->eventsSoFar();
            double evRate = double(ev - lastEvents) / std::max(elapsed - lastTick, 1e-3);
            lastEvents = ev;
            lastTick = elapsed;
            if (elapsed - lastSnap >= 1) {
                auto snap = session->snapshot();
                std::set<uint64_t> addrs;
                for (const auto& w : snap.waits)
                    addrs.insert(w.lock_addr);
                locksSeen = addrs.size();
                if (wantUserSymbols) {
                    retireExited(userSymbols, cachedTgids, snap, *session);
                    for (const auto* records : {&snap.waits, &snap.user_waits})
                        for (const auto& r : *records)
                            if (r.ustack_id >= 0 && r.tgid && symbolizedTgids.insert(r.tgid).second) {
                                userSymbols.prepare(pid_t(r.tgid));
                                if (!workload || r.tgid != uint32_t(workload->pid()))
                                    cachedTgids.insert(r.tgid);
                            }
                }
                drops = snap.stats.lost + snap.stats.map_full;
                lastSnap = elapsed;
            }
            char buf[160];
            std::snprintf(buf, sizeof buf, "recording %.1fs  %s events/s  %" PRIu64 " locks  %" PRIu64
                          " drops%s",
                          elapsed, rate(evRate).c_str(), locksSeen, drops,
                          stopping ? "  (stopping: waiting for the workload)" : "");
            status.show(buf);
        }
    }
    status.clear();
    session->detach();
    capture.meta.duration_s = secondsSince(start);
    if (workload) {
        if (!workload->exited()) {
            workload->killGroup(SIGKILL);
            workload->wait();
        }
        if (stopping)
            finishGroup(*workload, killAt, grace);
        else if (workload->groupAlive())
            std::fprintf(log, "note: the workload exited but left processes running (process group %d); "
                         "their output is no longer shown\n", int(workload->pid()));
        capture.workload.exit_status = workload->exitStatus();
        capture.workload.signal = workload->termSignal();
        capture.workload.results = workload->scanner().results();
        for (const auto& w : workload->scanner().warnings())
            std::fprintf(log, "warning: %s\n", w.c_str());
    }

    probes::Snapshot snap = session->snapshot();
    AssembleOptions aopt = opt.assemble;
    // A sampling probe that could not attach sampled nothing: say so with 0 Hz.
    bool sampled = std::any_of(capture.probes.begin(), capture.probes.end(), [](const ProbeStatus& p) {
        return p.attached && p.hook == "perf_event";
    });
    aopt.cpu_frequency_hz = sampled ? popt.cpu_frequency_hz : 0;
    aopt.stack_depth = popt.stack_depth;
    aopt.per_tgid = popt.per_tgid;
    aopt.per_cgroup = popt.per_cgroup;
    if (popt.per_cgroup)
        aopt.cgroup_path = [paths = std::make_shared<CgroupPaths>(cgroup2Mount())](uint64_t id) {
            return paths->pathOf(id);
        };
    for (const auto& u : popt.user_locks)
        aopt.user_lock_functions.insert(u.lock_fn);
    aopt.own_code = session->programCode();
    uint32_t defaultTgid = workload ? uint32_t(workload->pid()) : (opt.pids.empty() ? 0 : uint32_t(opt.pids[0]));
    probes::Session* s = session.get();
    CaptureAssembler assembler(
        symbols, [s](int64_t id) { return s->kernelStack(id); },
        [s, &userSymbols, defaultTgid](int64_t id, uint32_t tgid) {
            uint32_t pid = tgid ? tgid : defaultTgid;
            std::vector<Frame> frames;
            for (uint64_t ip : s->userStack(id, pid))
                frames.push_back(userSymbols.resolve(pid_t(pid), ip));
            return frames;
        },
        aopt);
    assembler.assemble(snap, capture);

    const Stats& st = capture.stats;
    if (st.lost)
        std::fprintf(log, "warning: %" PRIu64 " events lost\n", st.lost);
    if (st.map_full)
        std::fprintf(log, "warning: %" PRIu64 " updates dropped: a BPF map was full\n", st.map_full);
    if (st.stack_failures)
        std::fprintf(log, "warning: %" PRIu64 " stacks could not be taken\n", st.stack_failures);
    if (st.recursion_misses)
        std::fprintf(log, "warning: %" PRIu64 " probe runs skipped by the kernel (re-entry)\n",
                     st.recursion_misses);
    if (st.own_lock_events)
        std::fprintf(log, "note: %" PRIu64 " lock events inside lockscope's own BPF programs left out\n",
                     st.own_lock_events);
    if (st.stacks_unsampled)
        std::fprintf(log, "note: %" PRIu64 " contended waits and spin-lock holds were counted without a stack walk "
                     "(stack budget or --stack-sample; --stack-budget 0 walks every one)\n", st.stacks_unsampled);
    if (st.waits_untimed)
        std::fprintf(log, "note: %" PRIu64 " contended spinning waits were counted, not timed: their times follow "
                     "the timed waits of their lock (timing budget; --timing-budget 0 times every one)\n",
                     st.waits_untimed);
    if (st.syscalls_untimed)
        std::fprintf(log, "note: %" PRIu64 " syscalls were counted, not timed: their latencies follow the timed "
                     "calls of the same syscall (--syscall-budget; --exact times every one)\n", st.syscalls_untimed);
    if (st.cpu_unstacked)
        std::fprintf(log, "note: %" PRIu64 " CPU samples were counted by their function alone: their kernel stack "
                     "could not be kept (a stack map full, or its bucket taken); the CPU shares include them\n", st.cpu_unstacked);
    if (st.owner_stacks_unsampled)
        std::fprintf(log, "note: %" PRIu64 " lock owners were named without their stack: the wait's own stack "
                     "was not walked either (stack budget; --stack-budget 0 walks every one)\n", st.owner_stacks_unsampled);
    if (st.holder_not_found)
        std::fprintf(log, "note: %" PRIu64 " contended spinlock waits found no holder on another CPU "
                     "(holder stacks are approximate)\n", st.holder_not_found);
    if (st.impossible_holds)
        std::fprintf(log, "warning: %" PRIu64 " spin-lock holds released before they were acquired were dropped\n",
                     st.impossible_holds);
    return capture;
}

std::string topLocksTable(const Capture& capture, size_t rows)
{
    std::vector<const Lock*> locks;
    for (const auto& l : capture.locks)
        if (!l.wait.empty())
            locks.push_back(&l);
    std::stable_sort(locks.begin(), locks.end(),
                     [](const Lock* a, const Lock* b) { return a->wait.total() > b->wait.total(); });
    if (locks.size() > rows)
        locks.resize(rows);
    size_t keyW = 4;
    for (const Lock* l : locks)
        keyW = std::max(keyW, std::min<size_t>(l->key.size(), 48));
    std::ostringstream out;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-*s  %-12s %10s %11s %10s %10s\n", int(keyW), "lock", "type",
                  "contended", "total wait", "max", "avg");
    out << buf;
    for (const Lock* l : locks) {
        std::string key = l->key.size() > keyW ? l->key.substr(0, keyW - 3) + "..." : l->key;
        std::snprintf(buf, sizeof buf, "%-*s  %-12s %10" PRIu64 " %11s %10s %10s\n", int(keyW),
                      key.c_str(), l->type.c_str(), l->wait.count(), units::duration(double(l->wait.total())).c_str(),
                      units::duration(double(l->wait.max())).c_str(), units::duration(double(l->wait.mean())).c_str());
        out << buf;
    }
    if (locks.empty())
        out << "(no contended locks seen)\n";
    return out.str();
}

} // namespace lockscope::record
