// SPDX-License-Identifier: GPL-2.0-or-later
// The fixture of kernel_holders_test: `lockscope agent --holder-stacks` in a
// stock Debian kernel (fentry for the hold probe) booted with 4 vCPUs under
// multi-threaded TCG, where the samples' whole-array semaphore workload makes
// real spinlock contention: a waiter queued behind a pending one fires
// lock:contention_begin, which a 1- or 2-vCPU guest never shows. The agent's
// capture since start and its holders' profile come back for the test.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

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
        const std::string get = "wget -q -O /lab/out/";
        const std::string url = " http://127.0.0.1:9755";
        const GuestStep agent{
            "agent_holders",
            {"/bin/sh", "-c",
             "ifconfig lo 127.0.0.1 up; /usr/bin/lockscope agent --no-cpu --holder-stacks --window 1 --listen "
             "127.0.0.1:9755 > /lab/out/agent_holders.log 2>&1 & a=$!; i=0; "
             "until grep -q serving /lab/out/agent_holders.log; do i=$((i+1)); [ $i -gt 120 ] && break; sleep 1; "
             "done; /usr/bin/semop-multi --multi --threads 4 --sems 2 --duration 5; sleep 3; " +
                 get + "holders.pb.gz" + url + "/debug/pprof/lock_owners; " + get + "capture.json" + url +
                 "/capture; kill $a; wait $a; echo agent_exit=$?"},
            {"/lab/out/agent_holders.log", "/lab/out/holders.pb.gz", "/lab/out/capture.json"}};
        const std::vector<GuestBinary> binaries = {{"/usr/bin/lockscope", lockscope},
                                                   {"/usr/bin/semop-multi", semopMulti}};
        BootOptions boot;
        boot.cpus = 4;
        boot.accel = Accel::TcgMulti;
        // Multi-threaded TCG now and then freezes a guest (qemu.h, stall_s):
        // booted again once, as lockscope lab does (--boot-retries).
        GuestRun run = runInGuest(kernel, {agent}, binaries, boot, out, progress);
        if (run.boot.stalled) {
            progress("the guest froze: booting again");
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
