// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/lab/lab.h"

#include <algorithm>
#include <chrono>
#include <dlfcn.h>
#include <link.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "lockscope/lab/error.h"
#include "lockscope/lab/holder_lock.h"
#include "lockscope/lab/initramfs.h"
#include "lockscope/lab/process.h"
#include "lockscope/lab/source_build.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/format.h"
#include "lockscope/reports/input.h"
#include "lockscope/reports/render.h"
#include "lockscope/util/file_text.h"
#include "lockscope/util/libbcc.h"

namespace fs = std::filesystem;

namespace lockscope::lab {

namespace {

void writeText(const fs::path& path, std::string_view text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out)
        throw LabError("cannot write '" + path.string() + "'");
}

std::string mib(uint64_t bytes) { return reports::fmt::fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 1) + " MiB"; }

std::string seconds(double s) { return reports::fmt::fixed(s, 1) + " s"; }

// The host's 1-minute load average (-1 when unreadable).
double hostLoad()
{
    double load = -1;
    std::ifstream("/proc/loadavg") >> load;
    return load;
}

std::set<std::string> busyboxApplets(const std::string& busybox)
{
    std::set<std::string> out;
    auto r = runProcess({busybox, "--list"}, 30);
    std::istringstream lines(r.output);
    std::string line;
    while (std::getline(lines, line))
        out.insert(line);
    return out;
}

// A developer build of lockscope carries ~35 MiB of DWARF the guest never
// reads; every MiB of initramfs costs boot time under emulation. The
// stripped copy keeps the symbol table. Falls back to the original when
// objcopy is missing or the file is not ELF.
std::string withoutDebugInfo(const std::string& host_path, const std::string& work_dir)
{
    std::error_code ec;
    if (fs::file_size(host_path, ec) < (4u << 20) || ec || findExecutable("objcopy").empty())
        return host_path;
    auto dir = fs::path(work_dir) / "stripped";
    fs::create_directories(dir, ec);
    auto out = dir / fs::path(host_path).filename();
    auto r = runProcess({"objcopy", "--strip-debug", host_path, out.string()}, 120);
    if (!r.ok())
        return host_path;
    fs::permissions(out, fs::status(host_path).permissions(), ec);
    return out.string();
}

// The lab's own binary, copied once at the start: every guest of a run gets
// the same lockscope, and `compare` still runs, when the build tree relinks
// it meanwhile (seen: a rebuild during a 20-boot run gave four guests a
// half-written binary).
std::string snapshotLockscope(const std::string& host_path, const std::string& out_dir)
{
    auto dir = (fs::path(out_dir) / ".lab").string();
    ensureOwnedDirectory(dir, "output dir", "-o");
    auto stripped = withoutDebugInfo(host_path, dir);
    if (stripped != host_path)
        return stripped;
    std::error_code ec;
    fs::create_directories(dir, ec);
    auto copy = fs::path(dir) / "lockscope";
    fs::copy_file(host_path, copy, fs::copy_options::overwrite_existing, ec);
    if (ec)
        throw LabError("cannot copy '" + host_path + "' to '" + copy.string() + "': " + ec.message());
    return copy.string();
}

// Where the host's dynamic loader finds a library; "" when it does not.
std::string hostLibraryPath(const char* soname)
{
    void* lib = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (!lib)
        return "";
    link_map* map = nullptr;
    std::string path;
    if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
        path = map->l_name;
    dlclose(lib);
    return path;
}

// record opens libbcc only to symbolize user stacks, so ldd does not list it
// with lockscope's libraries: the guest gets it (and LLVM) only when asked.
void addUserStackLibrary(const std::vector<std::string>& record_args, std::vector<GuestBinary>& binaries)
{
    bool wanted = std::any_of(record_args.begin(), record_args.end(),
                              [](const std::string& a) { return a.rfind("--user-", 0) == 0; });
    if (!wanted)
        return;
    auto path = hostLibraryPath(util::kLibbccSoname);
    if (path.empty())
        throw LabError(std::string("--record-args asks for user stacks, but ") + util::kLibbccSoname +
                       " is not on this host (apt-get install libbpfcc)");
    binaries.push_back({path, path});
}

} // namespace

