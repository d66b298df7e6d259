// SPDX-License-Identifier: GPL-2.0-or-later
// The fixture of kernel_holders_test: `lockscope agent --holder-stacks` in a
// stock Debian kernel (fentry for the hold probe) booted with 4 vCPUs and
// native spinlocks, where the samples' whole-array semaphore workload makes
// spinlock contention: a waiter queued behind a pending one fires
// lock:contention_begin, which a 1- or 2-vCPU guest never shows. The vCPUs
// share one host thread (tcg-native): multi-threaded TCG hung this guest
// now and then while the hold probe attached (docs/kernel-lab.md, Limits).
// The agent's capture since start and its holders' profile come back for the test.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "guest_agent_step.h"
#include "lockscope/lab/error.h"
#include "lockscope/lab/lab.h"

namespace fs = std::filesystem;
using namespace lockscope::lab;

int main(int argc, char** argv)
{
    if (argc != 5) {
        std::cout << "usage: lab_guest_holders CACHE OUT LOCKSCOPE SEMOP_MULTI\n";
        return 2;
    }
    const std::string cache = argv[1], out = argv[2], lockscope = argv[3], semopMulti = argv[4];
    try {
        auto progress = [](const std::string& what) { std::cout << "lab-holders: " << what << std::endl; };
        fs::remove_all(out);
        fs::create_directories(out);
        const Kernel kernel = resolveKernel({"guest", "debian:cloud"}, cache, progress);
        // 16 s of load: most waits here have no holder to find (docs/kernel-lab.md,
        // Limits); 8-s runs found 3-8 that do, and once none.
        const GuestStep agent = lab_test::agentStep(
            "agent_holders", "--no-cpu --holder-stacks --window 1",
            "/usr/bin/semop-multi --multi --threads 4 --sems 2 --duration 16", 3,
            {{"holders.pb.gz", "/debug/pprof/lock_owners"}, {"capture.json", "/capture"}});
        const std::vector<GuestBinary> binaries = {{"/usr/bin/lockscope", lockscope},
                                                   {"/usr/bin/semop-multi", semopMulti}};
        BootOptions boot;
        boot.cpus = 4;
        boot.accel = Accel::TcgNative;
        GuestRun run = runInGuest(kernel, {agent}, binaries, boot, out, progress);
        // Now and then a vCPU loops with interrupts off while the hold probe
        // attaches (a soft lockup the watchdog reports): booted again once,
        // as lockscope lab does (--boot-retries).
        if (run.boot.frozen()) {
            progress("the guest froze (" + run.failure + "): booting again");
            run = runInGuest(kernel, {agent}, binaries, boot, out, progress);
        }
        if (!run.ok()) {
            std::cout << "lab-holders: FAILED: " << run.failure << "\n--- serial log tail ---\n"
                      << run.serialTail(40) << std::endl;
            return 1;
        }
        std::cout << "lab-holders: results in " << out << std::endl;
        return 0;
    } catch (const std::exception& e) {
        std::cout << "lab-holders: FAILED: " << e.what() << std::endl;
        return 1;
    }
}
