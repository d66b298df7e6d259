// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "lockscope/lab/guest.h"
#include "lockscope/lab/kernel.h"
#include "lockscope/lab/qemu.h"

namespace lockscope::lab {

// One boot of one kernel running a list of steps.
struct GuestRun {
    Kernel kernel;
    BootResult boot;
    GuestReport report;
    std::string work_dir;     // initramfs, serial log, received files
    std::string failure;      // "" when the guest ran every step and sent everything back
    double host_load = -1;    // the host's highest 1-minute load average seen during the boot (-1: unknown)
    bool ok() const noexcept { return failure.empty(); }
    // The serial console tail, for failure messages.
    std::string serialTail(unsigned lines = 40) const;
    // Content of a file the guest sent back ("" when absent).
    std::string file(const std::string& name) const;
};

// A host executable to put into the guest, at guest_path, with its libraries.
struct GuestBinary {
    std::string guest_path;
    std::string host_path;
};

// Builds the initramfs (busybox-static, the binaries, /init running the
// steps), boots it under qemu with the options' timeout, and collects what
// the guest sent back. Never throws for guest trouble: failure says what
// went wrong (boot timeout, panic, missing results) — callers print it with
// serialTail(). Throws LabError for host-side problems (no qemu, no busybox).
GuestRun runInGuest(const Kernel& kernel, const std::vector<GuestStep>& steps,
                    const std::vector<GuestBinary>& binaries, const BootOptions& boot,
                    const std::string& work_dir, const ProgressFn& progress);

// The probe targets the facts step looks for in the guest's kallsyms.
const std::vector<std::string>& probeSymbols();

// The host's busybox (static) for the guest; throws LabError with the apt
// package to install.
std::string findBusybox();

struct LabOptions {
    std::vector<KernelSpec> kernels;
    std::vector<std::string> workload;      // argv run under `lockscope record` in each guest
    std::vector<std::string> record_args;   // extra `lockscope record` options
    std::vector<std::string> extra_files;   // more host files/executables for the guest (same path)
    std::string lockscope;                  // host lockscope binary copied into the guest
    std::string out_dir = "lockscope-lab";
    std::string cache_dir;                  // "" = defaultCacheDir()
    BootOptions boot;                       // kernel/initrd/data_path are filled per kernel
    bool compare = true;
    unsigned runs = 1;                      // captures per kernel, boots alternating between kernels
    unsigned boot_retries = 2;              // more boots after a stalled or timed-out one
    bool wait_for_busy = true;              // another lab holds out_dir: wait (else refuse: LabBusy)
};

// The `lockscope lab` command: fetch or build every kernel, then for each
// run boot each kernel in turn (A B A B ...), record, bring the capture back
// labelled with the kernel's name as <out>/<name>.lockscope.json (one run)
// or <out>/<name>/run-K.lockscope.json (--runs); then compare every kernel
// with the first into <out>/compare-<name>.txt. Progress and errors go to
// log. Returns the process exit code.
int runLab(const LabOptions& options, std::ostream& log);

// What every guest of one lab run carries, prepared once: a snapshot of
// lockscope (in <out>/.lab), the workload program with its libraries, the
// --add files. workload is the argv the guest runs.
struct GuestPayload {
    std::vector<GuestBinary> binaries;
    std::vector<std::string> workload;
};
GuestPayload prepareGuestPayload(const LabOptions& options);

// Fetches or builds one kernel and checks its config; throws LabError.
Kernel resolveLabKernel(const KernelSpec& spec, const std::string& cache, std::ostream& log);

// One boot recording the workload: the capture, labelled `label`, at
// <stem>.lockscope.json (the serial log beside it), or failure in one line
// after the log has shown the console's tail.
struct RecordOutcome {
    std::string capture;  // "" on failure
    std::string failure;
    bool no_btf = false;  // the kernel can never be recorded
};
RecordOutcome recordOnce(const LabOptions& options, const Kernel& kernel, const std::string& label,
                         const std::filesystem::path& stem, const std::string& who, const GuestPayload& payload,
                         std::ostream& log);

// The text report comparing one kernel's captures with the baseline's (each
// list non-empty), computed in-process; exit_code is what `lockscope compare`
// would have exited with (0, or 1 with the error line as the report).
std::string compareCaptureSets(const std::vector<std::string>& base, const std::vector<std::string>& other,
                               int& exit_code);

// What compareWithBaseline leaves for one kernel: <out_dir>/compare-<name>.txt
// holding compareCaptureSets' report (the error line when it failed).
struct ComparisonFile {
    std::filesystem::path path;
    std::string report;
    int exit_code = 0;
};
ComparisonFile writeComparison(const std::filesystem::path& out_dir, const std::string& name,
                               const std::vector<std::string>& base, const std::vector<std::string>& other);

} // namespace lockscope::lab