std::string GuestRun::serialTail(unsigned lines) const { return tailLines(boot.serial, lines); }

std::string GuestRun::file(const std::string& name) const
{
    auto it = report.files.find(name);
    return it == report.files.end() ? std::string{} : it->second;
}

const std::vector<std::string>& probeSymbols()
{
    static const std::vector<std::string> symbols = {
        "_raw_spin_lock", "_raw_spin_unlock", "_raw_spin_lock_irqsave", "__lock_timer", "lock_timer",
        "do_semtimedop", "ipc_lock", "ipc_lock_object", "ipc_obtain_object_check", "sem_lock"};
    return symbols;
}

std::string findBusybox()
{
    for (const char* candidate : {"/bin/busybox", "/usr/bin/busybox"}) {
        if (::access(candidate, X_OK) == 0 && sharedLibraries(candidate).empty())
            return candidate;
    }
    throw LabError("no static busybox on this host: apt-get install busybox-static");
}

GuestRun runInGuest(const Kernel& kernel, const std::vector<GuestStep>& steps,
                    const std::vector<GuestBinary>& binaries, const BootOptions& boot_template,
                    const std::string& work_dir, const ProgressFn& progress)
{
    if (findExecutable(boot_template.qemu).empty())
        throw LabError(boot_template.qemu + " not found: apt-get install qemu-system-x86");
    std::error_code ec;
    fs::create_directories(work_dir, ec);
    if (ec)
        throw LabError("cannot create '" + work_dir + "': " + ec.message());

    Initramfs rd;
    rd.addFile("/bin/busybox", findBusybox(), 0755);
    for (const char* dir : {"/proc", "/sys", "/dev", "/tmp", "/lab/out", "/usr/bin", "/sbin", "/etc"})
        rd.addDirectory(dir);
    for (const auto& b : binaries)
        rd.addExecutableWithLibraries(b.guest_path, withoutDebugInfo(b.host_path, work_dir));
    rd.addText("/init", makeInitScript(steps), 0755);
    auto initrd = (fs::path(work_dir) / "initrd.cpio").string();
    rd.write(initrd);
    progress("initramfs " + mib(fs::file_size(initrd)) + ", " + std::to_string(rd.paths().size()) + " entries");

    BootOptions boot = boot_template;
    boot.kernel = kernel.image;
    boot.initrd = initrd;
    boot.data_path = (fs::path(work_dir) / "channel.txt").string();
    fs::remove(boot.data_path, ec);

    GuestRun run;
    run.kernel = kernel;
    run.work_dir = work_dir;
    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    progress("boot " + kernel.name + " (" + chooseAccel(boot.accel).why + ", timeout " +
             seconds(boot.timeout_s) + ")");
    run.host_load = hostLoad();
    run.boot = bootGuest(boot, [&](const std::string& stage) {
        run.host_load = std::max(run.host_load, hostLoad());
        progress("  " + seconds(elapsed()) + "  guest: " + stage);
    });
    run.host_load = std::max(run.host_load, hostLoad());
    writeText(fs::path(work_dir) / "serial.log", run.boot.serial);
    if (fs::file_size(boot.data_path, ec) > 2 * kMaxGuestFileBytes)
        run.report.problems.push_back("the result channel holds over " + mib(2 * kMaxGuestFileBytes) +
                                      ": a runaway guest");
    else
        run.report = parseGuestChannel(util::readTextFile(boot.data_path));
    for (const auto& [name, content] : run.report.files)
        writeText(fs::path(work_dir) / name, content);

    if (!run.boot.started)
        run.failure = "qemu did not start: " + tailLines(run.boot.serial, 1);
    else if (run.boot.stalled)
        run.failure = "guest stalled: " +
                      (run.boot.stall_report.empty() ? "no heartbeat for " + seconds(boot.stall_s)
                                                     : "its kernel reported a " + run.boot.stall_report) +
                      " (frozen guest)";
    else if (run.boot.timed_out)
        run.failure = "guest timed out after " + seconds(boot.timeout_s) + " (raise --timeout, or see the serial log)";
    else if (!run.report.done) {
        bool panic = run.boot.serial.find("Kernel panic") != std::string::npos;
        run.failure = std::string(panic ? "guest kernel panicked" : "guest stopped before finishing its steps") +
                      " (qemu exit " + std::to_string(run.boot.exit_code) + ")";
    } else if (!run.report.problems.empty())
        run.failure = "result transfer from the guest failed: " + run.report.problems.front();
    progress("guest finished in " + seconds(elapsed()) + ", longest heartbeat gap " +
             seconds(run.boot.max_beat_gap_s) + (run.ok() ? "" : ": " + run.failure));
    return run;
}

