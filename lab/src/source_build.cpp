// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/lab/source_build.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "lockscope/lab/error.h"
#include "lockscope/lab/holder_lock.h"
#include "lockscope/lab/process.h"
#include "lockscope/util/file_text.h"

namespace fs = std::filesystem;

namespace lockscope::lab {

namespace {

constexpr double kBuildTimeoutS = 4 * 3600;
constexpr double kGitTimeoutS = 1800;

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string expandHome(const std::string& path)
{
    if (startsWith(path, "~/")) {
        if (const char* home = std::getenv("HOME"); home && *home)
            return std::string(home) + path.substr(1);
    }
    return path;
}

void writeFile(const fs::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
        throw LabError("cannot write '" + path.string() + "'");
}

std::string firstLine(std::string_view text)
{
    auto nl = text.find('\n');
    return std::string(text.substr(0, nl));
}

// git in the lab's own trees; `what` names the step for the error line.
std::string git(const fs::path& dir, std::vector<std::string> args, const std::string& what)
{
    std::vector<std::string> argv = {"git", "-C", dir.string(), "--no-optional-locks"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = runProcess(argv, kGitTimeoutS);
    if (!r.ok())
        throw LabError(what + " failed: " + firstLine(tailLines(r.output, 3)));
    return r.output;
}

std::string trimmed(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
        s.pop_back();
    return s;
}

// Where a source lives in the cache and what state of it a build wants.
struct PreparedSource {
    fs::path tree;           // the lab's build tree (a git work tree)
    std::string base;        // commit to reset the tree to
    std::string source_id;   // for the key
    std::string tree_diff;   // uncommitted changes of a src:PATH tree, applied first
    std::string label;       // "debian-src:6.1", "src:/home/me/linux@1a2b3c4d"
    std::string origin;      // the tarball, or the developer's tree (toplevel) the lab clones
};

std::string tarballFor(const std::string& version)
{
    for (const char* ext : {".tar.xz", ".tar.bz2", ".tar.gz"}) {
        auto path = "/usr/src/linux-source-" + version + ext;
        if (fs::is_regular_file(path))
            return path;
    }
    throw LabError("debian-src:" + version + ": no /usr/src/linux-source-" + version +
                   ".tar.xz (apt-get install linux-source-" + version + ")");
}

// Which tarball and which build tree: reads the cache, writes nothing.
PreparedSource identifyDebianSource(const SourceSpec& s, const fs::path& trees)
{
    auto tarball = s.path.empty() ? tarballFor(s.version) : s.path;
    struct stat st {};
    if (::stat(tarball.c_str(), &st) != 0)
        throw LabError("debian-src: cannot read '" + tarball + "'");
    PreparedSource p;
    p.label = "debian-src:" + s.version;
    p.source_id = "debian-src " + tarball + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtime);
    p.tree = trees / ("debian-src-" + s.version);
    p.origin = tarball;
    return p;
}

// Unpacks Debian's tarball once into a git work tree, so that later builds
// can reset it to the pristine state touching only the files a patch changed.
// Sets p.base. Called with the tree's lock held.
void unpackDebianSource(const SourceSpec& s, PreparedSource& p, const ProgressFn& progress)
{
    const std::string& tarball = p.origin;
    auto marker = fs::path(p.tree.string() + ".source");
    auto recorded = util::readTextFile(marker);
    auto nl = recorded.find('\n');
    if (nl != std::string::npos && recorded.substr(0, nl) == p.source_id && fs::exists(p.tree / ".git")) {
        p.base = trimmed(recorded.substr(nl + 1));
        return;
    }
    std::error_code ec;
    fs::remove(marker, ec);
    fs::remove_all(p.tree, ec);
    auto tmp = fs::path(p.tree.string() + ".tmp." + std::to_string(::getpid()));
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec)
        throw LabError("cannot create '" + tmp.string() + "': " + ec.message());
    progress("unpacking " + tarball + " (once)");
    auto r = runProcess({"tar", "-xf", tarball, "--strip-components=1", "-C", tmp.string()}, kGitTimeoutS);
    if (!r.ok()) {
        fs::remove_all(tmp, ec);
        throw LabError("unpacking '" + tarball + "' failed: " + firstLine(tailLines(r.output, 2)));
    }
    progress("recording the pristine tree in git (once)");
    try {
        git(tmp, {"init", "-q"}, "git init");
        git(tmp, {"config", "gc.auto", "0"}, "git config");
        // -f: Debian's top-level .gitignore ignores everything but debian/.
        git(tmp, {"add", "-A", "-f", "."}, "git add");
        git(tmp, {"-c", "user.name=lockscope lab", "-c", "user.email=lab@lockscope.invalid", "commit", "-q",
                  "--no-verify", "-m", "linux-source-" + s.version + " as packaged"},
            "git commit");
        p.base = trimmed(git(tmp, {"rev-parse", "HEAD"}, "git rev-parse"));
    } catch (const LabError&) {
        fs::remove_all(tmp, ec);
        throw;
    }
    fs::rename(tmp, p.tree, ec);
    if (ec)
        throw LabError("cannot move '" + tmp.string() + "' to '" + p.tree.string() + "': " + ec.message());
    writeFile(marker, p.source_id + "\n" + p.base + "\n");
}

// A src: tree is never written to: the lab clones it (sharing its objects)
// into the cache and builds there. This reads the developer's tree (commit,
// uncommitted diff); cloneGitTree writes the cache.
PreparedSource identifyGitTree(const SourceSpec& s, const fs::path& trees, const ProgressFn& progress)
{
    std::error_code ec;
    auto path = expandHome(s.path);
    if (!fs::is_directory(path, ec))
        throw LabError("src:" + s.path + ": no such directory");
    if (!fs::is_regular_file(fs::path(path) / "Makefile", ec) || !fs::is_directory(fs::path(path) / "arch/x86", ec))
        throw LabError("src:" + s.path + ": not a kernel tree (no Makefile and arch/x86)");
    auto top = runProcess({"git", "-C", path, "rev-parse", "--show-toplevel"}, 60);
    if (!top.ok())
        throw LabError("src:" + s.path + ": not a git tree (the lab builds commits; `git init && git add -A && "
                       "git commit` makes one)");
    auto toplevel = trimmed(top.output);
    auto rev = s.commit.empty() ? std::string("HEAD") : s.commit;
    auto sha = runProcess({"git", "-C", toplevel, "rev-parse", "--verify", "-q", rev + "^{commit}"}, 60);
    if (!sha.ok())
        throw LabError("src:" + s.path + "@" + rev + ": no such commit in " + toplevel);
    PreparedSource p;
    p.base = trimmed(sha.output);
    p.source_id = "git " + p.base;
    p.label = "src:" + s.path + "@" + p.base.substr(0, 12);
    p.tree = trees / ("git-" + fnv1aHex(fs::canonical(toplevel).string()));
    if (s.commit.empty()) {
        // HEAD plus what the developer has not committed yet (tracked files).
        p.tree_diff = git(toplevel, {"diff", "--binary", "HEAD"}, "git diff in " + toplevel);
        if (!p.tree_diff.empty())
            p.label += "+uncommitted";
        auto status = git(toplevel, {"status", "--porcelain", "--untracked-files=normal"}, "git status");
        size_t untracked = 0;
        for (size_t at = status.find("?? "); at != std::string::npos; at = status.find("\n?? ", at + 1))
            ++untracked;
        if (untracked)
            progress("note: " + std::to_string(untracked) + " untracked file(s) in " + toplevel +
                     " are not built (git add them)");
    }
    p.origin = toplevel;
    return p;
}

// Called with the tree's lock held.
void cloneGitTree(const PreparedSource& p, const ProgressFn& progress)
{
    std::error_code ec;
    const std::string& toplevel = p.origin;
    if (!fs::exists(p.tree / ".git", ec)) {
        progress("cloning " + toplevel + " into the build cache (objects shared, once)");
        auto tmp = fs::path(p.tree.string() + ".tmp." + std::to_string(::getpid()));
        fs::remove_all(tmp, ec);
        auto r = runProcess({"git", "clone", "-q", "--shared", "--no-checkout", toplevel, tmp.string()}, kGitTimeoutS);
        if (!r.ok()) {
            fs::remove_all(tmp, ec);
            throw LabError("git clone of " + toplevel + " failed: " + firstLine(tailLines(r.output, 2)));
        }
        git(tmp, {"config", "gc.auto", "0"}, "git config");
        fs::rename(tmp, p.tree, ec);
        if (ec)
            throw LabError("cannot move '" + tmp.string() + "' to '" + p.tree.string() + "': " + ec.message());
    }
}

// Turns make's quiet lines ("  CC      kernel/fork.o") into a progress line
// every 10 s, so a 5-minute cold build never looks hung.
class BuildProgress {
public:
    explicit BuildProgress(const ProgressFn& progress) : progress_(progress) {}

