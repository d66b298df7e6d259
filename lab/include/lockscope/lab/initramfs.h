// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lockscope::lab {

// An initramfs assembled in memory as a list of entries and written as an
// uncompressed newc cpio archive. Uncompressed on purpose: under TCG the
// kernel's own decompressor is the slowest part of boot, and qemu loads the
// file with a plain read.
class Initramfs {
public:
    void addDirectory(const std::string& guest_path, unsigned mode = 0755);
    // Copies host_path's content (symlinks followed) to guest_path.
    void addFile(const std::string& guest_path, const std::string& host_path, unsigned mode = 0755);
    void addText(const std::string& guest_path, std::string content, unsigned mode = 0644);
    void addSymlink(const std::string& guest_path, const std::string& target);
    // An executable plus every shared library it needs and its ELF loader,
    // at the same paths as on the host (what ldd reports). A static binary
    // adds nothing more.
    void addExecutableWithLibraries(const std::string& guest_path, const std::string& host_path);

    bool contains(const std::string& guest_path) const { return entries_.count(normalize(guest_path)) != 0; }
    std::vector<std::string> paths() const;
    // Total bytes of file content, for the progress line.
    uint64_t contentBytes() const;

    // Writes the archive atomically. Throws LabError.
    void write(const std::string& path) const;

private:
    enum class Kind { Directory, File, Text, Symlink };
    struct Entry {
        Kind kind = Kind::File;
        unsigned mode = 0644;
        std::string source;  // host path (File), content (Text), target (Symlink)
    };
    static std::string normalize(const std::string& guest_path);
    void addParents(const std::string& guest_path);
    std::map<std::string, Entry> entries_;  // sorted: parents come before children
};

// Shared libraries and loader of an ELF binary as absolute host paths, from
// ldd. Empty for a static binary. Throws LabError when a library is missing.
std::vector<std::string> sharedLibraries(const std::string& binary);

} // namespace lockscope::lab
