// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Shared plumbing of the sample workloads: strict flag parsing (bad input is
// one line and exit 2), a stop signal that also catches SIGINT/SIGTERM so that
// IPC objects are always removed, and the result output (a human table plus one
// `{"lockscope_result": {...}}` JSON line that `lockscope record` parses).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockscope::workload {

inline constexpr int kExitUsage = 2;
inline constexpr int kExitFailure = 1;

// Declarative flag set. Every flag takes a value except switches.
class Flags {
public:
    Flags(std::string program, std::string summary);

    void addInt(const std::string& name, int64_t* target, int64_t min, int64_t max, std::string help);
    void addDouble(const std::string& name, double* target, double min, double max, std::string help);
    void addSwitch(const std::string& name, bool* target, std::string help);
    void addString(const std::string& name, std::string* target, std::string help);
    // Comma-separated positive integers, e.g. "1,10,32".
    void addIntList(const std::string& name, std::vector<int64_t>* target, int64_t min, int64_t max,
                    std::string help);

    // Parses argv; on --help prints usage and exits 0, on a bad flag prints one
    // line to stderr and exits 2.
    void parse(int argc, char** argv);

    [[noreturn]] void usageError(const std::string& message) const;
    const std::string& program() const { return program_; }

private:
    struct Spec {
        std::string name;
        std::string help;
        std::string defaultText;
        bool isSwitch = false;
        std::function<bool(const std::string&, std::string&)> set;  // value -> error text
    };
    std::string program_;
    std::string summary_;
    std::vector<Spec> specs_;
    void printHelp() const;
};

// Blocks SIGINT/SIGTERM/SIGHUP in the calling thread (call before starting
// workers so that they inherit the mask); waitForStop() then returns after the
// duration or at the first such signal, whichever comes first.
class StopControl {
public:
    StopControl();
    // Returns true when a signal cut the run short.
    bool waitForStop(double seconds);
    // Non-blocking check for a pending stop signal, for single-threaded loops.
    bool pollSignal();
    void requestStop() { stop_.store(true, std::memory_order_relaxed); }
    bool stopping() const { return stop_.load(std::memory_order_relaxed); }
    int signal() const { return signal_; }

private:
    std::atomic<bool> stop_{false};
    int signal_ = 0;
};

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start);
uint64_t nowNs();

// Prints a table of rows (first row = header) with aligned columns.
void printTable(const std::vector<std::vector<std::string>>& rows);

// Prints the machine-readable result line and flushes stdout.
void printResult(const nlohmann::json& result);

// One line on stderr "<program>: <what>: <strerror(errno)>".
[[noreturn]] void die(const std::string& program, const std::string& what);

std::string formatNumber(double value, int decimals = 0);

} // namespace lockscope::workload
