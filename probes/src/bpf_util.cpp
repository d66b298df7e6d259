// SPDX-License-Identifier: GPL-2.0-or-later
#include "bpf_util.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include <linux/capability.h>
#include <linux/membarrier.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lockscope/probes/probes.h"
#include "lockscope/util/proc_kallsyms.h"

namespace lockscope::probes::detail {

namespace {

const char* errnoName(int e)
{
    switch (e) {
    case EPERM:
        return "EPERM";
    case ENOENT:
        return "ENOENT";
    case ESRCH:
        return "ESRCH";
    case EINTR:
        return "EINTR";
    case EIO:
        return "EIO";
    case E2BIG:
        return "E2BIG";
    case EBADF:
        return "EBADF";
    case EAGAIN:
        return "EAGAIN";
    case ENOMEM:
        return "ENOMEM";
    case EACCES:
        return "EACCES";
    case EFAULT:
        return "EFAULT";
    case EBUSY:
        return "EBUSY";
    case EEXIST:
        return "EEXIST";
    case ENODEV:
        return "ENODEV";
    case EINVAL:
        return "EINVAL";
    case ENOSPC:
        return "ENOSPC";
    case ENOSYS:
        return "ENOSYS";
    case EOPNOTSUPP:
        return "EOPNOTSUPP";
    case 524:
        return "ENOTSUPP";
    default:
        return nullptr;
    }
}

std::mutex g_log_mutex;
std::string g_log;

int libbpfPrint(enum libbpf_print_level level, const char* fmt, va_list args)
{
    if (level == LIBBPF_DEBUG)
        return 0;
    char buf[1024];
    int n = vsnprintf(buf, sizeof buf, fmt, args);
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log += buf;
    if (g_log.size() > (1u << 16))
        g_log.erase(0, g_log.size() - (1u << 15));
    return n;
}

bool hasCap(const __user_cap_data_struct (&data)[2], int cap)
{
    return (data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

} // namespace

std::string errnoText(int err)
{
    const int e = err < 0 ? -err : err;
    std::string text;
    if (e == 524)
        text = "Operation not supported by this kernel";
    else
        text = std::strerror(e);
    if (const char* name = errnoName(e))
        text += std::string(" (") + name + ")";
    return text;
}

void installLibbpfLogger()
{
    libbpf_set_print(libbpfPrint);
}

void clearLibbpfLog()
{
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log.clear();
}

std::string lastLibbpfError()
{
    std::lock_guard<std::mutex> lock(g_log_mutex);
    // The last non-empty line that is not part of a verifier dump.
    std::istringstream in(g_log);
    std::string line, best;
    while (std::getline(in, line)) {
        if (line.rfind("libbpf:", 0) == 0)
            best = line.substr(8);
    }
    return best;
}

void checkEnvironment()
{
    __user_cap_header_struct hdr {};
    __user_cap_data_struct data[2] {};
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    hdr.pid = 0;
    bool allowed = geteuid() == 0;
    if (!allowed && syscall(SYS_capget, &hdr, data) == 0)
        allowed = (hasCap(data, CAP_BPF) && hasCap(data, CAP_PERFMON)) || hasCap(data, CAP_SYS_ADMIN);
    if (!allowed)
        throw ProbeError("lockscope: loading BPF probes needs root or CAP_BPF+CAP_PERFMON; "
                         "run with sudo or grant them (setcap cap_bpf,cap_perfmon+ep)");
    struct stat st { };
    if (stat("/sys/kernel/btf/vmlinux", &st) != 0)
        throw ProbeError("lockscope: this kernel exposes no BTF (/sys/kernel/btf/vmlinux missing); "
                         "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y");
}

std::string ensureTracefs()
{
    struct stat st { };
    if (stat("/sys/kernel/tracing/events", &st) == 0 || stat("/sys/kernel/debug/tracing/events", &st) == 0)
        return {};
    if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0)
        return "mounted tracefs on /sys/kernel/tracing";
    return "tracefs not mounted and mounting it failed: " + errnoText(errno);
}

int btfFunctionId(const std::string& name)
{
    static btf* vmlinux = btf__load_vmlinux_btf();
    return vmlinux ? btf__find_by_name_kind(vmlinux, name.c_str(), BTF_KIND_FUNC) : -1;
}

bool btfHasFunction(const std::string& name)
{
    return btfFunctionId(name) >= 0;
}

namespace {

// A vmlinux text symbol: "ffffffff81000000 T name\n" (module symbols end in
// "\t[module]", so the newline right after the name leaves them out).
// A line-by-line scan per function asked about took ~0.1 s each, a set of
// all 10^5 names as long to build and to free.
bool kallsymsHasText(const std::string& name)
{
    const std::string& text = util::procKallsyms();
    for (const char* type : { " T ", " t " })
        if (text.find(type + name + "\n") != std::string::npos)
            return true;
    return false;
}

} // namespace

bool kernelHasFunction(const std::string& name, std::string* reason)
{
    if (btfHasFunction(name))
        return true;
    // Not in BTF: it may still be a text symbol (kprobes only need that).
    if (kallsymsHasText(name)) {
        if (reason)
            *reason = "in kallsyms but not in BTF (fentry impossible; kprobe only)";
        return true;
    }
    if (reason)
        *reason = "not in this kernel (inlined or renamed)";
    return false;
}

std::string kprobeUnavailableReason()
{
    struct stat st { };
    if (stat("/sys/bus/event_source/devices/kprobe", &st) == 0)
        return {};
    if (stat("/sys/kernel/tracing/kprobe_events", &st) == 0
        || stat("/sys/kernel/debug/tracing/kprobe_events", &st) == 0)
        return {};
    return "kernel has no kprobes (CONFIG_KPROBES off)";
}

int possibleCpus()
{
    int n = libbpf_num_possible_cpus();
    return n > 0 ? n : 1;
}

uint64_t sumPerCpu(int map_fd, uint32_t key, int ncpus)
{
    std::vector<uint64_t> values(static_cast<size_t>(ncpus));
    if (bpf_map_lookup_elem(map_fd, &key, values.data()) != 0)
        return 0;
    uint64_t sum = 0;
    for (uint64_t v : values)
        sum = saturatingAdd(sum, v);
    return sum;
}

uint64_t recursionMisses(int prog_fd)
{
    if (prog_fd < 0)
        return 0;
    bpf_prog_info info {};
    __u32 len = sizeof info;
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0)
        return 0;
    return info.recursion_misses;
}

uint64_t recursionMisses(const bpf_program* prog)
{
    return recursionMisses(bpf_program__fd(prog));
}

ls_hist emptyHist()
{
    ls_hist h {};
    h.min = ~0ULL;
    return h;
}

ls_hist sumCpuHists(const std::vector<ls_hist>& cpus)
{
    ls_hist sum = emptyHist();
    for (const ls_hist& c : cpus) {
        // A copy with times but no count holds long waits counted elsewhere (wait.bpf.c).
        if (c.count == 0 && c.max == 0)
            continue;
        sum.count += c.count;
        sum.total += c.total;
        sum.min = std::min(sum.min, c.min);
        sum.max = std::max(sum.max, c.max);
        for (size_t b = 0; b < LS_HIST_SLOTS; ++b)
            sum.slots[b] += c.slots[b];
    }
    return sum;
}

ls_lat_val mergeCpus(const std::vector<ls_lat_val>& cpus)
{
    ls_lat_val sum {};
    std::vector<ls_hist> hists, weighted;
    hists.reserve(cpus.size());
    weighted.reserve(cpus.size());
    for (const ls_lat_val& c : cpus) {
        sum.calls += c.calls;
        sum.errors += c.errors;
        hists.push_back(c.hist);
        weighted.push_back(c.weighted);
    }
    sum.hist = sumCpuHists(hists);
    sum.weighted = sumCpuHists(weighted);
    return sum;
}

std::vector<ProgramCode> jitCode(int prog_fd)
{
    bpf_prog_info info {};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0 || info.nr_jited_ksyms == 0
        || info.nr_jited_ksyms != info.nr_jited_func_lens)
        return {};
    const uint32_t n = info.nr_jited_ksyms;
    std::vector<uint64_t> starts(n);
    std::vector<uint32_t> lens(n);
    bpf_prog_info again {};
    again.nr_jited_ksyms = n;
    again.jited_ksyms = reinterpret_cast<uintptr_t>(starts.data());
    again.nr_jited_func_lens = n;
    again.jited_func_lens = reinterpret_cast<uintptr_t>(lens.data());
    len = sizeof again;
    if (bpf_obj_get_info_by_fd(prog_fd, &again, &len) != 0)
        return {};
    std::string name = "bpf_prog_";
    static constexpr char kHex[] = "0123456789abcdef";
    for (uint8_t b : info.tag) {
        name += kHex[b >> 4];
        name += kHex[b & 0xf];
    }
    name += "_";
    name += info.name;
    std::vector<ProgramCode> out;
    for (uint32_t i = 0; i < n && i < again.nr_jited_ksyms; ++i)
        if (starts[i] && lens[i])
            out.push_back(ProgramCode { starts[i], starts[i] + lens[i], name });
    return out;
}