    void feed(std::string_view chunk)
    {
        pending_.append(chunk);
        size_t nl;
        while ((nl = pending_.find('\n')) != std::string::npos) {
            std::string line = pending_.substr(0, nl);
            pending_.erase(0, nl + 1);
            if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ') {
                ++steps_;
                last_ = trimmed(line.substr(2));
            }
        }
    }

    // Called twice a second whether make prints or not: linking vmlinux and
    // generating BTF print nothing for a minute.
    void tick()
    {
        auto now = std::chrono::steady_clock::now();
        if (now - last_report_ >= std::chrono::seconds(10)) {
            last_report_ = now;
            auto s = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
            progress_("  build " + std::to_string(s) + " s: " + std::to_string(steps_) + " steps, now " + squeeze(last_));
        }
    }
    long seconds() const
    {
        return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_).count();
    }
    unsigned steps() const { return steps_; }

private:
    static std::string squeeze(const std::string& s)
    {
        std::string out;
        for (char c : s)
            if (c != ' ' || out.empty() || out.back() != ' ')
                out += c;
        return out;
    }
    const ProgressFn& progress_;
    std::string pending_;
    std::string last_ = "starting";
    unsigned steps_ = 0;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_report_ = start_;
};

// The compiler's complaint, not make's summary: the last lines that mention
// an error, with what follows them, else the plain tail.
std::string buildFailureTail(const std::string& output)
{
    auto at = output.rfind("error:");
    if (at == std::string::npos)
        at = output.rfind("Error ");
    if (at == std::string::npos)
        return tailLines(output, 20);
    auto start = output.rfind('\n', at);
    std::string from = output.substr(start == std::string::npos ? 0 : start + 1);
    std::string head = tailLines(output.substr(0, start == std::string::npos ? 0 : start), 8);
    auto tail = head + "\n" + from;
    return tailLines(tail, 25);
}

