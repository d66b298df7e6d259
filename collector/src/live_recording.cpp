// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/live_recording.h"

#include "lockscope/capture/tail_basis.h"

#include "lockscope/record/lock_key_memory.h"
#include "lockscope/record/record_filters.h"
#include "lockscope/record/system_info.h"
#include "lockscope/record/workload.h"
#include "record_steps.h"

namespace lockscope::record {

namespace {

// A stack id unseen for this many read-outs is deleted from its map: long
// enough that no record drained later still names it (a record names its
// stack at the event, and every read-out takes what the maps held).
constexpr uint64_t kStackIdleReadOuts = 3;

} // namespace

struct LiveRecording::State {
    explicit State(KernelSymbols s) : symbols(std::move(s)) {}
    KernelSymbols symbols;
    UserSymbols userSymbols;
    probes::Options popt;
    std::unique_ptr<probes::Session> session;
};

LiveRecording::LiveRecording(RecordOptions options, std::FILE* log) : opt_(std::move(options))
{
    using namespace detail;
    opt_.all = true;
    opt_.assemble.key_memory = std::make_shared<LockKeyMemory>();
    checkTargets(opt_);
    state_ = std::make_unique<State>(loadKernelSymbols(opt_.kallsyms));
    state_->popt = probeOptions(opt_, nullptr, state_->symbols);
    Capture attached;
    state_->session = attachProbes(state_->popt, attached, false, log);
    if (!state_->session->drainable())
        throw RecordError("a probe attached cannot be read out per window: record it with lockscope record");
    probes_ = attached.probes;
    fillSystemMeta(meta_);
    meta_.command = opt_.command_line;
    meta_.label = opt_.label;
    meta_.filters = recordFilters(opt_);
    last_ = std::chrono::steady_clock::now();
    lastWall_ = std::chrono::system_clock::now();
}

LiveRecording::~LiveRecording() = default;

Capture LiveRecording::readOut()
{
    probes::Snapshot snap = state_->session->drain();
    const auto now = std::chrono::steady_clock::now();
    Capture slice;
    slice.meta = meta_;
    slice.meta.start_time = rfc3339(lastWall_);
    slice.meta.duration_s = std::chrono::duration<double>(now - last_).count();
    slice.probes = probes_;
    last_ = now;
    lastWall_ = std::chrono::system_clock::now();
    noteStacks(snap);
    dropUnnamableUserStacks(snap);
    if (snap.wait_share < 1)
        markWaitsSampled(slice.meta, snap.wait_share);
    detail::assembleSnapshot(snap, opt_, state_->popt, *state_->session, state_->symbols, state_->userSymbols, 0,
                             slice);
    ++readOuts_;
    opt_.assemble.key_memory->endWindow();
    forgetIdleStacks();
    state_->userSymbols.forgetExited(); // their later events are unnamable (dropUnnamableUserStacks)
    return slice;
}

std::vector<probes::ProgramStats> LiveRecording::programStats() const
{
    return state_->session->programStats();
}

void LiveRecording::noteStacks(const probes::Snapshot& snap)
{
    for (const auto* records : {&snap.waits, &snap.holds, &snap.user_waits, &snap.user_holds})
        for (const auto& r : *records)
            for (int64_t id : {r.kstack_id, r.ustack_id})
                if (id >= 0)
                    stackLastSeen_[id] = readOuts_;
    for (const auto& c : snap.cpu)
        if (c.kstack_id >= 0)
            stackLastSeen_[c.kstack_id] = readOuts_;
    for (const auto& o : snap.owners) // a wait's stack, drained with its owner
        if (o.wait_kstack_id >= 0)
            stackLastSeen_[o.wait_kstack_id] = readOuts_;
    for (const auto& h : snap.holders) // the holder's stack is the hold probe's
        for (int64_t id : {h.wait_kstack_id, h.holder_kstack_id})
            if (id >= 0)
                stackLastSeen_[id] = readOuts_;
}

// A process that exited within the window took its memory map along: its
// user stacks cannot be named, and their raw addresses differ from process
// to process (ASLR), so each short-lived process would make a lock key and
// a stack of its own (a shell loop: hundreds a second, crowding every real
// lock out of the bounded tables). Such events count under their lock's
// unknown caller, without a stack.
void LiveRecording::dropUnnamableUserStacks(probes::Snapshot& snap)
{
    std::map<uint32_t, bool> gone;
    for (auto* records : {&snap.user_waits, &snap.user_holds})
        for (auto& r : *records) {
            if (r.ustack_id < 0)
                continue;
            auto [it, added] = gone.try_emplace(r.tgid, false);
            if (added)
                it->second = !state_->userSymbols.knows(pid_t(r.tgid)) && !processExists(pid_t(r.tgid));
            if (it->second) {
                r.ustack_id = -1;
                userStacksOfExited_ += r.hist.count();
            }
        }
}

void LiveRecording::forgetIdleStacks()
{
    for (auto it = stackLastSeen_.begin(); it != stackLastSeen_.end();) {
        if (readOuts_ - it->second < kStackIdleReadOuts) {
            ++it;
            continue;
        }
        state_->session->forgetStack(it->first);
        ++stacksForgotten_;
        it = stackLastSeen_.erase(it);
    }
}

} // namespace lockscope::record
