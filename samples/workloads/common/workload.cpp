// SPDX-License-Identifier: GPL-2.0-or-later
#include "workload.h"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <sstream>

#include <pthread.h>

namespace lockscope::workload {

namespace {

bool parseInt(const std::string& text, int64_t& out)
{
    if (text.empty())
        return false;
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0')
        return false;
    out = v;
    return true;
}

bool parseDouble(const std::string& text, double& out)
{
    if (text.empty())
        return false;
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(v))
        return false;
    out = v;
    return true;
}

sigset_t stopSignals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    return set;
}

} // namespace

Flags::Flags(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary))
{
}

void Flags::addInt(const std::string& name, int64_t* target, int64_t min, int64_t max, std::string help)
{
    specs_.push_back({name, std::move(help), std::to_string(*target), false,
                      [=](const std::string& value, std::string& error) {
                          int64_t v = 0;
                          if (!parseInt(value, v) || v < min || v > max) {
                              error = "expected an integer in " + std::to_string(min) + ".." +
                                      std::to_string(max) + ", got '" + value + "'";
                              return false;
                          }
                          *target = v;
                          return true;
                      }});
}

void Flags::addDouble(const std::string& name, double* target, double min, double max, std::string help)
{
    specs_.push_back({name, std::move(help), formatNumber(*target, 2), false,
                      [=](const std::string& value, std::string& error) {
                          double v = 0;
                          if (!parseDouble(value, v) || v < min || v > max) {
                              error = "expected a number in " + formatNumber(min, 2) + ".." +
                                      formatNumber(max, 2) + ", got '" + value + "'";
                              return false;
                          }
                          *target = v;
                          return true;
                      }});
}

void Flags::addSwitch(const std::string& name, bool* target, std::string help)
{
    specs_.push_back({name, std::move(help), "", true, [=](const std::string&, std::string&) {
                          *target = true;
                          return true;
                      }});
}

void Flags::addString(const std::string& name, std::string* target, std::string help)
{
    specs_.push_back({name, std::move(help), *target, false, [=](const std::string& value, std::string& error) {
                          if (value.empty()) {
                              error = "expected a non-empty value";
                              return false;
                          }
                          *target = value;
                          return true;
                      }});
}

void Flags::addIntList(const std::string& name, std::vector<int64_t>* target, int64_t min, int64_t max,
                       std::string help)
{
    std::string def;
    for (auto v : *target)
        def += (def.empty() ? "" : ",") + std::to_string(v);
    specs_.push_back({name, std::move(help), def, false,
                      [=](const std::string& value, std::string& error) {
                          std::vector<int64_t> out;
                          std::stringstream in(value);
                          std::string item;
                          while (std::getline(in, item, ',')) {
                              int64_t v = 0;
                              if (!parseInt(item, v) || v < min || v > max) {
                                  error = "expected comma-separated integers in " + std::to_string(min) +
                                          ".." + std::to_string(max) + ", got '" + value + "'";
                                  return false;
                              }
                              out.push_back(v);
                          }
                          if (out.empty()) {
                              error = "expected at least one integer, got '" + value + "'";
                              return false;
                          }
                          *target = std::move(out);
                          return true;
                      }});
}

void Flags::usageError(const std::string& message) const
{
    std::fprintf(stderr, "%s: %s (see %s --help)\n", program_.c_str(), message.c_str(), program_.c_str());
    std::exit(kExitUsage);
}

void Flags::printHelp() const
{
    std::printf("usage: %s [options]\n%s\n\noptions:\n", program_.c_str(), summary_.c_str());
    for (const auto& s : specs_) {
        std::string left = "  --" + s.name + (s.isSwitch ? "" : " VALUE");
        std::printf("%-24s %s%s\n", left.c_str(), s.help.c_str(),
                    s.defaultText.empty() ? "" : (" (default " + s.defaultText + ")").c_str());
    }
    std::printf("  %-22s %s\n", "--help", "show this help");
}

void Flags::parse(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            printHelp();
            std::exit(0);
        }
        if (arg.rfind("--", 0) != 0)
            usageError("unexpected argument '" + arg + "'");
        std::string name = arg.substr(2);
        std::string value;
        bool hasValue = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name.resize(eq);
            hasValue = true;
        }
        const Spec* spec = nullptr;
        for (const auto& s : specs_)
            if (s.name == name)
                spec = &s;
        if (!spec)
            usageError("unknown option '--" + name + "'");
        if (spec->isSwitch) {
            if (hasValue)
                usageError("--" + name + " takes no value");
        } else if (!hasValue) {
            if (i + 1 >= argc)
                usageError("--" + name + " needs a value");
            value = argv[++i];
        }
        std::string error;
        if (!spec->set(value, error))
            usageError("--" + name + ": " + error);
    }
}

StopControl::StopControl()
{
    sigset_t set = stopSignals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool StopControl::waitForStop(double seconds)
{
    sigset_t set = stopSignals();
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(seconds));
    while (!stopping()) {
        auto left = deadline - Clock::now();
        if (left <= Clock::duration::zero())
            break;
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
        int sig = sigtimedwait(&set, nullptr, &ts);
        if (sig > 0) {
            signal_ = sig;
            break;
        }
    }
    requestStop();
    return signal_ != 0;
}

bool StopControl::pollSignal()
{
    sigset_t set = stopSignals();
    timespec zero{0, 0};
    int sig = sigtimedwait(&set, nullptr, &zero);
    if (sig > 0) {
        signal_ = sig;
        requestStop();
    }
    return stopping();
}

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

uint64_t nowNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void printTable(const std::vector<std::vector<std::string>>& rows)
{
    std::vector<size_t> width;
    for (const auto& row : rows)
        for (size_t c = 0; c < row.size(); ++c) {
            if (width.size() <= c)
                width.push_back(0);
            width[c] = std::max(width[c], row[c].size());
        }
    for (const auto& row : rows) {
        std::string line;
        for (size_t c = 0; c < row.size(); ++c) {
            // First column left-aligned (labels), numbers right-aligned.
            std::string pad(width[c] - row[c].size(), ' ');
            line += c == 0 ? row[c] + pad : pad + row[c];
            if (c + 1 < row.size())
                line += "  ";
        }
        std::printf("%s\n", line.c_str());
    }
}

void printResult(const nlohmann::json& result)
{
    nlohmann::json line = {{"lockscope_result", result}};
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
}

void die(const std::string& program, const std::string& what)
{
    std::fprintf(stderr, "%s: %s: %s\n", program.c_str(), what.c_str(), std::strerror(errno));
    std::exit(kExitFailure);
}

std::string formatNumber(double value, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

} // namespace lockscope::workload