namespace {

struct LabKernel {
    KernelSpec spec;
    Kernel kernel;
    bool usable = false;
    std::vector<std::string> captures;  // one per successful run
};

// Where run `run` (1-based) of a kernel goes: <out>/<name>.* for a single
// run, <out>/<name>/run-K.* with --runs.
fs::path runStem(const LabOptions& o, const std::string& name, unsigned run)
{
    if (o.runs <= 1)
        return fs::path(o.out_dir) / name;
    return fs::path(o.out_dir) / name / ("run-" + std::to_string(run));
}

} // namespace

std::string compareCaptureSets(const std::vector<std::string>& base, const std::vector<std::string>& other,
                               int& exit_code)
{
    // In-process, as `lockscope compare BASE... -- OTHER...` would print it:
    // run statistics across the sets (mean ± stddev, Welch's t, range
    // separation) when each side has two or more; a failure is its one line.
    try {
        const auto [before, after] = reports::loadSets(base, other);
        exit_code = 0;
        return reports::render(reports::compareSets(before, after), reports::Format::Text);
    } catch (const std::exception& e) {
        exit_code = 1;
        return std::string("lockscope: ") + e.what() + "\n";
    }
}

ComparisonFile writeComparison(const fs::path& out_dir, const std::string& name, const std::vector<std::string>& base,
                               const std::vector<std::string>& other)
{
    ComparisonFile c;
    c.path = out_dir / ("compare-" + name + ".txt");
    c.report = compareCaptureSets(base, other, c.exit_code);
    writeText(c.path, c.report);
    return c;
}

namespace {

void say(std::ostream& log, const std::string& who, const std::string& what)
{
    log << "lab: [" << who << "] " << what << std::endl;
}

void checkLabOptions(const LabOptions& o)
{
    if (o.kernels.empty())
        throw LabError("no --kernel given: e.g. --kernel A=arch/x86/boot/bzImage --kernel B=debian:6.1");
    if (o.workload.empty())
        throw LabError("no workload: add `-- <command> [args]` to run under lockscope record in each guest");
    if (o.runs == 0)
        throw LabError("--runs must be at least 1");
    std::set<std::string> names;
    for (const auto& k : o.kernels) {
        if (!names.insert(k.name).second)
            throw LabError("--kernel name '" + k.name + "' is used twice");
    }
    if (o.lockscope.empty() || ::access(o.lockscope.c_str(), X_OK) != 0)
        throw LabError("lockscope binary '" + o.lockscope + "' is not executable");
    if (o.boot.accel == Accel::Kvm)
        if (auto why = kvmUnusableReason(); !why.empty())
            throw LabError(why);
}

// What every guest gets, each at its host path: lockscope (a snapshot taken
// now), the workload program and the --add files. workload[0] becomes the
// program's absolute path unless it is a busybox applet (sleep, sh, ...),
// which the guest has already (applets: busyboxApplets).
std::vector<GuestBinary> guestBinaries(const LabOptions& o, const std::string& lockscope,
                                       const std::set<std::string>& applets, std::vector<std::string>& workload)
{
    std::error_code ec;
    std::vector<GuestBinary> binaries = {{"/usr/bin/lockscope", lockscope}};
    addUserStackLibrary(o.record_args, binaries);
    if (workload[0].find('/') != std::string::npos || !applets.count(workload[0])) {
        auto host = findExecutable(workload[0]);
        if (host.empty())
            throw LabError("workload '" + workload[0] + "' not found on this host (give its path)");
        host = fs::absolute(host).lexically_normal().string();
        binaries.push_back({host, host});
        workload[0] = host;
    }
    for (const auto& extra : o.extra_files) {
        auto abs = fs::absolute(extra).lexically_normal().string();
        if (!fs::is_regular_file(abs, ec))
            throw LabError("--add '" + extra + "': not a file");
        binaries.push_back({abs, abs});
    }
    return binaries;
}

} // namespace