std::string jobsArg()
{
    unsigned n = std::thread::hardware_concurrency();
    return "-j" + std::to_string(n == 0 ? 2 : n);
}

void configureTree(const fs::path& tree, const ProgressFn& progress)
{
    auto key = fnv1aHex(labConfigFragment());
    if (fs::exists(tree / ".config") && trimmed(util::readTextFile(tree / ".lockscope-config")) == key)
        return;
    progress("configuring: make tinyconfig + lab/config/lab-kernel.config");
    auto r = runProcess({"make", "-C", tree.string(), "-s", "tinyconfig"}, 600);
    if (!r.ok())
        throw LabError("make tinyconfig failed: " + firstLine(tailLines(r.output, 2)));
    {
        std::ofstream out(tree / ".config", std::ios::app);
        out << "\n" << labConfigFragment();
    }
    r = runProcess({"make", "-C", tree.string(), "-s", "olddefconfig"}, 600);
    if (!r.ok())
        throw LabError("make olddefconfig failed: " + firstLine(tailLines(r.output, 2)));
    std::vector<std::string> lost;
    std::istringstream lines(labConfigFragment());
    for (std::string line; std::getline(lines, line);) {
        if (!startsWith(line, "CONFIG_") || line.find("=y") == std::string::npos)
            continue;
        auto name = line.substr(7, line.find('=') - 7);
        if (kernelConfigValue((tree / ".config").string(), name) != "y")
            lost.push_back(name);
    }
    for (const auto& name : lost) {
        if (name == "DEBUG_INFO_BTF")
            throw LabError("CONFIG_DEBUG_INFO_BTF did not stay set after olddefconfig: the kernel would have no "
                           "BTF (is pahole from dwarves installed?)");
    }
    if (!lost.empty()) {
        std::string list;
        for (const auto& n : lost)
            list += " " + n;
        progress("warning: not available in this tree:" + list);
    }
    writeFile(tree / ".lockscope-config", key + "\n");
}

} // namespace

