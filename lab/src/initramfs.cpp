// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/lab/initramfs.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "lockscope/lab/error.h"
#include "lockscope/lab/process.h"

namespace fs = std::filesystem;

namespace lockscope::lab {

std::string Initramfs::normalize(const std::string& guest_path)
{
    std::string p = guest_path;
    while (!p.empty() && p.front() == '/')
        p.erase(p.begin());
    while (!p.empty() && p.back() == '/')
        p.pop_back();
    if (p.empty() || p.find("..") != std::string::npos)
        throw LabError("initramfs: bad guest path '" + guest_path + "'");
    return p;
}

void Initramfs::addParents(const std::string& p)
{
    for (size_t slash = p.find('/'); slash != std::string::npos; slash = p.find('/', slash + 1)) {
        std::string dir = p.substr(0, slash);
        if (!entries_.count(dir))
            entries_[dir] = Entry{Kind::Directory, 0755, {}};
    }
}

void Initramfs::addDirectory(const std::string& guest_path, unsigned mode)
{
    auto p = normalize(guest_path);
    addParents(p);
    entries_[p] = Entry{Kind::Directory, mode, {}};
}

void Initramfs::addFile(const std::string& guest_path, const std::string& host_path, unsigned mode)
{
    std::error_code ec;
    if (!fs::is_regular_file(host_path, ec))
        throw LabError("initramfs: '" + host_path + "' is not a readable file");
    auto p = normalize(guest_path);
    addParents(p);
    entries_[p] = Entry{Kind::File, mode, fs::canonical(host_path).string()};
}

void Initramfs::addText(const std::string& guest_path, std::string content, unsigned mode)
{
    auto p = normalize(guest_path);
    addParents(p);
    entries_[p] = Entry{Kind::Text, mode, std::move(content)};
}

void Initramfs::addSymlink(const std::string& guest_path, const std::string& target)
{
    auto p = normalize(guest_path);
    addParents(p);
    entries_[p] = Entry{Kind::Symlink, 0777, target};
}

void Initramfs::addExecutableWithLibraries(const std::string& guest_path, const std::string& host_path)
{
    addFile(guest_path, host_path, 0755);
    for (const auto& lib : sharedLibraries(host_path)) {
        if (!contains(lib))
            addFile(lib, lib, 0755);
    }
}

std::vector<std::string> Initramfs::paths() const
{
    std::vector<std::string> out;
    for (const auto& [p, e] : entries_)
        out.push_back("/" + p);
    return out;
}

uint64_t Initramfs::contentBytes() const
{
    uint64_t total = 0;
    for (const auto& [p, e] : entries_) {
        if (e.kind == Kind::File) {
            std::error_code ec;
            auto size = fs::file_size(e.source, ec);
            total += ec ? 0 : size;
        } else if (e.kind == Kind::Text) {
            total += e.source.size();
        }
    }
    return total;
}

namespace {

// newc: "070701" and 13 eight-digit hex fields, then the NUL-terminated
// name; name and data are each padded to a multiple of 4 bytes.
void writeHeader(std::ostream& out, uint32_t ino, uint32_t mode, uint64_t size, const std::string& name)
{
    if (size > 0xffffffffull)
        throw LabError("initramfs: '" + name + "' is larger than 4 GiB");
    char header[111];
    std::snprintf(header, sizeof header, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", ino,
                  mode, 0u, 0u, 1u, 0u, static_cast<uint32_t>(size), 0u, 0u, 0u, 0u,
                  static_cast<uint32_t>(name.size() + 1), 0u);
    out.write(header, 110);
    out.write(name.c_str(), static_cast<std::streamsize>(name.size() + 1));
    size_t used = 110 + name.size() + 1;
    static const char zeros[4] = {0, 0, 0, 0};
    out.write(zeros, static_cast<std::streamsize>((4 - used % 4) % 4));
}

void pad(std::ostream& out, uint64_t size)
{
    static const char zeros[4] = {0, 0, 0, 0};
    out.write(zeros, static_cast<std::streamsize>((4 - size % 4) % 4));
}

} // namespace

void Initramfs::write(const std::string& path) const
{
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            throw LabError("initramfs: cannot write '" + tmp + "'");
        uint32_t ino = 1;
        std::vector<char> buf(1 << 20);
        for (const auto& [name, e] : entries_) {
            switch (e.kind) {
            case Kind::Directory:
                writeHeader(out, ino++, S_IFDIR | e.mode, 0, name);
                break;
            case Kind::Symlink:
                writeHeader(out, ino++, S_IFLNK | e.mode, e.source.size(), name);
                out.write(e.source.data(), static_cast<std::streamsize>(e.source.size()));
                pad(out, e.source.size());
                break;
            case Kind::Text:
                writeHeader(out, ino++, S_IFREG | e.mode, e.source.size(), name);
                out.write(e.source.data(), static_cast<std::streamsize>(e.source.size()));
                pad(out, e.source.size());
                break;
            case Kind::File: {
                std::ifstream in(e.source, std::ios::binary);
                std::error_code ec;
                auto size = fs::file_size(e.source, ec);
                if (!in || ec)
                    throw LabError("initramfs: cannot read '" + e.source + "'");
                writeHeader(out, ino++, S_IFREG | e.mode, size, name);
                uint64_t copied = 0;
                while (in) {
                    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
                    auto got = in.gcount();
                    out.write(buf.data(), got);
                    copied += static_cast<uint64_t>(got);
                }
                if (copied != size)
                    throw LabError("initramfs: '" + e.source + "' changed while being copied");
                pad(out, size);
                break;
            }
            }
        }
        writeHeader(out, 0, 0, 0, "TRAILER!!!");
        out.flush();
        if (!out)
            throw LabError("initramfs: write to '" + tmp + "' failed (disk full?)");
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw LabError("initramfs: cannot rename to '" + path + "'");
    }
}

std::vector<std::string> sharedLibraries(const std::string& binary)
{
    auto ldd = findExecutable("ldd");
    if (ldd.empty())
        throw LabError("ldd not found: install libc-bin to copy '" + binary + "' into the guest");
    auto r = runProcess({ldd, binary}, 60);
    std::vector<std::string> libs;
    if (r.output.find("not a dynamic executable") != std::string::npos ||
        r.output.find("statically linked") != std::string::npos)
        return libs;
    if (!r.ok())
        throw LabError("ldd '" + binary + "' failed: " + tailLines(r.output, 1));
    std::istringstream lines(r.output);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.find("not found") != std::string::npos)
            throw LabError("'" + binary + "' needs a library that is not installed:" + line);
        // "\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)" or "\t/lib64/ld-linux-x86-64.so.2 (0x...)"
        auto arrow = line.find("=> ");
        size_t start = arrow != std::string::npos ? arrow + 3 : line.find_first_not_of(" \t");
        if (start == std::string::npos || start >= line.size() || line[start] != '/')
            continue;  // linux-vdso.so.1 has no file
        auto end = line.find(" (", start);
        libs.push_back(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    }
    return libs;
}

} // namespace lockscope::lab
