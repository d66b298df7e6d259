// SPDX-License-Identifier: GPL-2.0-or-later
// On-CPU sampling: a cpu-clock perf event per online CPU, each running cpu_sample.
#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <sstream>

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf_util.h"
#include "cpu.skel.h"
#include "family.h"

namespace lockscope::probes::detail {

namespace {

using CpuSkel = SkelPtr<ls_cpu, ls_cpu__destroy>;

static_assert(kMaxCpuLeafFunctions == LS_CPU_LEAF_RANGES);

// "0-3,5,7-8" -> {0,1,2,3,5,7,8}
std::vector<int> onlineCpus()
{
    std::ifstream in("/sys/devices/system/cpu/online");
    std::string text;
    std::vector<int> cpus;
    if (!std::getline(in, text))
        return cpus;
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, ',')) {
        int lo = 0, hi = 0;
        if (std::sscanf(part.c_str(), "%d-%d", &lo, &hi) == 2) {
            for (int c = lo; c <= hi; ++c)
                cpus.push_back(c);
        } else if (std::sscanf(part.c_str(), "%d", &lo) == 1) {
            cpus.push_back(lo);
        }
    }
    return cpus;
}

// Sorted, at most LS_CPU_LEAF_RANGES (the probe stops at the first that
// matches, and the rest count as other kernel code).
void setLeafRanges(ls_cpu::ls_cpu__rodata& ro, std::vector<AddressRange> ranges)
{
    std::sort(ranges.begin(), ranges.end(),
              [](const AddressRange& a, const AddressRange& b) { return a.begin < b.begin; });
    ranges.resize(std::min<size_t>(ranges.size(), LS_CPU_LEAF_RANGES));
    for (size_t i = 0; i < ranges.size(); ++i) {
        ro.cpu_leaf_ranges[i].begin = ranges[i].begin;
        ro.cpu_leaf_ranges[i].end = ranges[i].end;
    }
    ro.cpu_leaf_nranges = static_cast<uint32_t>(ranges.size());
}

class CpuFamily final : public Family {
public:
    explicit CpuFamily(CpuSkel skel)
        : skel_(std::move(skel))
    {
    }
    Links& links() { return links_; }
    bpf_program* program() const { return skel_->progs.cpu_sample; }

    void read(Snapshot& out) const override
    {
        const int fd = bpf_map__fd(skel_->maps.cpu_counts);
        ls_cpu_key key {}, next {};
        const void* prev = nullptr;
        while (bpf_map_get_next_key(fd, prev, &next) == 0) {
            key = next;
            prev = &key;
            uint64_t n = 0;
            if (bpf_map_lookup_elem(fd, &key, &n) == 0 && n > 0)
                out.cpu.push_back({ key.kstack, n });
        }
        readUnstacked(out);
    }
    // Stacked counts are read and deleted key by key; the unstacked ones
    // (a per-CPU array) as differences from the previous drain.
    bool drainable() const override { return true; }
    void drain(Snapshot& out) override
    {
        const int fd = bpf_map__fd(skel_->maps.cpu_counts);
        for (const ls_cpu_key& k : keysOf<ls_cpu_key>(fd)) {
            uint64_t n = 0;
            if (bpf_map_lookup_and_delete_elem(fd, &k, &n) == 0 && n > 0)
                out.cpu.push_back({ k.kstack, n });
        }
        addUserKey(fd);
        Snapshot now;
        readUnstacked(now);
        for (const CpuUnstackedRecord& r : now.cpu_unstacked) {
            uint64_t& before = unstackedDrained_[r.function];
            if (r.count > before)
                out.cpu_unstacked.push_back({ r.function, r.count - before });
            before = r.count;
        }
    }

    // The user-mode key exists from the start, so a full map never drops those samples.
    static void addUserKey(int fd)
    {
        const ls_cpu_key userKey { -1, 0 };
        const uint64_t zero = 0;
        bpf_map_update_elem(fd, &userKey, &zero, BPF_NOEXIST);
    }

