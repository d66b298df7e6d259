// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lockscope::lab {

// What the guest does after boot: each step runs one command and sends back
// its output log and the files it names. Results travel on the second serial
// port (ttyS1), which carries nothing but this protocol — the kernel console
// stays on ttyS0 and cannot interleave with it:
//   LSLAB-FILE <name> <bytes>      then the file, gzip + base64, then
//   LSLAB-EOF <name>
//   LSLAB-MISSING <name>           the step did not produce that file
//   LSLAB-STEP <name> <exit code>
//   LSLAB-DONE                     the guest finished every step
// Progress goes to the console as "LSLAB-STAGE <what>" so that the host can
// show it live.
struct GuestStep {
    std::string name;                  // [A-Za-z0-9_.-]+, unique
    std::vector<std::string> argv;     // run without a shell
    std::vector<std::string> outputs;  // guest paths to send back after the step
};

// The guest's facts step: kernel release, BTF, and which probe targets exist
// in its kallsyms. Output is "key=value" lines.
GuestStep factsStep(const std::vector<std::string>& symbols);

// The /init script for busybox ash.
std::string makeInitScript(const std::vector<GuestStep>& steps);

struct GuestReport {
    std::map<std::string, std::string> files;  // name -> content (already decompressed)
    std::map<std::string, int> step_exit;      // step name -> exit code
    std::vector<std::string> missing;          // files the guest did not have
    std::vector<std::string> problems;         // corrupt or truncated transfers
    bool done = false;                         // LSLAB-DONE seen
};

// Parses the ttyS1 stream. Never throws on garbage: it lands in problems.
GuestReport parseGuestChannel(std::string_view text);

// "key=value" lines -> map (the facts step's format).
std::map<std::string, std::string> parseKeyValues(std::string_view text);

// A guest sends captures of tens of MiB; more than this is a runaway guest or
// a gzip bomb, refused rather than allowed to exhaust the host's memory.
constexpr size_t kMaxGuestFileBytes = 512u << 20;

// gzip -> bytes; throws LabError with the reason (bad CRC, truncated, over
// max_bytes once decompressed).
std::string gunzip(std::string_view data, size_t max_bytes = kMaxGuestFileBytes);
std::string base64Decode(std::string_view text);

} // namespace lockscope::lab