uint32_t stackWindowWalks(uint32_t per_second)
{
    if (per_second == 0)
        return 0;
    constexpr uint64_t kNsPerSecond = 1000000000ULL;
    const uint64_t walks = (uint64_t { per_second } * LS_STACK_WINDOW_NS + kNsPerSecond - 1) / kNsPerSecond;
    return static_cast<uint32_t>(std::max<uint64_t>(walks, 1));
}

Log2Hist histFromKernel(const ls_hist& h)
{
    std::array<uint64_t, Log2Hist::kBuckets> buckets {};
    uint64_t count = 0;
    unsigned first = Log2Hist::kBuckets, last = 0;
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i) {
        buckets[i] = h.slots[i];
        if (!buckets[i])
            continue;
        count = saturatingAdd(count, buckets[i]);
        first = std::min(first, i);
        last = i;
    }
    if (count == 0)
        return {};
    uint64_t min = std::clamp<uint64_t>(h.min, Log2Hist::bucketLow(first), Log2Hist::bucketHigh(first));
    uint64_t max = std::clamp<uint64_t>(h.max, Log2Hist::bucketLow(last), Log2Hist::bucketHigh(last));
    uint64_t lo = 0, hi = 0;
    uint64_t total = h.total;
    if (!__builtin_mul_overflow(count, min, &lo) && total < lo)
        total = lo;
    if (!__builtin_mul_overflow(count, max, &hi) && total > hi)
        total = hi;
    return Log2Hist::fromParts(buckets, count, total, min, max);
}

std::string attachError()
{
    return errnoText(errno);
}

bool waitForRunningPrograms()
{
    // MEMBARRIER_CMD_GLOBAL is synchronize_rcu(): tracepoint, fentry and
    // kprobe programs all run inside an RCU read-side section or with
    // preemption off.
    return syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
}

uint32_t closeGeneration(volatile uint32_t* gen)
{
    return __atomic_fetch_add(gen, 1, __ATOMIC_SEQ_CST) & 1;
}

void settleGenerations()
{
    if (!waitForRunningPrograms())
        usleep(20000);
}

} // namespace lockscope::probes::detail
