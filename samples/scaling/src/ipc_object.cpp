// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/scaling/ipc_object.h"

#include "lockscope/scaling/locks.h"

namespace lockscope::scaling {

namespace {

// ipcperms(): owner, group or other bits, read+write needed for semop.
bool ipcPermitted(const IpcPermissions& p, const Credentials& c)
{
    uint32_t granted = c.uid == p.uid ? (p.mode >> 6) : c.gid == p.gid ? (p.mode >> 3) : p.mode;
    return (granted & 06) == 06 || c.uid == 0;
}

// The security hook: a policy of (subject label, object label, allowed) rules,
// scanned in full as a simple type-enforcement module would; the last match wins.
struct Rule {
    uint32_t subject, object;
    bool allow;
};

const std::array<Rule, 256>& policy()
{
    static const std::array<Rule, 256> rules = [] {
        std::array<Rule, 256> r{};
        for (uint32_t i = 0; i < r.size(); ++i)
            r[i] = {i % 24, (i * 7) % 16, (i % 5) != 3};
        r[r.size() - 1] = {0, 7, true};
        r[r.size() - 2] = {1, 7, true};
        r[r.size() - 3] = {13, 7, false};  // label 13 is denied on label-7 objects
        return r;
    }();
    return rules;
}

bool securityPermitted(uint32_t subject, uint32_t object)
{
    bool allowed = true;
    for (const Rule& r : policy())
        if (r.subject == subject && r.object == object)
            allowed = r.allow;
    return allowed;
}

class IpcSemBase : public IpcSemObject {
public:
    IpcSemBase(int n, IpcPermissions perm, LockProfile* p)
        : perm_(perm), values_(static_cast<size_t>(n)), lock_(p)
    {
    }
    void markRemoved() override
    {
        Guard g(lock_);
        deleted_.store(true, std::memory_order_relaxed);
    }
    long long value(int num) const override
    {
        Guard g(lock_);
        return values_[static_cast<size_t>(num)];
    }
    int size() const override { return static_cast<int>(values_.size()); }

protected:
    bool checks(const Credentials& c) const
    {
        return ipcPermitted(perm_, c) && securityPermitted(c.label, perm_.label);
    }
    // Requires lock_.
    SemopResult apply(int num, int delta)
    {
        if (deleted_.load(std::memory_order_relaxed))
            return SemopResult::Removed;
        long long& v = values_[static_cast<size_t>(num)];
        if (v + delta < 0)
            return SemopResult::Again;
        v += delta;
        return SemopResult::Ok;
    }

    const IpcPermissions perm_;  // immutable after creation, like the RCU-read parts of ipc_perm
    std::vector<long long> values_;
    std::atomic<bool> deleted_{false};  // read without the lock by the late-lock variant
    mutable Instrumented<SpinLock> lock_;
};

class LockAcrossChecks final : public IpcSemBase {
public:
    using IpcSemBase::IpcSemBase;
    SemopResult semop(const Credentials& c, int num, int delta) override
    {
        Guard g(lock_);
        if (deleted_.load(std::memory_order_relaxed))
            return SemopResult::Removed;
        if (!checks(c))
            return SemopResult::Access;
        return apply(num, delta);
    }
};

class LockLate final : public IpcSemBase {
public:
    using IpcSemBase::IpcSemBase;
    SemopResult semop(const Credentials& c, int num, int delta) override
    {
        // Early exit is only a hint; the authoritative check is under the lock.
        if (deleted_.load(std::memory_order_relaxed))
            return SemopResult::Removed;
        if (!checks(c))
            return SemopResult::Access;
        Guard g(lock_);
        return apply(num, delta);
    }
};

} // namespace

std::unique_ptr<IpcSemObject> makeIpcSemObject(Variant variant, int nsems, IpcPermissions perm,
                                               LockProfile* profile)
{
    if (variant == Variant::Before)
        return std::make_unique<LockAcrossChecks>(nsems, perm, profile);
    return std::make_unique<LockLate>(nsems, perm, profile);
}

} // namespace lockscope::scaling
