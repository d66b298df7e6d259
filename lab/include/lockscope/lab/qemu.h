// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace lockscope::lab {

// TcgMulti: one host thread per vCPU (MTTCG). Plain Tcg runs every vCPU on
// one host thread, which practically never switches vCPUs inside a spinlock
// critical section, so a guest sees no spinlock contention at all.
enum class Accel { Auto, Kvm, Tcg, TcgMulti };

struct AccelChoice {
    std::vector<std::string> args;  // qemu arguments
    std::string name;               // "kvm" or "tcg"
    std::string why;                // for the progress line
};

// KVM when /dev/kvm is usable and the CPU advertises vmx/svm. Some hosts
// (these VMs) expose a /dev/kvm that cannot run stock kernels; without the
// CPU flags it is not tried. TCG runs single-threaded: multi-threaded TCG
// hung or oopsed while probes on the spin-lock functions were being
// attached and detached.
AccelChoice chooseAccel(Accel requested);
Accel parseAccel(const std::string& text);  // auto|kvm|tcg; throws LabError

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
    // the timeout) and is killed. 0 disables the check.
    double stall_s = 20;
    Accel accel = Accel::Auto;
};

constexpr double kHeartbeatS = 2;

struct BootResult {
    bool timed_out = false;
    bool stalled = false;     // killed: no heartbeat for stall_s
    double max_beat_gap_s = 0;  // longest silence between heartbeats (what stall_s must exceed)
    bool started = true;
    int exit_code = -1;
    std::string accel;        // what was used
    std::string serial;       // the console (ttyS0), firmware noise included
    std::vector<std::string> command;
};

// Boots, waits for qemu to exit or the timeout (then kills it), and calls
// on_stage for each "LSLAB-STAGE <what>" the guest prints on its console.
BootResult bootGuest(const BootOptions& options, const std::function<void(const std::string&)>& on_stage);

} // namespace lockscope::lab
