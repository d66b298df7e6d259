// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/system_info.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <sys/utsname.h>
#include <unistd.h>

namespace lockscope::record {
namespace {

std::string readFile(const char* path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

uint32_t readU32(std::string_view s, size_t at)
{
    uint32_t v;
    std::memcpy(&v, s.data() + at, sizeof v);
    return v;  // notes are in the kernel's (native) byte order
}

size_t align4(size_t n)
{
    return (n + 3) & ~size_t(3);
}

} // namespace

std::string parseBuildIdNote(std::string_view notes)
{
    constexpr uint32_t kNtGnuBuildId = 3;
    size_t pos = 0;
    while (notes.size() - pos >= 12) {
        uint32_t namesz = readU32(notes, pos), descsz = readU32(notes, pos + 4),
                 type = readU32(notes, pos + 8);
        pos += 12;
        size_t nameEnd = pos + align4(namesz);
        if (namesz > notes.size() || nameEnd > notes.size())
            return {};
        std::string_view name = notes.substr(pos, namesz);
        size_t descEnd = nameEnd + align4(descsz);
        if (descsz > notes.size() || descEnd > notes.size())
            return {};
        if (type == kNtGnuBuildId && name == std::string_view("GNU\0", 4) && descsz > 0) {
            std::string hex;
            char buf[3];
            for (size_t i = 0; i < descsz; ++i) {
                std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(notes[nameEnd + i]));
                hex += buf;
            }
            return hex;
        }
        pos = descEnd;
    }
    return {};
}

std::string parseCpuModel(std::string_view cpuinfo)
{
    for (std::string_view key : {"model name", "Processor", "cpu model", "cpu"}) {
        size_t pos = 0;
        while (pos < cpuinfo.size()) {
            size_t nl = cpuinfo.find('\n', pos);
            std::string_view line =
                cpuinfo.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
            pos = nl == std::string_view::npos ? cpuinfo.size() : nl + 1;
            if (line.substr(0, key.size()) != key)
                continue;
            size_t colon = line.find(':');
            if (colon == std::string_view::npos)
                continue;
            std::string_view field = line.substr(key.size(), colon - key.size());
            if (field.find_first_not_of(" \t") != std::string_view::npos)
                continue;  // "model name" must not match "model"
            std::string_view v = line.substr(colon + 1);
            size_t b = v.find_first_not_of(" \t");
            if (b == std::string_view::npos)
                continue;
            v = v.substr(b);
            while (!v.empty() && (v.back() == ' ' || v.back() == '\r'))
                v.remove_suffix(1);
            return std::string(v);
        }
    }
    return {};
}

std::string rfc3339(std::chrono::system_clock::time_point t)
{
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms % 1000));
    return buf;
}

void fillSystemMeta(Meta& meta)
{
    meta.tool_version = LOCKSCOPE_VERSION;
    utsname u{};
    if (uname(&u) == 0) {
        meta.kernel_release = u.release;
        meta.kernel_version = u.version;
        meta.hostname = u.nodename;
    }
    meta.kernel_build_id = parseBuildIdNote(readFile("/sys/kernel/notes"));
    meta.cpu_model = parseCpuModel(readFile("/proc/cpuinfo"));
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    meta.cpu_count = n > 0 ? static_cast<uint32_t>(n) : 0;
}

} // namespace lockscope::record
