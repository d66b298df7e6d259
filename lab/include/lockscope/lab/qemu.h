// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace lockscope::lab {

// Tcg runs every vCPU on one host thread with the hypervisor CPUID bit, so
// the guest's spinlocks contend in virt_spin_lock(), which fires no
// lock:contention_* tracepoint. TcgNative is the same emulator with native
// queued spinlocks (no hypervisor bit): with 4 vCPUs their waits show.
// TcgMulti: one host thread per vCPU (MTTCG), native spinlocks; it can hang
// a guest that live-patches hot code (docs/kernel-lab.md, Limits).
enum class Accel { Auto, Kvm, Tcg, TcgNative, TcgMulti };

struct AccelChoice {
    std::vector<std::string> args;  // qemu arguments
    std::string name;               // "kvm" or "tcg"
    std::string why;                // for the progress line
};

// KVM when /dev/kvm is usable and the CPU advertises vmx/svm. Some hosts
// (these VMs) expose a /dev/kvm that cannot run stock kernels; without the
// CPU flags it is not tried. Auto's TCG runs single-threaded: multi-threaded
// TCG hung guests while probes on the spin-lock functions were attached (its
// vCPUs kept executing the int3 of a live patch the kernel had finished).
AccelChoice chooseAccel(Accel requested);
Accel parseAccel(const std::string& text);  // auto|kvm|tcg|tcg-native|tcg-multi; throws LabError

// "" when `--accel kvm` can boot a stock kernel here, else the one line that
// says why not (no /dev/kvm; a PVM /dev/kvm, which boots only PVM-enabled
// guest kernels: qemu asserts on an MSR or hangs after the BIOS).
std::string kvmUnusableReason();

struct BootOptions {
    std::string qemu = "qemu-system-x86_64";
    std::string kernel;      // bzImage
    std::string initrd;      // cpio
    std::string data_path;   // where ttyS1 (the result channel) is written
    std::string append;      // extra kernel command line
    unsigned memory_mb = 1024;
    unsigned cpus = 2;
    double timeout_s = 300;
    // The guest prints LSLAB-BEAT on its console every kHeartbeatS from
    // /init on; a guest silent for stall_s after its first beat is stuck
    // (seen with multi-threaded TCG: a boot froze after `step record` until
    // the timeout) and is killed. So is a guest whose kernel reports a soft
    // lockup: one vCPU can keep beating while the others loop with
    // interrupts off (single-threaded TCG, a 4-vCPU guest attaching the hold
    // probe). 0 disables both checks.
    double stall_s = 20;
    Accel accel = Accel::Auto;
    // qemu's gdbstub on 127.0.0.1:gdb_port (0: none), to see where a frozen
    // guest's vCPUs are (docs/kernel-lab.md, Frozen guests).
    unsigned gdb_port = 0;
};

constexpr double kHeartbeatS = 2;

struct BootResult {
    bool timed_out = false;
    bool stalled = false;     // killed: no heartbeat for stall_s, or its kernel reported a soft lockup
    std::string stall_report; // that report (the console line), when it was one
    double max_beat_gap_s = 0;  // longest silence between heartbeats (what stall_s must exceed)
    bool started = true;
    int exit_code = -1;
    std::string accel;        // what was used
    std::string serial;       // the console (ttyS0), firmware noise included
    std::vector<std::string> command;
    // The guest froze (no beat, a soft lockup, the timeout) rather than the
    // kernel under test failing: worth booting again (lockscope lab --boot-retries).
    bool frozen() const noexcept { return stalled || timed_out; }
};

// Boots, waits for qemu to exit or the timeout (then kills it), and calls
// on_stage for each "LSLAB-STAGE <what>" the guest prints on its console.
BootResult bootGuest(const BootOptions& options, const std::function<void(const std::string&)>& on_stage);

} // namespace lockscope::lab