// Fetches or builds one kernel and checks its config; throws if unusable.
Kernel resolveLabKernel(const KernelSpec& spec, const std::string& cache, std::ostream& log)
{
    auto progress = [&](const std::string& what) { say(log, spec.name, what); };
    say(log, spec.name, "fetch " + spec.spec);
    Kernel kernel = resolveKernel(spec, cache, progress);
    say(log, spec.name, "kernel " + kernel.image + (kernel.version.empty() ? "" : " (" + kernel.version + ")"));
    if (kernel.config.empty())
        return kernel;
    if (kernelConfigValue(kernel.config, "DEBUG_INFO_BTF") != "y")
        throw LabError("kernel has no BTF (CONFIG_DEBUG_INFO_BTF is not set in " + kernel.config +
                       "): lockscope's probes need /sys/kernel/btf/vmlinux");
    for (const char* opt : {"KPROBES", "SERIAL_8250_CONSOLE", "BLK_DEV_INITRD"}) {
        auto v = kernelConfigValue(kernel.config, opt);
        if (v != "y")
            say(log, spec.name, std::string("warning: CONFIG_") + opt + "=" + v + " in " + kernel.config);
    }
    return kernel;
}

namespace {

// The record command each guest runs. Hold times, syscall and lookup-function
// latencies are part of what a kernel comparison judges: asked for unless
// --record-args says --no-X.
std::vector<std::string> guestRecordCommand(const LabOptions& o, const std::string& label,
                                            const std::vector<std::string>& workload)
{
    std::vector<std::string> record = {"/usr/bin/lockscope", "record", "-o", "/lab/out/capture.lockscope.json",
                                       "--label", label};
    for (const OptInProbe& p : kOptInProbes)
        if (std::find(o.record_args.begin(), o.record_args.end(), "--no-" + std::string(p.flag)) ==
            o.record_args.end())
            record.push_back("--" + std::string(p.flag));
    record.insert(record.end(), o.record_args.begin(), o.record_args.end());
    record.push_back("--");
    record.insert(record.end(), workload.begin(), workload.end());
    return record;
}

// Boots the guest, again after it froze (a panic or a failed record is the
// kernel under test, not retried); its serial log is copied beside stem either way.
GuestRun bootWithRetries(const LabOptions& o, const Kernel& kernel, const std::vector<GuestStep>& steps,
                         const std::vector<GuestBinary>& binaries, const fs::path& stem, const std::string& who,
                         std::ostream& log)
{
    std::error_code ec;
    auto progress = [&](const std::string& what) { say(log, who, what); };
    auto work = stem.string() + ".guest";
    for (unsigned attempt = 0;; ++attempt) {
        GuestRun guest = runInGuest(kernel, steps, binaries, o.boot, work, progress);
        fs::copy_file(fs::path(work) / "serial.log", stem.string() + ".serial.log",
                      fs::copy_options::overwrite_existing, ec);
        if (guest.ok() || !guest.boot.frozen() || attempt >= o.boot_retries)
            return guest;
        say(log, who, "guest " + std::string(guest.boot.stalled ? "stalled" : "timed out") +
                          ": booting it again (retry " + std::to_string(attempt + 1) + " of " +
                          std::to_string(o.boot_retries) + ")");
    }
}

// What only the host knows of a guest's recording: how it was run (the
// guest cannot tell TCG's threading, nor see a hidden hypervisor bit), its
// vCPUs against the host's cores, and the host's load meanwhile. The vendor
// is the one the guest saw.
Virtualization labVirtualization(const Virtualization& guest_saw, const GuestRun& guest, unsigned vcpus)
{
    Virtualization v;
    v.kind = guest.boot.accel.empty() ? guest_saw.kind : guest.boot.accel;
    v.hypervisor = guest_saw.hypervisor;
    v.detected_by = "lab";
    v.vcpus = vcpus;
    const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
    v.host_cores = cores > 0 ? static_cast<uint32_t>(cores) : 0;
    if (guest.host_load >= 0)
        v.host_load = guest.host_load;
    return v;
}

// One run of one kernel: the capture's path, or "" once it has said why
// there is none (a kernel without BTF is then no longer usable).
std::string recordRun(const LabOptions& o, LabKernel& k, unsigned run, const GuestPayload& payload, std::ostream& log)
{
    const auto& name = k.spec.name;
    const auto who = o.runs > 1 ? name + " run " + std::to_string(run) : name;
    const RecordOutcome r = recordOnce(o, k.kernel, name, runStem(o, name, run), who, payload, log);
    if (r.no_btf)
        k.usable = false;
    return r.capture;
}

// Every kernel against the first (the baseline); returns the failures.
int compareWithBaseline(const LabOptions& o, const std::vector<LabKernel>& kernels, std::ostream& log)
{
    int failures = 0;
    const auto& base = kernels.front();
    for (size_t i = 1; i < kernels.size(); ++i) {
        const auto& other = kernels[i];
        if (base.captures.empty() || other.captures.empty()) {
            say(log, "compare", "skipped " + base.spec.name + " vs " + other.spec.name + ": a side has no capture");
            continue;
        }
        say(log, "compare", base.spec.name + " vs " + other.spec.name);
        const ComparisonFile c = writeComparison(o.out_dir, other.spec.name, base.captures, other.captures);
        log << c.report;
        if (c.exit_code != 0) {
            say(log, "compare", "FAILED: lockscope compare exited " + std::to_string(c.exit_code));
            ++failures;
        } else {
            say(log, "compare", "report written to " + c.path.string());
        }
    }
    return failures;
}

} // namespace

