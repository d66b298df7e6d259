// SPDX-License-Identifier: GPL-2.0-or-later
#include "recording_loop.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstring>
#include <sys/signalfd.h>
#include <unistd.h>

namespace lockscope::record::detail {
namespace {

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

ScopedFd::~ScopedFd()
{
    if (fd >= 0)
        ::close(fd);
}

void StatusLine::show(const char* text)
{
    if (!enabled_)
        return;
    std::fprintf(out_, "\r\033[K%s", text);
    std::fflush(out_);
    shown_ = true;
}

void StatusLine::clear()
{
    if (shown_) {
        std::fprintf(out_, "\r\033[K");
        std::fflush(out_);
        shown_ = false;
    }
}

RecordingLoop::RecordingLoop(const RecordOptions& opt, const probes::Options& popt, probes::Session& session,
                             WorkloadProcess* workload, UserSymbols& userSymbols, int signalFd, std::FILE* log)
    : opt_(opt), session_(session), workload_(workload), userSymbols_(userSymbols), signalFd_(signalFd),
      status_(log, opt.status_line && isatty(fileno(log))),
      grace_(std::chrono::milliseconds(int64_t(opt.kill_grace_s * 1000))), watchStdin_(opt.stop_on_stdin_close),
      wantUserSymbols_(popt.user_stacks || !popt.user_locks.empty())
{
    for (pid_t p : opt.pids) {
        targetFds_.emplace_back(openPidFd(p));
        if (!processExists(p))
            std::fprintf(log, "warning: process %d exited while the probes were being attached\n", int(p));
    }
    if (wantUserSymbols_ && !UserSymbols::unavailable().empty())
        std::fprintf(log, "warning: user stacks keep bare addresses: %s (apt-get install libbpfcc)\n",
                     UserSymbols::unavailable().c_str());
}

LoopEnd RecordingLoop::run(Clock::time_point start)
{
    while (!stop_) {
        PollSet ps = pollSet();
        int rc = ::poll(ps.fds.data(), ps.fds.size(), 250);
        if (rc < 0 && errno != EINTR)
            throw RecordError(std::string("poll: ") + std::strerror(errno));
        if (ps.fds[0].revents & POLLIN)
            readSignals();
        if (ps.revents(ps.stdin_at))
            readStdin();
        if (ps.revents(ps.output_at) & (POLLIN | POLLHUP | POLLERR)) {
            status_.clear();
            workload_->pumpOutput(opt_.workload_output_fd);
        }
        followWorkload();
        watchTargets(ps);
        double elapsed = secondsSince(start);
        if (opt_.duration_s > 0 && elapsed >= opt_.duration_s)
            requestStop(false);
        prepareWorkloadSymbols(elapsed);
        if (!stop_ && elapsed - lastTick_ >= 0.5)
            showStatus(elapsed);
    }
    status_.clear();
    return {stopping_, killAt_};
}

RecordingLoop::PollSet RecordingLoop::pollSet() const
{
    PollSet ps;
    ps.fds.push_back({signalFd_, POLLIN, 0});
    if (watchStdin_) {
        ps.stdin_at = int(ps.fds.size());
        ps.fds.push_back({STDIN_FILENO, POLLIN, 0});
    }
    if (workload_ && workload_->outputFd() >= 0) {
        ps.output_at = int(ps.fds.size());
        ps.fds.push_back({workload_->outputFd(), POLLIN, 0});
    }
    if (workload_ && workload_->exitFd() >= 0)
        ps.fds.push_back({workload_->exitFd(), POLLIN, 0}); // wakes the loop at its exit
    ps.targets_at = ps.fds.size();
    for (const auto& t : targetFds_)
        ps.fds.push_back({t.fd, POLLIN, 0}); // fd -1 is ignored by poll
    return ps;
}

void RecordingLoop::requestStop(bool insist)
{
    if (!workload_ || workload_->exited()) {
        stop_ = true;
    } else if (!stopping_) {
        stopping_ = true;
        workload_->terminate();
        killAt_ = Clock::now() + grace_;
    } else if (insist) {
        workload_->killGroup(SIGKILL);
    }
}

void RecordingLoop::readSignals()
{
    signalfd_siginfo si{};
    while (::read(signalFd_, &si, sizeof si) == ssize_t(sizeof si))
        if (si.ssi_signo != SIGCHLD)
            requestStop(true);
}

void RecordingLoop::readStdin()
{
    char buf[4096];
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        watchStdin_ = false;
        requestStop(false);
    }
}

// Once the workload exited, its output is drained until end of file or for
// opt.drain_s; a workload told to stop gets SIGKILL when the grace runs out.
// poll() reaps it and resumes a traced one from its stops (SIGCHLD, read
// from the signalfd, wakes the loop for each).
void RecordingLoop::followWorkload()
{
    if (!workload_)
        return;
    if (!draining_ && workload_->poll()) {
        draining_ = true;
        drainUntil_ = Clock::now() + std::chrono::milliseconds(int64_t(opt_.drain_s * 1000));
    }
    if (draining_ && workload_->outputFd() < 0)
        stop_ = true;
    if (draining_ && Clock::now() >= drainUntil_) {
        workload_->closeOutput();
        stop_ = true;
    }
    if (stopping_ && Clock::now() >= killAt_) {
        workload_->killGroup(SIGKILL);
        killAt_ = Clock::time_point::max();
    }
}

// A -p process that exited ends the recording.
void RecordingLoop::watchTargets(const PollSet& ps)
{
    for (size_t i = 0; i < targetFds_.size(); ++i) {
        bool gone = targetFds_[i].fd >= 0 ? (ps.fds[ps.targets_at + i].revents & POLLIN)
                                          : !processExists(opt_.pids[i]);
        if (gone)
            stop_ = true;
    }
}

void RecordingLoop::prepareWorkloadSymbols(double elapsed)
{
    if (workload_ && wantUserSymbols_ && !workloadSymbolsPrepared_ && elapsed > 0.2 && !workload_->exited()) {
        userSymbols_.prepare(workload_->pid());
        symbolizedTgids_.insert(uint32_t(workload_->pid()));
        workloadSymbolsPrepared_ = true;
    }
}

// Every 0.5 s the event rate; every second a snapshot for the lock count and
// drops, and for the processes whose user stacks need symbols.
void RecordingLoop::showStatus(double elapsed)
{
    uint64_t ev = session_.eventsSoFar();
    double evRate = double(ev - lastEvents_) / std::max(elapsed - lastTick_, 1e-3);
    lastEvents_ = ev;
    lastTick_ = elapsed;
    if (elapsed - lastSnap_ >= 1) {
        auto snap = session_.snapshot();
        std::set<uint64_t> addrs;
        for (const auto& w : snap.waits)
            addrs.insert(w.lock_addr);
        locksSeen_ = addrs.size();
        if (wantUserSymbols_)
            symbolizeSeenProcesses(snap);
        drops_ = snap.stats.lost + snap.stats.map_full;
        lastSnap_ = elapsed;
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "recording %.1fs  %s events/s  %" PRIu64 " locks  %" PRIu64 " drops%s", elapsed,
                  rate(evRate).c_str(), locksSeen_, drops_, stopping_ ? "  (stopping: waiting for the workload)" : "");
    status_.show(buf);
}

void RecordingLoop::symbolizeSeenProcesses(const probes::Snapshot& snap)
{
    retireExited(userSymbols_, cachedTgids_, snap, session_);
    for (const auto* records : {&snap.waits, &snap.user_waits})
        for (const auto& r : *records)
            if (r.ustack_id >= 0 && r.tgid && symbolizedTgids_.insert(r.tgid).second) {
                userSymbols_.prepare(pid_t(r.tgid));
                if (!workload_ || r.tgid != uint32_t(workload_->pid()))
                    cachedTgids_.insert(r.tgid);
            }
}

} // namespace lockscope::record::detail
