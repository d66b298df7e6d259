// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/lab/qemu.h"

#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <fstream>
#include <unistd.h>

#include "lockscope/lab/error.h"
#include "lockscope/lab/process.h"

namespace lockscope::lab {

namespace {

bool cpuHasVirtualization()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("flags", 0) == 0)
            return line.find(" vmx") != std::string::npos || line.find(" svm") != std::string::npos;
    }
    return false;
}

bool kvmDeviceUsable()
{
    int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return false;
    ::close(fd);
    return true;
}

} // namespace

std::string kvmUnusableReason()
{
    std::error_code ec;
    if (!std::filesystem::exists("/dev/kvm", ec))
        return "--accel kvm: this host has no /dev/kvm: use --accel tcg-multi or tcg";
    // PVM (a paravirtual KVM for nested guests) has its own module and needs
    // no vmx/svm: it runs only guest kernels built for PVM.
    const bool pvm = std::filesystem::exists("/sys/module/kvm_pvm", ec);
    if (pvm || !cpuHasVirtualization())
        return std::string("--accel kvm: this host's /dev/kvm is ") +
               (pvm ? "PVM (kvm_pvm)" : "not hardware KVM (no vmx/svm in the CPU flags)") +
               ", which boots only PVM-enabled guest kernels (a stock kernel makes qemu assert or hang): use "
               "--accel tcg-multi or tcg";
    if (!kvmDeviceUsable())
        return "--accel kvm: cannot open /dev/kvm (run as root or join the kvm group), or use --accel tcg-multi";
    return "";
}

Accel parseAccel(const std::string& text)
{
    if (text == "auto")
        return Accel::Auto;
    if (text == "kvm")
        return Accel::Kvm;
    if (text == "tcg")
        return Accel::Tcg;
    if (text == "tcg-native")
        return Accel::TcgNative;
    if (text == "tcg-multi")
        return Accel::TcgMulti;
    throw LabError("--accel '" + text + "': expected auto, kvm, tcg, tcg-native or tcg-multi");
}

AccelChoice chooseAccel(Accel requested)
{
    const std::vector<std::string> tcg = {"-accel", "tcg,thread=single"};
    // Without the hypervisor CPUID bit the guest keeps its native queued
    // spinlocks; with it (and no paravirt spinlocks, as under TCG) x86
    // contends in virt_spin_lock(), a test-and-set loop that fires no
    // lock:contention_* tracepoint, so spinlock waits were invisible.
    const std::vector<std::string> native = {"-cpu", "qemu64,-hypervisor"};
    auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    if (requested == Accel::Tcg)
        return {tcg, "tcg", "TCG (asked for)"};
    if (requested == Accel::TcgNative)
        return {with(tcg, native), "tcg", "TCG, single-threaded, native spinlocks (asked for)"};
    if (requested == Accel::TcgMulti)
        return {with({"-accel", "tcg,thread=multi"}, native), "tcg-multi",
                "TCG, one host thread per vCPU, native spinlocks (asked for)"};
    if (requested == Accel::Kvm)
        return {{"-accel", "kvm", "-cpu", "host"}, "kvm", "KVM (asked for)"};
    bool dev = kvmDeviceUsable();
    bool flags = cpuHasVirtualization();
    if (dev && flags)
        return {{"-accel", "kvm", "-cpu", "host"}, "kvm", "KVM (/dev/kvm and vmx/svm present)"};
    return {tcg, "tcg",
            std::string("TCG, single-threaded (") +
                (dev ? "/dev/kvm present but the CPU has no vmx/svm" : "no usable /dev/kvm") + ")"};
}

BootResult bootGuest(const BootOptions& o, const std::function<void(const std::string&)>& on_stage)
{
    auto accel = chooseAccel(o.accel);
    std::vector<std::string> cmd = {o.qemu};
    cmd.insert(cmd.end(), accel.args.begin(), accel.args.end());
    // no_timer_check: on a loaded host, TCG runs the guest so slowly that
    // the kernel's IO-APIC timer check fails and it panics ("IO-APIC + timer
    // doesn't work"), seen here while other builds ran.
    std::string append = "console=ttyS0 quiet panic=-1 loglevel=4 no_timer_check";
    if (!o.append.empty())
        append += " " + o.append;
    std::vector<std::string> rest = {
        "-m", std::to_string(o.memory_mb), "-smp", std::to_string(o.cpus), "-kernel", o.kernel, "-initrd",
        o.initrd, "-append", append, "-display", "none", "-vga", "none", "-no-reboot", "-monitor", "none",
        "-nodefaults", "-serial", "stdio", "-serial", "file:" + o.data_path};
    cmd.insert(cmd.end(), rest.begin(), rest.end());
    if (o.gdb_port != 0) {
        cmd.push_back("-gdb");
        cmd.push_back("tcp:127.0.0.1:" + std::to_string(o.gdb_port));
    }

    BootResult result;
    result.accel = accel.name;
    result.command = cmd;
    std::string pending;  // console text not yet scanned for stage markers
    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> last_beat;
    auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    auto stalled = [&] {
        if (o.stall_s <= 0)
            return false;
        result.stalled = !result.stall_report.empty() || (last_beat && seconds_since(*last_beat) > o.stall_s);
        return result.stalled;
    };
    auto pr = runProcess(cmd, o.timeout_s, [&](std::string_view chunk) {
        pending.append(chunk);
        size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
            std::string line = pending.substr(0, nl);
            pending.erase(0, nl + 1);
            if (line.find("LSLAB-BEAT") != std::string::npos) {
                if (last_beat)
                    result.max_beat_gap_s = std::max(result.max_beat_gap_s, seconds_since(*last_beat));
                last_beat = Clock::now();
                continue;
            }
            if (const size_t lockup = line.find("soft lockup - CPU#"); lockup != std::string::npos &&
                result.stall_report.empty()) {
                result.stall_report = line.substr(lockup);
                while (!result.stall_report.empty() && result.stall_report.back() == '\r')
                    result.stall_report.pop_back();
                continue;
            }
            // Firmware escape codes may precede the marker: search, don't anchor.
            auto at = line.find("LSLAB-STAGE ");
            if (at == std::string::npos || !on_stage)
                continue;
            std::string stage = line.substr(at + 12);
            while (!stage.empty() && (stage.back() == '\r' || stage.back() == ' '))
                stage.pop_back();
            on_stage(stage);
        }
        if (pending.size() > 4096)  // a console that never ends a line must not grow without bound
            pending.erase(0, pending.size() - 4096);
    }, stalled);
    result.timed_out = pr.timed_out;
    result.started = pr.started;
    result.exit_code = pr.exit_code;
    result.serial = std::move(pr.output);
    return result;
}

} // namespace lockscope::lab
