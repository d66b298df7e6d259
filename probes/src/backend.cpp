// SPDX-License-Identifier: GPL-2.0-or-later
#include <array>
#include <utility>

#include "lockscope/probes/probes.h"

namespace lockscope::probes {

namespace {

constexpr std::array<std::pair<Backend, const char*>, 7> kNames{{
    {Backend::Auto, "auto"},
    {Backend::Fentry, "fentry"},
    {Backend::Kprobe, "kprobe"},
    {Backend::TpBtf, "tp_btf"},
    {Backend::RawTp, "raw_tp"},
    {Backend::Tracepoint, "tracepoint"},
    {Backend::Off, "off"},
}};

} // namespace

const char* backendName(Backend b) noexcept
{
    for (const auto& [backend, name] : kNames)
        if (backend == b)
            return name;
    return "?";
}

std::optional<Backend> backendFromName(std::string_view name) noexcept
{
    for (const auto& [backend, n] : kNames)
        if (name == n)
            return backend;
    return std::nullopt;
}

std::string backendNames()
{
    std::string out;
    for (const auto& [backend, name] : kNames)
        out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

} // namespace lockscope::probes
