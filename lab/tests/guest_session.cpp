// SPDX-License-Identifier: GPL-2.0-or-later
// The kernel-guest test fixture: one boot of a stock Debian kernel that runs
// every guest-side step the kernel_guest_test checks read afterwards (facts,
// a transfer check, lockscope record with each hold backend, the hold-probe
// cost runs). One boot keeps the suite inside its time budget under TCG.
// Exit 0 only when the guest ran every step and sent everything back; on
// failure the serial log tail is printed.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "guest_agent_step.h"
#include "lockscope/lab/error.h"
#include "lockscope/lab/lab.h"
#include "lockscope/lab/process.h"

namespace fs = std::filesystem;
using namespace lockscope::lab;

namespace {

struct Args {
    std::string cache, out, workload, lockscope, bpf_dir, semop_multi, owner_workload, kernel = "debian:cloud";
    double timeout = 300;
};

Args parseArgs(int argc, char** argv)
{
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string flag = argv[i];
        std::string value = argv[i + 1];
        if (flag == "--cache")
            a.cache = value;
        else if (flag == "--out")
            a.out = value;
        else if (flag == "--workload")
            a.workload = value;
        else if (flag == "--lockscope")
            a.lockscope = value;
        else if (flag == "--bpf-objects")
            a.bpf_dir = value;
        else if (flag == "--kernel")
            a.kernel = value;
        else if (flag == "--semop-multi")
            a.semop_multi = value;
        else if (flag == "--owner-workload")
            a.owner_workload = value;
        else if (flag == "--timeout")
            a.timeout = std::stod(value);
        else
            throw LabError("unknown option " + flag);
    }
    if (a.cache.empty() || a.out.empty() || a.workload.empty() || a.lockscope.empty())
        throw LabError("usage: lab_guest_session --cache DIR --out DIR --workload BIN --lockscope BIN "
                       "[--bpf-objects DIR] [--semop-multi BIN] [--owner-workload BIN]");
    return a;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        auto args = parseArgs(argc, argv);
        auto progress = [](const std::string& what) { std::cout << "lab-session: " << what << std::endl; };
        fs::remove_all(args.out);
        fs::create_directories(args.out);
        auto kernel = resolveKernel({"guest", args.kernel}, args.cache, progress);