namespace {

std::vector<std::string> splitOnPlus(const std::string& rest)
{
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
        auto plus = rest.find('+', start);
        parts.push_back(rest.substr(start, plus == std::string::npos ? std::string::npos : plus - start));
        if (plus == std::string::npos)
            return parts;
        start = plus + 1;
    }
}

/*
 * '+' separates the source from its patches, but may also be part of a path
 * (a+b.patch, ~/linux+mine). Runs of pieces are joined back wherever the
 * joined path exists (the longest such run): a patch file, or for src: the
 * tree (before any @COMMIT). Pieces that exist by neither reading stay
 * apart, and their "no such file" names them.
 */
std::vector<std::string> joinExistingPaths(const std::vector<std::string>& pieces, bool tree_first)
{
    auto exists = [](const std::string& path, bool dir) {
        std::error_code ec;
        const fs::path p = expandHome(path);
        return dir ? fs::is_directory(p, ec) : fs::is_regular_file(p, ec);
    };
    std::vector<std::string> out;
    for (size_t i = 0; i < pieces.size();) {
        const bool first = i == 0;
        size_t end = i + 1;
        std::string joined = pieces[i], best = pieces[i];
        for (size_t j = i + 1; j < pieces.size(); ++j) {
            joined += "+" + pieces[j];
            // A tree's @COMMIT ends it: it must be in the last piece of the run.
            const size_t at = first ? joined.rfind('@') : std::string::npos;
            if (at != std::string::npos && at < joined.rfind('+'))
                break;
            if ((!first || tree_first) && exists(joined.substr(0, at), first)) {
                best = joined;
                end = j + 1;
            }
        }
        out.push_back(best);
        i = end;
    }
    return out;
}

} // namespace

bool isSourceSpec(const std::string& spec) { return startsWith(spec, "src:") || startsWith(spec, "debian-src:"); }

SourceSpec parseSourceSpec(const std::string& spec)
{
    SourceSpec s;
    std::string rest;
    if (startsWith(spec, "src:")) {
        s.kind = SourceSpec::Kind::GitTree;
        rest = spec.substr(4);
    } else if (startsWith(spec, "debian-src:")) {
        s.kind = SourceSpec::Kind::DebianSource;
        rest = spec.substr(11);
    } else {
        throw LabError("'" + spec + "' is not a source spec (src:PATH[@COMMIT][+x.patch] or debian-src:6.1[+x.patch])");
    }
    std::vector<std::string> parts = joinExistingPaths(splitOnPlus(rest), s.kind == SourceSpec::Kind::GitTree);
    for (size_t i = 1; i < parts.size(); ++i) {
        if (parts[i].empty())
            throw LabError("'" + spec + "': empty patch name after '+'");
        s.patches.push_back(expandHome(parts[i]));
    }
    const std::string& source = parts[0];
    if (s.kind == SourceSpec::Kind::DebianSource) {
        if (source.empty() || source.find_first_not_of("0123456789.") != std::string::npos)
            throw LabError("'" + spec + "': expected debian-src:VERSION like debian-src:6.1");
        s.version = source;
        return s;
    }
    auto at = source.rfind('@');
    s.path = expandHome(source.substr(0, at));
    if (at != std::string::npos) {
        s.commit = source.substr(at + 1);
        if (s.commit.empty())
            throw LabError("'" + spec + "': empty commit after '@'");
    }
    if (s.path.empty())
        throw LabError("'" + spec + "': expected src:PATH, a kernel tree");
    return s;
}

std::string fnv1aHex(std::string_view data)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (char c : data) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    char buf[17];
    (void)std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::string buildKey(const BuildInputs& in)
{
    // Length-prefixed so that moving bytes between fields changes the key.
    std::string all = "lockscope-lab-build-v1\n";
    auto add = [&](std::string_view field) { all += std::to_string(field.size()) + ":" + std::string(field) + "\n"; };
    add(in.source_id);
    for (const auto& p : in.patch_texts)
        add(p);
    add(in.config);
    return fnv1aHex(all);
}