RecordOutcome recordOnce(const LabOptions& o, const Kernel& kernel, const std::string& label,
                         const std::filesystem::path& stem, const std::string& who, const GuestPayload& payload,
                         std::ostream& log)
{
    RecordOutcome out;
    fs::create_directories(stem.parent_path());
    const std::vector<GuestStep> steps = {
        factsStep(probeSymbols()),
        {"record", guestRecordCommand(o, label, payload.workload), {"/lab/out/capture.lockscope.json"}}};
    const GuestRun guest = bootWithRetries(o, kernel, steps, payload.binaries, stem, who, log);
    if (!guest.ok()) {
        say(log, who, "FAILED: " + guest.failure + "; serial log " + stem.string() + ".serial.log, last lines:");
        log << guest.serialTail(30) << std::endl;
        out.failure = guest.failure;
        return out;
    }
    auto facts = parseKeyValues(guest.file("facts.log"));
    say(log, who, "guest kernel " + facts["release"] + ", BTF " + facts["btf"] + ", kprobes " + facts["kprobes"]);
    if (facts["btf"] != "yes") {
        out.failure = "the guest kernel has no /sys/kernel/btf/vmlinux: build it with CONFIG_DEBUG_INFO_BTF=y";
        say(log, who, "FAILED: " + out.failure);
        out.no_btf = true;
        return out;
    }
    const int rc = guest.report.step_exit.count("record") ? guest.report.step_exit.at("record") : -1;
    const auto text = guest.file("capture.lockscope.json");
    if (text.empty()) {
        out.failure = "lockscope record in the guest exited " + std::to_string(rc) + " without a capture";
        say(log, who, "FAILED: " + out.failure + "; its output:");
        log << tailLines(guest.file("record.log"), 20) << std::endl;
        return out;
    }
    auto capture = parseCapture(text);
    capture.meta.label = label;
    capture.meta.virtualization = labVirtualization(capture.meta.virtualization, guest, o.boot.cpus);
    auto path = stem.string() + ".lockscope.json";
    writeCapture(capture, path, WriteOptions { .layout = CaptureLayout::Compact }); // as record wrote it
    say(log, who, "record: exit " + std::to_string(rc) + ", " + std::to_string(capture.locks.size()) + " locks, " +
                      std::to_string(capture.stats.events) + " events -> " + path);
    out.capture = path;
    return out;
}

