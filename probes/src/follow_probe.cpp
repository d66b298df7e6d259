// SPDX-License-Identifier: GPL-2.0-or-later
// sched_process_fork: children of filtered processes join the tgid filter.
#include <cerrno>

#include "bpf_util.h"
#include "family.h"
#include "follow.skel.h"

namespace lockscope::probes::detail {

namespace {

using FollowSkel = SkelPtr<ls_follow, ls_follow__destroy>;

class FollowFamily final : public Family {
public:
    FollowFamily(FollowSkel skel, bpf_program* prog, bpf_link* link)
        : skel_(std::move(skel))
        , prog_(prog)
    {
        links_.add(link);
    }
    void read(Snapshot&) const override { }
    uint64_t recursionMisses() const override { return detail::recursionMisses(prog_); }
    void detach() override { links_.clear(); }
    std::vector<int> progFds() const override { return { bpf_program__fd(prog_) }; }

private:
    FollowSkel skel_;
    bpf_program* prog_;
    Links links_;
};

} // namespace

std::unique_ptr<Family> openFollow(FamilyContext& ctx)
{
    ProbeStatus st { "fork_follow", "sched:sched_process_fork", "", false, "" };
    if (!ctx.options.follow_forks) {
        st.reason = "disabled";
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
        for (bpf_program* q : { p.fork_btf, p.fork_raw, p.fork_tp })
            bpf_program__set_autoload(q, q == prog);
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
        st.attached = true;
        st.reason = notes.empty() ? "" : notes + "; fell back to " + hook;
        ctx.status.push_back(st);
        return std::make_unique<FollowFamily>(std::move(skel), prog, link);
    }
    st.reason = notes;
    ctx.status.push_back(st);
    return nullptr;
}

} // namespace lockscope::probes::detail
