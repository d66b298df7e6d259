// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope lab`: boot kernel builds under qemu, record the same workload on
// each, compare. A subcommand rather than a companion binary because the lab
// copies this very executable (/proc/self/exe) into each guest: the lockscope
// that runs the lab is exactly the one that records inside it.
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "lockscope/lab/error.h"
#include "lockscope/lab/holder_lock.h"
#include "lockscope/lab/lab.h"

namespace lockscope::cli {
namespace {

struct LabArgs {
    std::vector<std::string> kernels;
    std::string out = "lockscope-lab";
    std::string cache;
    double timeout = 300;
    unsigned memory = 1024;
    unsigned cpus = 2;
    std::string accel = "auto";
    std::string append;
    std::vector<std::string> add;
    std::string record_args;
    bool no_compare = false;
    bool no_wait = false;
    unsigned runs = 1;
    unsigned boot_retries = 2;
    double stall = 20;
    std::vector<std::string> workload;
};

} // namespace

void addLabCommand(CLI::App& app, Result& result)
{
    auto args = std::make_shared<LabArgs>();
    auto* cmd = app.add_subcommand("lab", "boot kernel builds under qemu, record a workload on each, compare");
    cmd->footer("Each kernel is a bzImage, a kernel .deb, a stock Debian kernel fetched with apt-get, or a\n"
                "source tree the lab builds (cached; tinyconfig + lab/config/lab-kernel.config):\n"
                "  lockscope lab --kernel base=src:~/linux@v6.1 --kernel mine=src:~/linux -- semop-multi\n"
                "  lockscope lab --kernel base=debian-src:6.1 --kernel p=debian-src:6.1+my.patch -- workload\n"
                "  lockscope lab --kernel generic=debian:6.1 --kernel cloud=debian:cloud \\\n"
                "      --record-args '--hold-sample 10' -- timer-stress\n"
                "Writes <out>/<name>.lockscope.json per kernel (<out>/<name>/run-K.lockscope.json with\n"
                "--runs), the serial logs, and <out>/compare-<name>.txt comparing each kernel with the\n"
                "first. See docs/kernel-lab.md.");
    cmd->add_option("-k,--kernel", args->kernels,
                    "NAME=bzImage|file.deb|debian[:6.1|:cloud|:<release>]|src:PATH[@COMMIT][+x.patch...]|"
                    "debian-src:6.1[+x.patch...]")
        ->required();
    cmd->add_option("--runs", args->runs, "captures per kernel; boots alternate between kernels (A B A B ...)")
        ->check(CLI::Range(1u, 100u))
        ->capture_default_str();
    cmd->add_option("--boot-retries", args->boot_retries, "boots again after a stalled or timed-out guest")
        ->check(CLI::Range(0u, 10u))
        ->capture_default_str();
    cmd->add_option("--stall-timeout", args->stall,
                    "seconds without the guest's heartbeat before it counts as frozen (0: only --timeout)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option("-o,--out", args->out, "output directory")->capture_default_str();
    cmd->add_option("--cache", args->cache,
                    "where downloaded and built kernels are kept (default ~/.cache/lockscope/lab)");
    cmd->add_option("--timeout", args->timeout, "seconds per guest boot before it is killed")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd->add_option("--memory", args->memory, "guest memory in MiB")
        ->check(CLI::Range(256u, 65536u))
        ->capture_default_str();
    cmd->add_option("--cpus", args->cpus, "guest CPUs")->check(CLI::Range(1u, 64u))->capture_default_str();
    cmd->add_option("--accel", args->accel,
                    "auto, kvm, tcg or tcg-multi (auto: KVM when usable; tcg-multi: a host thread per vCPU and "
                    "native spinlocks, so spinlock contention shows)")
        ->capture_default_str();
    cmd->add_option("--append", args->append, "extra guest kernel command line");
    cmd->add_option("--add", args->add, "another host file for the guest, at the same path (with its libraries)");
    cmd->add_option("--record-args", args->record_args, "options for `lockscope record` in the guest, one string");
    cmd->add_flag("--no-compare", args->no_compare, "do not run lockscope compare at the end");
    cmd->add_flag("--no-wait", args->no_wait,
                  "when another lab uses the output directory, refuse (exit 75) instead of waiting for it");
    cmd->add_option("workload", args->workload, "the workload and its arguments, after --")->required();
    cmd->callback([args, &result] {
        lab::LabOptions o;
        for (const auto& k : args->kernels)
            o.kernels.push_back(lab::parseKernelArg(k));
        o.workload = args->workload;
        std::istringstream words(args->record_args);
        for (std::string w; words >> w;)
            o.record_args.push_back(w);
        o.extra_files = args->add;
        std::error_code ec;
        o.lockscope = std::filesystem::read_symlink("/proc/self/exe", ec).string();
        o.out_dir = args->out;
        o.cache_dir = args->cache;
        o.boot.timeout_s = args->timeout;
        o.boot.memory_mb = args->memory;
        o.boot.cpus = args->cpus;
        o.boot.accel = lab::parseAccel(args->accel);
        o.boot.append = args->append;
        o.compare = !args->no_compare;
        o.runs = args->runs;
        o.boot_retries = args->boot_retries;
        o.boot.stall_s = args->stall;
        o.wait_for_busy = !args->no_wait;
        try {
            result.exit_code = lab::runLab(o, std::cerr);
        } catch (const lab::LabBusy& e) {
            std::cerr << "lockscope: " << e.what() << std::endl;
            result.exit_code = lab::kLabBusyExitCode;
        }
    });
}

} // namespace lockscope::cli
