// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/lab/kernel.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "lockscope/lab/error.h"
#include "lockscope/lab/process.h"
#include "lockscope/lab/source_build.h"

namespace fs = std::filesystem;

namespace lockscope::lab {

namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string firstFile(const fs::path& dir, std::string_view prefix)
{
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        auto name = e.path().filename().string();
        if (startsWith(name, prefix))
            return e.path().string();
    }
    return {};
}

// Unpacks only ./boot of a kernel .deb: the modules are not needed (the
// guest uses built-in drivers only) and are ten times larger.
Kernel unpackDeb(const std::string& deb, const fs::path& dest, const std::string& name,
                 const std::string& description, const ProgressFn& progress)
{
    std::error_code ec;
    auto marker = dest / ".complete";
    if (!fs::exists(marker, ec)) {
        progress("unpacking " + deb);
        auto tmp = fs::path(dest.string() + ".tmp." + std::to_string(::getpid()));
        fs::remove_all(tmp, ec);
        fs::create_directories(tmp, ec);
        if (ec)
            throw LabError("cannot create '" + tmp.string() + "': " + ec.message());
        auto r = runProcess({"sh", "-c",
                             "dpkg-deb --fsys-tarfile " + shellQuote(deb) + " | tar -x -C " +
                                 shellQuote(tmp.string()) + " --wildcards './boot/*'"},
                            300);
        if (!r.ok()) {
            fs::remove_all(tmp, ec);
            throw LabError("unpacking '" + deb + "' failed: " + tailLines(r.output, 2) +
                           " (is dpkg-deb installed and the file a kernel package?)");
        }
        std::ofstream(tmp / ".complete") << description << "\n";
        fs::remove_all(dest, ec);
        fs::rename(tmp, dest, ec);
        if (ec && !fs::exists(marker)) // another run may have won the race; theirs is as good
            throw LabError("cannot move '" + tmp.string() + "' to '" + dest.string() + "': " + ec.message());
        fs::remove_all(tmp, ec);
    }
    Kernel k;
    k.name = name;
    k.image = firstFile(dest / "boot", "vmlinuz-");
    if (k.image.empty())
        throw LabError("'" + deb + "' has no boot/vmlinuz-*: not a kernel image package");
    k.config = firstFile(dest / "boot", "config-");
    k.description = description;
    k.version = bzImageVersion(k.image);
    return k;
}

std::string resolveMetapackage(const std::string& package)
{
    if (findExecutable("apt-cache").empty())
        throw LabError("debian kernels need apt-get and apt-cache (a Debian or Ubuntu host); "
                       "pass the path of a bzImage or .deb instead");
    auto r = runProcess({"apt-cache", "depends", "--important", package}, 60);
    if (!r.ok() || r.output.find("Depends:") == std::string::npos) {
        // Not a metapackage: the name itself must exist.
        auto show = runProcess({"apt-cache", "show", "--no-all-versions", package}, 60);
        if (!show.ok())
            throw LabError("no Debian package '" + package + "' (run apt-get update, or check the name with "
                           "apt-cache search linux-image)");
        return package;
    }
    std::istringstream lines(r.output);
    std::string line;
    while (std::getline(lines, line)) {
        auto pos = line.find("Depends: linux-image-");
        if (pos != std::string::npos)
            return line.substr(pos + 9);
    }
    return package;
}

} // namespace

KernelSpec parseKernelArg(const std::string& arg)
{
    auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
        throw LabError("--kernel '" + arg + "': expected NAME=SPEC, e.g. A=arch/x86/boot/bzImage or B=debian:6.1");
    KernelSpec spec{arg.substr(0, eq), arg.substr(eq + 1)};
    if (spec.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
        std::string::npos)
        throw LabError("--kernel '" + arg + "': NAME may only hold letters, digits, '_', '.', '-'");
    return spec;
}

std::string debianPackageFor(const std::string& spec)
{
    std::string which = spec == "debian" ? "" : spec.substr(std::string("debian:").size());
    if (which.empty() || which == "6.1" || which == "generic" || which == "amd64")
        return "linux-image-amd64";
    if (which == "cloud" || which == "6.1-cloud" || which == "cloud-amd64")
        return "linux-image-cloud-amd64";
    if (startsWith(which, "linux-image-"))
        return which;
    if (!which.empty() && std::isdigit(static_cast<unsigned char>(which[0])) &&
        which.find('-') != std::string::npos)
        return "linux-image-" + which;
    throw LabError("kernel spec '" + spec + "': use debian, debian:6.1, debian:cloud, debian:<release> "
                   "(6.1.0-57-cloud-amd64) or debian:linux-image-<...>");
}