namespace {

std::string octalMode(mode_t m)
{
    char buf[8];
    (void)std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
    return buf;
}

// Another user who can write a directory on the way to dir (without the
// sticky bit that protects /tmp's entries) could rename dir away and put
// their own in its place.
void checkAncestors(const fs::path& dir, const std::string& what, const std::string& option)
{
    std::error_code ec;
    const uid_t me = ::geteuid();
    for (fs::path p = fs::canonical(dir, ec).parent_path(); !ec && !p.empty(); p = p.parent_path()) {
        struct stat st {};
        if (::stat(p.c_str(), &st) != 0)
            break;
        const bool othersWrite = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0;
        if ((st.st_uid != me && st.st_uid != 0) || othersWrite)
            throw LabError(what + " '" + dir.string() + "': '" + p.string() + "' (uid " +
                           std::to_string(st.st_uid) + ", mode " + octalMode(st.st_mode) +
                           ") lets another user replace it: choose another with " + option);
        if (p == p.root_path())
            break;
    }
}

} // namespace

void ensureOwnedDirectory(const std::string& dir, const std::string& what, const std::string& option)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    const uid_t me = ::geteuid();
    struct stat link {};
    if (::lstat(dir.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && link.st_uid != me && link.st_uid != 0)
        throw LabError(what + " '" + dir + "' is a symbolic link of uid " + std::to_string(link.st_uid) +
                       ", not yours: choose another with " + option);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0)
        throw LabError(what + " '" + dir + "': cannot create it" + (ec ? ": " + ec.message() : std::string{}));
    if (!S_ISDIR(st.st_mode))
        throw LabError(what + " '" + dir + "' is not a directory");
    if (st.st_uid != me)
        throw LabError(what + " '" + dir + "' belongs to uid " + std::to_string(st.st_uid) +
                       ", not to you: choose another with " + option);
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        throw LabError(what + " '" + dir + "' is writable by other users (mode " + octalMode(st.st_mode) +
                       "): chmod go-w it or choose another with " + option);
    checkAncestors(dir, what, option);
}

namespace {

// The spec's patches as absolute paths; each must exist.
std::vector<std::string> patchPaths(const SourceSpec& s)
{
    std::vector<std::string> paths;
    for (const auto& patch : s.patches) {
        std::error_code ec;
        if (!fs::is_regular_file(patch, ec))
            throw LabError("patch '" + patch + "': no such file ('+' separates patches; a path with '+' in it is "
                           "read whole only where that file exists)");
        paths.push_back(fs::absolute(patch).string());
    }
    return paths;
}

// Resets the tree to its base and applies the build's patches in order (the
// uncommitted changes of a src: tree first); a patch that fails leaves the
// tree at its base.
void applyPatches(const PreparedSource& source, const BuildInputs& inputs, const std::vector<std::string>& patch_paths)
{
    // reset --hard rewrites only the files that differ from the wanted state
    // (and drops files an earlier patch added), so make rebuilds just those.
    git(source.tree, {"reset", "-q", "--hard", source.base}, "resetting the build tree to " + source.label);
    auto tmp_patch = fs::path(source.tree.string() + ".patch");
    for (size_t i = 0; i < inputs.patch_texts.size(); ++i) {
        writeFile(tmp_patch, inputs.patch_texts[i]);
        bool is_tree_diff = !source.tree_diff.empty() && i == 0;
        std::string name = is_tree_diff ? "the uncommitted changes" : patch_paths[i - (source.tree_diff.empty() ? 0 : 1)];
        auto r = runProcess({"git", "-C", source.tree.string(), "apply", "--index", "--whitespace=nowarn",
                             tmp_patch.string()},
                            600);
        if (!r.ok()) {
            git(source.tree, {"reset", "-q", "--hard", source.base}, "resetting the build tree");
            throw LabError("patch '" + name + "' does not apply to " + source.label + ": " +
                           firstLine(tailLines(r.output, 3)));
        }
    }
    std::error_code ec;
    fs::remove(tmp_patch, ec);
}

// make bzImage in the configured tree, through ccache where there is one.
void makeBzImage(const PreparedSource& source, const std::string& description, const ProgressFn& progress)
{
    const bool ccache = !findExecutable("ccache").empty();
    std::vector<std::string> make = {"env", "CCACHE_BASEDIR=" + source.tree.string(), "CCACHE_NOHASHDIR=1",
                                     "KBUILD_BUILD_USER=lockscope", "KBUILD_BUILD_HOST=lab",
                                     "make", "-C", source.tree.string(), jobsArg()};
    if (ccache)
        make.push_back("CC=ccache gcc");
    make.push_back("bzImage");
    progress("building " + description + " in " + source.tree.string() + " (make " + jobsArg() +
             (ccache ? ", ccache)" : ", no ccache)"));
    BuildProgress meter(progress);
    auto r = runProcess(make, kBuildTimeoutS, [&](std::string_view chunk) { meter.feed(chunk); },
                        [&] {
                            meter.tick();
                            return false;
                        });
    if (!r.ok()) {
        writeFile(fs::path(source.tree.string() + ".failed.log"), r.output);
        throw LabError("building " + description + " failed (make exit " + std::to_string(r.exit_code) +
                       "; full log " + source.tree.string() + ".failed.log); last lines:\n" +
                       buildFailureTail(r.output));
    }
    if (kernelConfigValue((source.tree / ".config").string(), "DEBUG_INFO_BTF") != "y")
        throw LabError("the kernel built from " + description + " has no BTF (CONFIG_DEBUG_INFO_BTF is not set)");
    progress("built in " + std::to_string(meter.seconds()) + " s (" + std::to_string(meter.steps()) + " steps)");
}

// Copies the image and config into out, whole or not at all (.complete last,
// then one rename), so a lab killed mid-copy never finds a half build.
void storeBuild(const PreparedSource& source, const fs::path& out, const std::string& description)
{
    std::error_code ec;
    auto tmp = fs::path(out.string() + ".tmp." + std::to_string(::getpid()));
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp);
    fs::copy_file(source.tree / "arch/x86/boot/bzImage", tmp / "bzImage");
    fs::copy_file(source.tree / ".config", tmp / "config");
    writeFile(tmp / ".complete", description + "\n");
    fs::remove_all(out, ec);
    fs::rename(tmp, out, ec);
    if (ec)
        throw LabError("cannot move '" + tmp.string() + "' to '" + out.string() + "': " + ec.message());
}

} // namespace

