// SPDX-License-Identifier: GPL-2.0-or-later
#include "import_common.h"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "lockscope/capture/io.h"
#include "lockscope/reports/exchange.h"

namespace lockscope::reports::detail {

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return "";
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

uint64_t parseCount(const std::string& s, int base)
{
    uint64_t v = 0;
    const char* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, v, base);
    if (s.empty() || ec == std::errc::result_out_of_range || ec != std::errc() || ptr != end)
        throw std::invalid_argument((ec == std::errc::result_out_of_range ? "out of range: '" : "not a count: '") +
                                    s.substr(0, 40) + "'");
    return v;
}

double parseNonNegative(const std::string& s)
{
    double v = 0;
    const char* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, v);
    if (s.empty() || ec != std::errc() || ptr != end)
        throw std::invalid_argument("not a number: '" + s.substr(0, 40) + "'");
    if (!std::isfinite(v) || v < 0)
        throw std::invalid_argument("NaN, infinite or negative value '" + s.substr(0, 40) + "'");
    return v;
}

Capture validated(const Capture& capture, const std::string& source)
{
    try {
        // Through the text: a name that is not UTF-8 fails in dump(), as the writer would.
        return parseCapture(toJson(capture).dump());
    } catch (const std::exception& e) {
        throw ImportError(source + ": the imported figures do not make a valid capture: " + e.what());
    }
}

uint32_t CaptureBuilder::stackId(const std::vector<Frame>& frames)
{
    std::vector<std::tuple<std::string, uint64_t, std::string>> key;
    key.reserve(frames.size());
    for (const auto& f : frames)
        key.emplace_back(f.function, f.address.value_or(f.offset), f.module);
    auto [it, inserted] = stackIds_.try_emplace(std::move(key), uint32_t(stacks_.size() + 1));
    if (inserted)
        stacks_.push_back(Stack{it->second, StackKind::Kernel, frames});
    return it->second;
}

Lock& CaptureBuilder::lock(const std::string& key, const std::string& type)
{
    auto [it, inserted] = locks_.try_emplace(key);
    if (inserted) {
        it->second.key = key;
        it->second.type = type;
    }
    return it->second;
}

LockSite& CaptureBuilder::site(Lock& l, uint32_t stack)
{
    for (auto& s : l.sites)
        if (s.stack_id == stack)
            return s;
    l.sites.emplace_back();
    l.sites.back().stack_id = stack;
    return l.sites.back();
}

void CaptureBuilder::addWait(const std::string& key, const std::string& type, uint64_t addr, uint32_t stack,
                             uint64_t wait_ns, bool aborted)
{
    Lock& l = lock(key, type);
    if (aborted) {
        ++l.aborted;
        return;
    }
    l.wait.add(wait_ns);
    site(l, stack).wait.add(wait_ns);
    addresses_[key].insert(addr);
}

void CaptureBuilder::finish(Capture& c)
{
    c.stacks = std::move(stacks_);
    for (auto& [key, l] : locks_) {
        const auto& addrs = addresses_[key];
        l.instances = uint32_t(std::max<size_t>(1, addrs.size()));
        if (addrs.size() == 1)
            l.address = *addrs.begin();
        c.locks.push_back(std::move(l));
    }
}

} // namespace lockscope::reports::detail