std::string bzImageVersion(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw LabError("kernel image '" + path + "': cannot read it");
    std::string head(0x10000, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    if (head.size() < 0x210 || head.compare(0x202, 4, "HdrS") != 0) {
        if (head.size() >= 4 && head.compare(0, 4, "\x7f" "ELF") == 0)
            throw LabError("kernel image '" + path + "' is an ELF vmlinux; pass arch/x86/boot/bzImage instead");
        throw LabError("kernel image '" + path + "' is not an x86 bzImage (no HdrS setup header)");
    }
    // Setup header field kernel_version (0x20e): offset of the string minus 0x200.
    auto lo = static_cast<unsigned char>(head[0x20e]);
    auto hi = static_cast<unsigned char>(head[0x20f]);
    size_t off = static_cast<size_t>(lo | (hi << 8)) + 0x200;
    if (off == 0x200 || off >= head.size())
        return {};
    auto end = head.find('\0', off);
    return head.substr(off, end == std::string::npos ? std::string::npos : end - off);
}

std::string defaultCacheDir()
{
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::string(xdg) + "/lockscope/lab";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.cache/lockscope/lab";
    // Per user: a shared /tmp cache would let another user plant a kernel or a marker.
    return "/tmp/lockscope-lab-cache-" + std::to_string(::geteuid());
}

std::string kernelConfigValue(const std::string& config_path, const std::string& name)
{
    std::ifstream in(config_path);
    std::string line;
    std::string key = "CONFIG_" + name + "=";
    while (std::getline(in, line)) {
        if (startsWith(line, key))
            return line.substr(key.size());
    }
    return "n";
}

Kernel resolveKernel(const KernelSpec& spec, const std::string& cache_dir, const ProgressFn& progress)
{
    const std::string& s = spec.spec;
    if (isSourceSpec(s))
        return buildKernelFromSource(spec, cache_dir, progress);
    if (s == "debian" || startsWith(s, "debian:")) {
        auto meta = debianPackageFor(s);
        ensureOwnedDirectory(cache_dir, "cache dir");
        auto package = resolveMetapackage(meta);
        if (package != meta)
            progress(meta + " -> " + package);
        fs::path dir = fs::path(cache_dir) / package;
        std::error_code ec;
        if (fs::exists(dir / ".complete", ec)) {
            progress("cached in " + dir.string());
            std::ifstream in(dir / ".complete");
            std::string description;
            std::getline(in, description);
            return unpackDeb("", dir, spec.name, description, progress);
        }
        fs::path dl = fs::path(cache_dir) / ("download." + std::to_string(::getpid()));
        fs::create_directories(dl, ec);
        if (ec)
            throw LabError("cannot create cache dir '" + dl.string() + "': " + ec.message() +
                           " (choose another with --cache)");
        progress("apt-get download " + package);
        auto r = runProcess({"sh", "-c", "cd " + shellQuote(dl.string()) + " && apt-get download " +
                                             shellQuote(package)},
                            600);
        auto deb = firstFile(dl, package + "_");
        if (!r.ok() || deb.empty()) {
            fs::remove_all(dl, ec);
            throw LabError("apt-get download " + package + " failed: " + tailLines(r.output, 1) +
                           " (network? run apt-get update?)");
        }
        auto debname = fs::path(deb).filename().string();  // pkg_version_arch.deb
        auto v1 = debname.find('_');
        auto v2 = debname.find('_', v1 + 1);
        std::string description = package + " " + debname.substr(v1 + 1, v2 - v1 - 1);
        auto kernel = unpackDeb(deb, dir, spec.name, description, progress);
        fs::remove_all(dl, ec);
        return kernel;
    }
    std::error_code ec;
    if (!fs::is_regular_file(s, ec))
        throw LabError("kernel '" + spec.name + "': '" + s + "' is not a file (expected a bzImage, a .deb, "
                       "or debian:6.1 / debian:cloud)");
    if (endsWith(s, ".deb")) {
        ensureOwnedDirectory(cache_dir, "cache dir");
        auto abs = fs::absolute(s).string();
        auto key = fs::path(s).stem().string();
        return unpackDeb(abs, fs::path(cache_dir) / ("deb-" + key), spec.name, fs::path(s).filename().string(),
                         progress);
    }
    Kernel k;
    k.name = spec.name;
    k.image = fs::absolute(s).string();
    k.version = bzImageVersion(k.image);
    k.description = k.image;
    // A kernel tree keeps .config two levels above arch/x86/boot/bzImage.
    auto tree_config = fs::path(k.image).parent_path() / "../../../.config";
    if (fs::is_regular_file(tree_config, ec))
        k.config = fs::canonical(tree_config).string();
    return k;
}

} // namespace lockscope::lab