        const std::string W = "/usr/bin/lockscope-lab-workload";
        std::vector<GuestStep> steps = {
            factsStep(probeSymbols()),
            // A binary file through the channel, compared byte for byte by the test.
            {"transfer", {"cp", W, "/lab/out/transfer.bin"}, {"/lab/out/transfer.bin"}},
            // The workload alone: it runs and its exact counts are what the probes must see.
            {"workload_timers", {W, "timers", "--threads", "2", "--ops", "5000"}, {}},
        };
        std::vector<GuestBinary> binaries = {{W, args.workload}, {"/usr/bin/lockscope", args.lockscope}};
        // Every program of every skeleton through the guest kernel's verifier
        // (what `record` loads depends on its choices; this loads them all).
        // funcs is left out: its programs get their targets at run time, and
        // rec_timers loads it for __lock_timer.
        if (!args.bpf_dir.empty()) {
            auto bpftool = findExecutable("bpftool");
            if (bpftool.empty() && fs::exists("/usr/sbin/bpftool"))
                bpftool = "/usr/sbin/bpftool";
            if (bpftool.empty())
                throw LabError("bpftool not found: apt-get install bpftool (needed to load the objects in the guest)");
            binaries.push_back({"/usr/sbin/bpftool", bpftool});
            for (const char* obj : {"wait", "follow", "hold_fentry", "hold_kprobe", "syscalls", "cpu", "ulock"}) {
                auto host = fs::path(args.bpf_dir) / (std::string(obj) + ".linked.o");
                if (!fs::exists(host))
                    throw LabError("no BPF object " + host.string() + " (build lockscope_bpf_skeletons)");
                std::string guest = std::string("/lab/bpf/") + obj + ".o";
                std::string pin = std::string("/sys/fs/bpf/") + obj;
                binaries.push_back({guest, host.string()});
                steps.push_back({std::string("loadall_") + obj,
                                 {"/bin/sh", "-c",
                                  "/usr/sbin/bpftool prog loadall " + guest + " " + pin +
                                      " && echo loadall=ok || echo loadall=failed; echo pinned=$(ls " + pin +
                                      " 2>/dev/null | tr '\\n' ' '); rm -rf " + pin},
                                 {}});
            }
        }
        bool has_record = runProcess({args.lockscope, "record", "--help"}, 30).ok();
        std::ofstream(fs::path(args.out) / "host.txt") << "record=" << (has_record ? "yes" : "no") << "\n";
        if (has_record) {
            auto record = [&](const std::string& name, std::vector<std::string> opts,
                              std::vector<std::string> workload) {
                std::vector<std::string> cmd = {"/usr/bin/lockscope", "record", "-o",
                                                "/lab/out/" + name + ".lockscope.json", "--label", name};
                cmd.insert(cmd.end(), opts.begin(), opts.end());
                cmd.push_back("--");
                cmd.insert(cmd.end(), workload.begin(), workload.end());
                steps.push_back({name, cmd, {"/lab/out/" + name + ".lockscope.json"}});
            };
            const std::vector<std::string> sem = {W, "sem", "--threads", "2", "--ops", "2000"};
            const std::vector<std::string> timers = {W, "timers", "--threads", "2", "--ops", "2000"};
            // Hold probes with the automatic backend (fentry on these kernels), then forced to kprobes;
            // syscall latency (off unless asked for) for the exact counts. rec_kprobe walks every
            // stack: a lock our own programs take is known as ours only by a walked stack.
            record("rec_auto", {"--no-cpu", "--hold", "--syscalls"}, sem);
            record("rec_kprobe", {"--no-cpu", "--hold-backend", "kprobe", "--syscalls", "--stack-budget", "0"}, sem);
            // lockscope agent --hold --syscalls --functions: the hold tables
            // and latency halves drained every window (fentry here); the same
            // workloads as rec_auto and rec_timers while it runs, then its
            // metrics, hold profile and capture since start.
            steps.push_back(lab_test::agentStep(
                "agent_hold", "--no-cpu --hold --syscalls --functions --window 1",
                W + " sem --threads 2 --ops 2000; " + W + " timers --threads 2 --ops 2000", 8,
                {{"agent_hold_metrics.txt", "/metrics"},
                 {"agent_hold_profile.pb.gz", "/debug/pprof/lock_hold"},
                 {"agent_hold_capture.json", "/capture"}}));
            // Function probes (__lock_timer) and timer syscall latency with exact counts.
            record("rec_timers", {"--no-cpu", "--functions", "--syscalls"}, timers);
            // --per-cgroup: the same workload in two cgroups made here; the
            // hold probe must split its holds by them (kernel_guest_test).
            // Without cgroup v2 the step says so and records nothing.
            const std::string inGroup = "sh -c 'echo \\$\\$ > /sys/fs/cgroup/ls-%/cgroup.procs && exec " + W +
                                        " sem --threads 2 --ops 2000'";
            auto in = [&](const char* g) {
                std::string c = inGroup;
                return c.replace(c.find('%'), 1, g);
            };
            steps.push_back({"rec_cgroups",
                             {"/bin/sh", "-c",
                              "mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null; "
                              "mkdir -p /sys/fs/cgroup/ls-a /sys/fs/cgroup/ls-b || { echo no cgroup v2; exit 0; }; "
                              "/usr/bin/lockscope record -o /lab/out/rec_cgroups.lockscope.json --label rec_cgroups "
                              "--no-cpu --hold --per-cgroup -- /bin/sh -c \"" + in("a") + " & " + in("b") + " & wait\""},
                             {"/lab/out/rec_cgroups.lockscope.json"}});
            // Syscall latency timing 1 in 4 calls per thread, every call still counted.
            record("rec_sc_sample", {"--no-cpu", "--no-hold", "--syscall-sample", "4"}, sem);
            // Hold-probe cost: the same workload bare, recorded without hold
            // probes, with them at full rate, and sampled 1 in 10 (same boot).
            const std::vector<std::string> bench = {W, "sem", "--threads", "2", "--ops", "5000"};
            steps.push_back({"bench_bare", bench, {}});
            record("bench_nohold", {"--no-cpu", "--no-hold"}, bench);
            record("bench_full", {"--no-cpu", "--hold"}, bench);
            record("bench_sample10", {"--no-cpu", "--hold-sample", "10"}, bench);
            // Holder stacks on the samples' whole-array semaphore workload: the
            // scan must load and attach on the 6.1 verifier. (This single-threaded
            // TCG guest shows no spinlock contention at all: see docs/kernel-lab.md.)
            if (!args.semop_multi.empty()) {
                const std::string M = "/usr/bin/semop-multi";
                binaries.push_back({M, args.semop_multi});
                record("rec_holders", {"--no-cpu", "--holder-stacks"},
                       {M, "--multi", "--threads", "4", "--sems", "16", "--duration", "2"});
            }
            // A global mutex held on purpose (rtnl_mutex, by owner-workload
            // rtnl): named by its symbol (this kernel's kallsyms lists data),
            // its owner read; then --lock by that name alone.
            if (!args.owner_workload.empty()) {
                const std::string O = "/usr/bin/owner-workload";
                binaries.push_back({O, args.owner_workload});
                record("rec_names", {"--no-cpu", "--hold", "--lock-names", "--lock-owner"}, {O, "rtnl"});
                record("rec_names_lock", {"--no-cpu", "--lock-names", "--lock", "rtnl_mutex"}, {O, "rtnl"});
            }
        }
        BootOptions boot;
        boot.timeout_s = args.timeout;
        auto run = runInGuest(kernel, steps, binaries, boot, args.out, progress);
        if (!run.ok()) {
            std::cout << "lab-session: FAILED: " << run.failure << "\n--- serial log tail (" << args.out
                      << "/serial.log) ---\n"
                      << run.serialTail(40) << std::endl;
            return 1;
        }
        std::cout << "lab-session: every step ran; results in " << args.out << std::endl;
        return 0;
    } catch (const std::exception& e) {
        std::cout << "lab-session: FAILED: " << e.what() << std::endl;
        return 1;
    }
}