GuestPayload prepareGuestPayload(const LabOptions& o)
{
    GuestPayload p;
    const auto applets = busyboxApplets(findBusybox());
    const auto lockscope = snapshotLockscope(o.lockscope, o.out_dir);
    p.workload = o.workload;
    p.binaries = guestBinaries(o, lockscope, applets, p.workload);
    return p;
}

int runLab(const LabOptions& o, std::ostream& log)
{
    checkLabOptions(o);
    const std::string cache = o.cache_dir.empty() ? defaultCacheDir() : o.cache_dir;
    ensureOwnedDirectory(o.out_dir, "output dir", "-o");
    // Two labs writing one output directory corrupt each other's captures
    // and the lockscope snapshot every guest gets: one at a time.
    const auto lab_dir = (fs::path(o.out_dir) / ".lab").string();
    ensureOwnedDirectory(lab_dir, "output dir", "-o");
    const HolderLock out_lock((fs::path(lab_dir) / "lock").string(), "output dir '" + o.out_dir + "'",
                              o.wait_for_busy ? HolderLock::Mode::Wait : HolderLock::Mode::Refuse,
                              [&](const std::string& what) { say(log, "lab", what); },
                              "choose another with -o, or leave out --no-wait to wait for it");
    const GuestPayload payload = prepareGuestPayload(o);

    int failures = 0;
    std::vector<LabKernel> kernels;
    for (const auto& spec : o.kernels) {
        LabKernel k{spec, {}, false, {}};
        try {
            k.kernel = resolveLabKernel(spec, cache, log);
            k.usable = true;
        } catch (const std::exception& e) {
            say(log, spec.name, std::string("FAILED: ") + e.what());
            ++failures;
        }
        kernels.push_back(std::move(k));
    }
    // Runs alternate between kernels (A B A B ...) so that drift on the
    // host (other load, thermal state) does not favour one side.
    for (unsigned run = 1; run <= o.runs; ++run) {
        for (auto& k : kernels) {
            if (!k.usable)
                continue;
            try {
                auto path = recordRun(o, k, run, payload, log);
                if (path.empty())
                    ++failures;
                else
                    k.captures.push_back(path);
            } catch (const std::exception& e) {
                say(log, o.runs > 1 ? k.spec.name + " run " + std::to_string(run) : k.spec.name,
                    std::string("FAILED: ") + e.what());
                ++failures;
            }
        }
    }
    if (o.compare && kernels.size() >= 2)
        failures += compareWithBaseline(o, kernels, log);
    return failures == 0 ? 0 : 1;
}

} // namespace lockscope::lab