Kernel buildKernelFromSource(const KernelSpec& spec, const std::string& cache_dir, const ProgressFn& progress)
{
    auto s = parseSourceSpec(spec.spec);
    BuildInputs inputs;
    inputs.config = labConfigFragment();
    const std::vector<std::string> patch_paths = patchPaths(s);
    ensureOwnedDirectory(cache_dir, "cache dir");
    auto trees = fs::path(cache_dir) / "trees";
    auto kernels = fs::path(cache_dir) / "kernels";
    fs::create_directories(trees);
    fs::create_directories(kernels);

    auto source = s.kind == SourceSpec::Kind::DebianSource ? identifyDebianSource(s, trees)
                                                          : identifyGitTree(s, trees, progress);
    inputs.source_id = source.source_id;
    if (!source.tree_diff.empty())
        inputs.patch_texts.push_back(source.tree_diff);
    for (const auto& p : patch_paths)
        inputs.patch_texts.push_back(util::readTextFile(p));
    std::string description = source.label;
    for (const auto& p : s.patches)
        description += " +" + fs::path(p).filename().string();

    auto key = buildKey(inputs);
    auto out = kernels / key;
    auto finish = [&] {
        Kernel k;
        k.name = spec.name;
        k.image = (out / "bzImage").string();
        k.config = (out / "config").string();
        k.description = description + " (build " + key + ")";
        k.version = bzImageVersion(k.image);
        return k;
    };
    if (fs::exists(out / ".complete")) {
        progress("built before: " + out.string());
        return finish();
    }
    // Two labs unpacking, resetting or building one tree at once corrupt it:
    // the second waits, naming the first.
    const HolderLock lock(source.tree.string() + ".lock", "build tree '" + source.tree.string() + "'",
                          HolderLock::Mode::Wait, progress);
    if (fs::exists(out / ".complete")) // another lab built it while we waited
        return finish();
    if (s.kind == SourceSpec::Kind::DebianSource)
        unpackDebianSource(s, source, progress);
    else
        cloneGitTree(source, progress);
    applyPatches(source, inputs, patch_paths);
    configureTree(source.tree, progress);
    makeBzImage(source, description, progress);
    storeBuild(source, out, description);
    return finish();
}

} // namespace lockscope::lab
