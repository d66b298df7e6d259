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
#include "option_checks.h"
#include "lockscope/lab/bisect.h"
#include "lockscope/lab/error.h"
#include "lockscope/lab/holder_lock.h"
#include "lockscope/lab/lab.h"
#include "lockscope/reports/judge.h"

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
    unsigned runs = 0; // 0: three with two or more kernels, one with one (labOptions)
    unsigned boot_retries = 2;
    double stall = 20;
    unsigned gdb = 0;
    std::vector<std::string> workload;
};

struct BisectArgs {
    LabArgs lab;
    std::string tree, good, bad, lock, figure, resume;
    unsigned max_runs = 0;
};

// The options a lab run and a bisect share: where, how long, the guest's shape, what it records.
void addGuestOptions(CLI::App* cmd, LabArgs& a)
{
    cmd->add_option("--boot-retries", a.boot_retries, "boots again after a stalled or timed-out guest")
        ->check(within(0u, 10u))
        ->capture_default_str();
    cmd->add_option("--stall-timeout", a.stall,
                    "seconds without the guest's heartbeat before it counts as frozen (0: only --timeout)")
        ->check(nonNegative())
        ->capture_default_str();
    cmd->add_option("--gdb", a.gdb,
                    "serve qemu's gdbstub on 127.0.0.1:PORT, to see where a frozen guest is (with --stall-timeout 0)")
        ->check(within(1u, 65535u));
    cmd->add_option("--cache", a.cache, "where downloaded and built kernels are kept (default ~/.cache/lockscope/lab)");
    cmd->add_option("--timeout", a.timeout, "seconds per guest boot before it is killed")
        ->check(positive())
        ->capture_default_str();
    cmd->add_option("--memory", a.memory, "guest memory in MiB")->check(within(256u, 65536u))->capture_default_str();
    cmd->add_option("--cpus", a.cpus, "guest CPUs")->check(within(1u, 64u))->capture_default_str();
    cmd->add_option("--accel", a.accel,
                    "auto, kvm, tcg, tcg-native or tcg-multi (auto: KVM when usable; tcg-native: native "
                    "spinlocks, so spinlock contention shows; tcg-multi: that and a host thread per vCPU)")
        ->capture_default_str();
    cmd->add_option("--append", a.append, "extra guest kernel command line");
    cmd->add_option("--add", a.add, "another host file for the guest, at the same path (with its libraries)")
        ->allow_extra_args(false);
    cmd->add_option("--record-args", a.record_args, "options for `lockscope record` in the guest, one string");
    cmd->add_option("workload", a.workload, "the workload and its arguments, after --");
}

lab::LabOptions labOptions(const LabArgs& a)
{
    lab::LabOptions o;
    for (const auto& k : a.kernels)
        o.kernels.push_back(lab::parseKernelArg(k));
    o.workload = a.workload;
    std::istringstream words(a.record_args);
    for (std::string w; words >> w;)
        o.record_args.push_back(w);
    o.extra_files = a.add;
    std::error_code ec;
    o.lockscope = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    o.out_dir = a.out;
    o.cache_dir = a.cache;
    o.boot.timeout_s = a.timeout;
    o.boot.memory_mb = a.memory;
    o.boot.cpus = a.cpus;
    o.boot.accel = lab::parseAccel(a.accel);
    o.boot.append = a.append;
    o.compare = !a.no_compare;
    // Two or more kernels are compared, and one run a side gives no verdict.
    constexpr unsigned kDefaultRuns = 3;
    o.runs = a.runs ? a.runs : o.kernels.size() >= 2 ? kDefaultRuns : 1;
    o.boot_retries = a.boot_retries;
    o.boot.stall_s = a.stall;
    o.boot.gdb_port = a.gdb;
    o.wait_for_busy = !a.no_wait;
    return o;
}

