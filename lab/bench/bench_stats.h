// SPDX-License-Identifier: GPL-2.0-or-later
// What the lab's guest benchmarks share: their "--flag value" parsing, the
// median of a set of runs and the workload's one-line result out of a step's log.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockscope/lab/error.h"

namespace lockscope::lab::bench {

inline double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// A flag's count ("--rounds 5"); throws LabError naming the flag otherwise.
inline unsigned parseCount(const std::string& flag, const std::string& v)
{
    size_t used = 0;
    unsigned long n = 0;
    try {
        n = std::stoul(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty() || n > 1000000000UL)
        throw LabError(flag + ": expected a count, got '" + v + "'");
    return static_cast<unsigned>(n);
}

// Each setter takes its flag's value; the text to set a string is the value.
using FlagSetters = std::map<std::string, std::function<void(const std::string& value)>>;

inline std::function<void(const std::string&)> into(std::string& s)
{
    return [&s](const std::string& v) { s = v; };
}
inline std::function<void(const std::string&)> countInto(const std::string& flag, unsigned& n)
{
    return [flag, &n](const std::string& v) { n = parseCount(flag, v); };
}

// "--flag value" pairs into their setters. Returns the first flag it does not
// know, "" when it knew them all; a bad value throws (LabError).
inline std::string parseFlags(int argc, char** argv, const FlagSetters& set)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        auto it = set.find(argv[i]);
        if (it == set.end())
            return argv[i];
        it->second(argv[i + 1]);
    }
    return "";
}

// The {"lockscope_result": {...}} line a sample workload prints last.
inline nlohmann::json workloadResult(const std::string& step, const std::string& log)
{
    auto at = log.rfind("{\"lockscope_result\"");
    if (at == std::string::npos)
        throw LabError(step + ": the workload printed no result:\n" + log);
    return nlohmann::json::parse(log.substr(at, log.find('\n', at) - at)).at("lockscope_result");
}

} // namespace lockscope::lab::bench