    uint64_t recursionMisses() const override { return detail::recursionMisses(skel_->progs.cpu_sample); }
    void detach() override { links_.clear(); }
    std::vector<int> progFds() const override { return { bpf_program__fd(skel_->progs.cpu_sample) }; }

private:
    void readUnstacked(Snapshot& out) const
    {
        const int fd = bpf_map__fd(skel_->maps.cpu_unstacked);
        const auto& ranges = skel_->rodata->cpu_leaf_ranges;
        std::vector<uint64_t> perCpu(static_cast<size_t>(libbpf_num_possible_cpus()));
        for (uint32_t slot = 0; slot <= LS_CPU_LEAF_RANGES; ++slot) {
            if (slot < LS_CPU_LEAF_RANGES && slot >= skel_->rodata->cpu_leaf_nranges)
                continue;
            if (bpf_map_lookup_elem(fd, &slot, perCpu.data()) != 0)
                continue;
            uint64_t n = 0;
            for (uint64_t v : perCpu)
                n += v;
            if (n > 0)
                out.cpu_unstacked.push_back({ slot < LS_CPU_LEAF_RANGES ? ranges[slot].begin : 0, n });
        }
    }

    CpuSkel skel_;
    std::map<uint64_t, uint64_t> unstackedDrained_; // function -> count at the last drain
    Links links_; // destroyed first: detaches, and libbpf closes the perf event fds with their links
};

} // namespace

std::unique_ptr<Family> openCpu(FamilyContext& ctx)
{
    const uint32_t hz = ctx.options.cpu_frequency_hz;
    ProbeStatus st { "cpu_sampling", "cpu-clock", "perf_event", false, "" };
    if (hz == 0) {
        st.hook.clear();
        st.reason = kProbeDisabled;
        ctx.status.push_back(st);
        return nullptr;
    }
    CpuSkel skel(ls_cpu__open());
    auto fail = [&](const std::string& why) {
        st.reason = why;
        ctx.status.push_back(st);
        return nullptr;
    };
    if (!skel)
        return fail("open failed: " + errnoText(errno));
    configureRodata(skel->rodata, ctx.options);
    setLeafRanges(*skel->rodata, ctx.options.cpu_leaf_functions);
    if (int err = useStackMap(skel.get(), ctx.maps, LS_STACKS_CPU); err)
        return fail("map setup failed: " + errnoText(err));
    if (int err = bpf_map__set_max_entries(skel->maps.cpu_counts, std::max(ctx.options.cpu_stack_keys, 1u)); err)
        return fail("map setup failed: " + errnoText(-err));
    clearLibbpfLog();
    if (int err = ls_cpu__load(skel.get()); err)
        return fail("load failed: " + errnoText(err));
    CpuFamily::addUserKey(bpf_map__fd(skel->maps.cpu_counts));
    auto family = std::make_unique<CpuFamily>(std::move(skel));
    auto& s = *family;
    std::string errors;
    int attached = 0;
    for (int cpu : onlineCpus()) {
        perf_event_attr attr {};
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = PERF_COUNT_SW_CPU_CLOCK;
        attr.freq = 1;
        attr.sample_freq = hz;
        const long fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            if (errors.empty())
                errors = "perf_event_open on cpu " + std::to_string(cpu) + ": " + errnoText(errno);
            continue;
        }
        bpf_link* l = bpf_program__attach_perf_event(s.program(), static_cast<int>(fd));
        if (!l) {
            if (errors.empty())
                errors = "attach on cpu " + std::to_string(cpu) + ": " + attachError();
            close(static_cast<int>(fd));
            continue;
        }
        s.links().add(l);
        ++attached;
    }
    if (attached == 0)
        return fail(errors.empty() ? "no online CPU" : errors);
    st.attached = true;
    st.reason = errors; // partial: some CPUs refused
    ctx.status.push_back(st);
    return family;
}

} // namespace lockscope::probes::detail