void addBisectCommand(CLI::App* lab, Result& result)
{
    auto args = std::make_shared<BisectArgs>();
    args->lab.runs = 3;
    args->lab.out = "lockscope-bisect";
    auto* cmd = lab->add_subcommand("bisect", "find the commit that changed a lock, judged per lock over repeated runs");
    cmd->footer("  lockscope lab bisect --tree ~/linux --good v6.1 --bad v6.2 --lock hash_lock -- timer-stress\n"
                "Each step builds a midpoint (cached), records --runs runs and judges them against both ends\n"
                "as `lockscope compare --judge` does. Writes DIR/bisect.log (git bisect replay takes it),\n"
                "DIR/bisect.json and DIR/first-bad.md. See docs/bisect.md.");
    cmd->add_option("--tree", args->tree, "the kernel's git tree (read only: the lab builds in its own clone)");
    cmd->add_option("--good", args->good, "a revision without the change");
    cmd->add_option("--bad", args->bad, "a later revision with it");
    cmd->add_option("--lock", args->lock, "the lock (key or name); default: the one whose figure changed most");
    cmd->add_option("--figure", args->figure,
                    "the figure judged: " + reports::judgeFigureNames() + " (default: the lock's judged one)");
    cmd->add_option("--runs", args->lab.runs, "runs per commit (2 or more: one run gives no verdict)")
        ->check(within(1u, 100u))
        ->capture_default_str();
    cmd->add_option("--max-runs", args->max_runs, "runs before an undecided commit is skipped (default 2 x --runs)")
        ->check(within(1u, 200u));
    cmd->add_option("-o,--out", args->lab.out, "the bisect's directory")->capture_default_str();
    cmd->add_option("--resume", args->resume, "continue the bisect in DIR (its options come from DIR/bisect.json)");
    addGuestOptions(cmd, args->lab);
    cmd->callback([args, cmd, &result] {
        lab::BisectOptions o;
        const bool resume = !args->resume.empty();
        if (resume) {
            for (const char* own : {"--tree", "--good", "--bad", "--lock", "--figure", "--runs", "--max-runs", "workload"})
                if (cmd->count(own))
                    throw CLI::ValidationError("--resume takes every option from DIR/bisect.json; " +
                                               std::string(own) + " cannot change it");
            o = lab::loadBisectOptions(args->resume);
        } else {
            for (const auto* need : {&args->tree, &args->good, &args->bad})
                if (need->empty())
                    throw CLI::ValidationError("lab bisect needs --tree, --good and --bad (or --resume DIR)");
            o.lab = labOptions(args->lab);
            o.accel = args->lab.accel;
            o.tree = args->tree;
            o.good = args->good;
            o.bad = args->bad;
            o.lock = args->lock;
            o.figure = args->figure;
            o.max_runs = args->max_runs;
        }
        std::error_code ec;
        o.lab.lockscope = std::filesystem::read_symlink("/proc/self/exe", ec).string();
        result.exit_code = lab::runBisect(o, resume, std::cerr, std::cout);
    });
}

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
                "Writes <out>/<name>/run-K.lockscope.json per kernel and run (<out>/<name>.lockscope.json\n"
                "with --runs 1), the serial logs, and <out>/compare-<name>.txt comparing each kernel with\n"
                "the first. See docs/kernel-lab.md.");
    cmd->add_option("-k,--kernel", args->kernels,
                    "NAME=bzImage|file.deb|debian[:6.1|:cloud|:<release>]|src:PATH[@COMMIT][+x.patch...]|"
                    "debian-src:6.1[+x.patch...]")
        ->allow_extra_args(false);
    cmd->add_option("--runs", args->runs,
                    "captures per kernel, boots alternating between kernels (A B A B ...); default 3 with two or "
                    "more kernels (one run a side gives no verdict), 1 with one")
        ->check(within(1u, 100u));
    cmd->add_option("-o,--out", args->out, "output directory")->capture_default_str();
    cmd->add_flag("--no-compare", args->no_compare, "do not run lockscope compare at the end");
    cmd->add_flag("--no-wait", args->no_wait,
                  "when another lab uses the output directory, refuse (exit 75) instead of waiting for it");
    addGuestOptions(cmd, *args);
    addBisectCommand(cmd, result);
    cmd->callback([args, cmd, &result] {
        if (cmd->got_subcommand("bisect"))
            return;
        try {
            result.exit_code = lab::runLab(labOptions(*args), std::cerr);
        } catch (const lab::LabBusy& e) {
            std::cerr << "lockscope: " << e.what() << std::endl;
            result.exit_code = lab::kLabBusyExitCode;
        }
    });
}

} // namespace lockscope::cli
