// SPDX-License-Identifier: GPL-2.0-or-later
// sched_process_fork: children of filtered processes join the tgid filter;
// sched_process_exit: processes leave it when their last thread exits.
#include <cerrno>

#include "bpf_util.h"
#include "family.h"
#include "follow.skel.h"

namespace lockscope::probes::detail {

namespace {

using FollowSkel = SkelPtr<ls_follow, ls_follow__destroy>;

class FollowFamily final : public Family {
public:
    FollowFamily(FollowSkel skel, bpf_program* fork, bpf_program* exit, bpf_link* forkLink, bpf_link* exitLink)
        : skel_(std::move(skel))
        , fork_(fork)
        , exit_(exit)
    {
        links_.add(forkLink);
        links_.add(exitLink);
    }
    void read(Snapshot&) const override { }
    bool drainable() const override { return true; } // no results of its own
    uint64_t recursionMisses() const override
    {
        return detail::recursionMisses(fork_) + detail::recursionMisses(exit_);
    }
    void detach() override { links_.clear(); }
    std::vector<int> progFds() const override { return { bpf_program__fd(fork_), bpf_program__fd(exit_) }; }

private:
    FollowSkel skel_;
    bpf_program* fork_;
    bpf_program* exit_;
    Links links_;
};

} // namespace

std::unique_ptr<Family> openFollow(FamilyContext& ctx)
{
    ProbeStatus st { "fork_follow", "sched:sched_process_fork", "", false, "" };
    if (!ctx.options.follow_forks) {
        st.reason = kProbeDisabled;
        ctx.status.push_back(st);
        return nullptr;
    }
    std::string notes;
    for (Backend b : { Backend::TpBtf, Backend::RawTp, Backend::Tracepoint }) {
        const std::string hook = backendName(b);
        st.hook = hook;
        FollowSkel skel(ls_follow__open());
        if (!skel) {
            notes += (notes.empty() ? "" : "; ") + hook + ": open failed: " + errnoText(errno);
            continue;
        }
        configureRodata(skel->rodata, ctx.options);
        auto& p = skel->progs;
        bpf_program* prog = b == Backend::TpBtf ? p.fork_btf : b == Backend::RawTp ? p.fork_raw : p.fork_tp;
        bpf_program* exitProg = b == Backend::TpBtf ? p.exit_btf : b == Backend::RawTp ? p.exit_raw : p.exit_tp;
        for (bpf_program* q : { p.fork_btf, p.fork_raw, p.fork_tp, p.exit_btf, p.exit_raw, p.exit_tp })
            bpf_program__set_autoload(q, q == prog || q == exitProg);
        if (int err = ctx.maps.reuseIn(skel->obj); err) {
            notes += (notes.empty() ? "" : "; ") + hook + ": map setup failed: " + errnoText(err);
            continue;
        }
        clearLibbpfLog();
        if (int err = ls_follow__load(skel.get()); err) {
            notes += (notes.empty() ? "" : "; ") + hook + ": load failed: " + errnoText(err);
            continue;
        }
        bpf_link* link = bpf_program__attach(prog);
        if (!link) {
            notes += (notes.empty() ? "" : "; ") + hook + ": attach failed: " + attachError();
            continue;
        }
        bpf_link* exitLink = bpf_program__attach(exitProg);
        if (!exitLink) {
            notes += (notes.empty() ? "" : "; ") + hook + ": exit attach failed: " + attachError();
            bpf_link__destroy(link);
            continue;
        }
        st.attached = true;
        st.reason = notes.empty() ? "" : notes + "; fell back to " + hook;
        ctx.status.push_back(st);
        return std::make_unique<FollowFamily>(std::move(skel), prog, exitProg, link, exitLink);
    }
    st.reason = notes;
    ctx.status.push_back(st);
    return nullptr;
}

} // namespace lockscope::probes::detail
