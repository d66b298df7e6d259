// SPDX-License-Identifier: GPL-2.0-or-later
// Kernel-from-source specs, build keys and every error path of a source
// build, against real git and make on a small fake kernel tree (a Makefile
// that answers tinyconfig/olddefconfig/bzImage the way Kbuild does), so no
// kernel is compiled here; lab.source_build (label kernel-build) builds real ones.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lockscope/lab/error.h"
#include "lockscope/lab/lab.h"
#include "lab_test_files.h"
#include "lockscope/lab/process.h"
#include "lockscope/lab/source_build.h"

namespace fs = std::filesystem;
using namespace lockscope::lab;

namespace {

fs::path tempDir(const std::string& tag) { return lab_test::tempDir("src", tag); }

void write(const fs::path& p, const std::string& text)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

std::string sh(const std::string& cmd)
{
    auto r = runProcess({"sh", "-c", cmd}, 60);
    EXPECT_TRUE(r.ok()) << cmd << "\n" << r.output;
    return r.output;
}

// A bzImage-shaped file: "HdrS" at 0x202 and a version string.
const char* kFakeBzImageRecipe =
    "\thead -c 1024 /dev/zero > arch/x86/boot/bzImage\n"
    "\tprintf 'HdrS' | dd of=arch/x86/boot/bzImage bs=1 seek=514 conv=notrunc 2>/dev/null\n";

// A git "kernel tree" whose make targets behave like Kbuild's for the lab:
// tinyconfig writes .config, bzImage compiles ipc/sem.c (a shell check that
// fails with a compiler-style error when it holds BROKEN).
fs::path fakeKernelTree(const fs::path& dir, const std::string& olddefconfig = "\t@true\n")
{
    auto tree = dir / "linux";
    write(tree / "arch/x86/Kconfig", "# fake\n");
    write(tree / "ipc/sem.c", "int sem_lock(void) { return 1; }\n");
    write(tree / "Makefile", std::string("tinyconfig:\n\t@echo '# CONFIG_64BIT is not set' > .config\n"
                                         "olddefconfig:\n") + olddefconfig +
                                 "bzImage:\n"
                                 "\t@echo '  CC      ipc/sem.o'\n"
                                 "\t@if grep -q BROKEN ipc/sem.c; then echo 'ipc/sem.c:1:5: error: BROKEN "
                                 "is not a type'; exit 2; fi\n"
                                 "\tmkdir -p arch/x86/boot\n" +
                                 kFakeBzImageRecipe);
    sh("cd " + shellQuote(tree.string()) +
       " && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base");
    return tree;
}

std::string patchFile(const fs::path& dir, const std::string& name, const std::string& from, const std::string& to)
{
    auto p = dir / name;
    write(p, "--- a/ipc/sem.c\n+++ b/ipc/sem.c\n@@ -1 +1 @@\n-" + from + "\n+" + to + "\n");
    return p.string();
}

std::string errorOf(const KernelSpec& spec, const std::string& cache)
{
    try {
        buildKernelFromSource(spec, cache, [](const std::string&) {});
    } catch (const LabError& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST(LabSourceSpec, ParsesTreesCommitsAndPatches)
{
    EXPECT_TRUE(isSourceSpec("src:/x"));
    EXPECT_TRUE(isSourceSpec("debian-src:6.1"));
    EXPECT_FALSE(isSourceSpec("debian:6.1"));
    EXPECT_FALSE(isSourceSpec("arch/x86/boot/bzImage"));

    auto s = parseSourceSpec("src:/home/me/linux@v6.1+a.patch+dir/b.patch");
    EXPECT_EQ(s.kind, SourceSpec::Kind::GitTree);
    EXPECT_EQ(s.path, "/home/me/linux");
    EXPECT_EQ(s.commit, "v6.1");
    EXPECT_EQ(s.patches, (std::vector<std::string>{"a.patch", "dir/b.patch"}));

    s = parseSourceSpec("src:../linux");
    EXPECT_EQ(s.path, "../linux");
    EXPECT_TRUE(s.commit.empty());
    EXPECT_TRUE(s.patches.empty());

    s = parseSourceSpec("debian-src:6.1+samples/kernel-patches/01-sem-lock-scope.patch");
    EXPECT_EQ(s.kind, SourceSpec::Kind::DebianSource);
    EXPECT_EQ(s.version, "6.1");
    ASSERT_EQ(s.patches.size(), 1u);
    EXPECT_EQ(s.patches[0], "samples/kernel-patches/01-sem-lock-scope.patch");

    if (const char* home = std::getenv("HOME"); home && *home) {
        s = parseSourceSpec("src:~/linux+~/p.patch");
        EXPECT_EQ(s.path, std::string(home) + "/linux");
        EXPECT_EQ(s.patches[0], std::string(home) + "/p.patch");
    }
}

// '+' separates patches, and a path that exists with '+' in it is read whole.
TEST(LabSourceSpec, PathsWithAPlusThatExistAreReadWhole)
{
    auto dir = tempDir("plus");
    write(dir / "a+b.patch", "");
    fs::create_directories(dir / "lin+ux");
    const std::string ab = (dir / "a+b.patch").string(), c = (dir / "c.patch").string();

    auto s = parseSourceSpec("debian-src:6.1+" + ab);
    EXPECT_EQ(s.patches, (std::vector<std::string>{ab}));
    s = parseSourceSpec("debian-src:6.1+" + ab + "+" + c + "+" + ab);
    EXPECT_EQ(s.patches, (std::vector<std::string>{ab, c, ab})) << "c.patch does not exist: still its own patch";
    s = parseSourceSpec("src:" + (dir / "lin+ux").string() + "@v6.1+" + ab);
    EXPECT_EQ(s.path, (dir / "lin+ux").string());
    EXPECT_EQ(s.commit, "v6.1");
    EXPECT_EQ(s.patches, (std::vector<std::string>{ab}));
    s = parseSourceSpec("src:" + (dir / "lin").string() + "@v6.1+ux+" + ab);
    EXPECT_EQ(s.path, (dir / "lin").string()) << "the commit ends the tree";
    EXPECT_EQ(s.patches, (std::vector<std::string>{"ux", ab}));
    // A missing one is split at its '+', and the error says why.
    s = parseSourceSpec("debian-src:6.1+" + (dir / "x+y.patch").string());
    EXPECT_EQ(s.patches, (std::vector<std::string>{(dir / "x").string(), "y.patch"}));
    fs::remove_all(dir);
}

TEST(LabSourceSpec, MalformedSpecsSayWhatIsExpected)
{
    for (std::string bad : {"src:", "src:@v6.1", "src:/x@", "src:/x+", "src:/x++a.patch", "debian-src:",
                            "debian-src:six", "debian-src:6.1+", "bzImage"}) {
        try {
            parseSourceSpec(bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const LabError& e) {
            EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
        }
    }
}

TEST(LabSourceSpec, BuildKeysChangeWithEveryInput)
{
    EXPECT_EQ(fnv1aHex(""), "cbf29ce484222325");
    EXPECT_EQ(fnv1aHex("a"), "af63dc4c8601ec8c");
    BuildInputs base{"git 1111", {"p1", "p2"}, "CONFIG_X=y\n"};
    auto key = buildKey(base);
    EXPECT_EQ(key, buildKey(base));
    auto other = base;
    other.source_id = "git 2222";
    EXPECT_NE(buildKey(other), key);
    other = base;
    other.patch_texts = {"p2", "p1"};
    EXPECT_NE(buildKey(other), key) << "patch order matters";
    other = base;
    other.patch_texts = {"p1p", "2"};
    EXPECT_NE(buildKey(other), key) << "bytes moved between patches";
    other = base;
    other.patch_texts = {"p1"};
    EXPECT_NE(buildKey(other), key);
    other = base;
    other.config += "CONFIG_Y=y\n";
    EXPECT_NE(buildKey(other), key);
}

TEST(LabSourceSpec, TheShippedConfigFragmentHasWhatTheProbesNeed)
{
    const auto& frag = labConfigFragment();
    for (const char* opt : {"CONFIG_DEBUG_INFO_BTF=y", "CONFIG_BPF_SYSCALL=y", "CONFIG_KPROBES=y",
                            "CONFIG_SERIAL_8250_CONSOLE=y", "CONFIG_BLK_DEV_INITRD=y", "CONFIG_SYSVIPC=y",
                            "CONFIG_POSIX_TIMERS=y", "CONFIG_SMP=y", "CONFIG_FUNCTION_TRACER=y", "CONFIG_NET=y"})
        EXPECT_NE(frag.find(std::string("\n") + opt + "\n"), std::string::npos) << opt;
}

TEST(LabSourceBuild, BuildsAFakeTreeOnceThenFromTheCacheAndNeverTouchesTheCheckout)
{
    auto dir = tempDir("fake");
    auto tree = fakeKernelTree(dir);
    auto cache = (dir / "cache").string();
    std::vector<std::string> lines;
    auto progress = [&](const std::string& l) { lines.push_back(l); };
    auto base = buildKernelFromSource({"base", "src:" + tree.string()}, cache, progress);
    EXPECT_TRUE(fs::is_regular_file(base.image));
    EXPECT_EQ(base.name, "base");
    ASSERT_TRUE(fs::is_regular_file(base.config));
    EXPECT_NE(sh("cat " + base.config).find("CONFIG_DEBUG_INFO_BTF=y"), std::string::npos)
        << "the fragment was not merged onto tinyconfig";

    auto patch = patchFile(dir, "one.patch", "int sem_lock(void) { return 1; }", "int sem_lock(void) { return 2; }");
    auto patched = buildKernelFromSource({"p", "src:" + tree.string() + "+" + patch}, cache, progress);
    EXPECT_NE(patched.image, base.image) << "a patch must give another cache entry";

    lines.clear();
    auto again = buildKernelFromSource({"base2", "src:" + tree.string()}, cache, progress);
    EXPECT_EQ(again.image, base.image);
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.back().find("built before"), std::string::npos) << lines.back();

    // The developer's checkout: no build output, no .config, nothing modified.
    EXPECT_EQ(sh("cd " + shellQuote(tree.string()) + " && git status --porcelain --ignored"), "");
    fs::remove_all(dir);
}

TEST(LabSourceBuild, UncommittedChangesAreBuiltAndKeyed)
{
    auto dir = tempDir("dirty");
    auto tree = fakeKernelTree(dir);
    auto cache = (dir / "cache").string();
    auto quiet = [](const std::string&) {};
    auto clean = buildKernelFromSource({"a", "src:" + tree.string()}, cache, quiet);
    write(tree / "ipc/sem.c", "int sem_lock(void) { return 3; }\n");
    auto dirty = buildKernelFromSource({"b", "src:" + tree.string()}, cache, quiet);
    EXPECT_NE(dirty.image, clean.image);
    EXPECT_NE(dirty.description.find("uncommitted"), std::string::npos) << dirty.description;
    // An explicit commit ignores the working tree.
    auto head = buildKernelFromSource({"c", "src:" + tree.string() + "@HEAD"}, cache, quiet);
    EXPECT_EQ(head.image, clean.image);
    fs::remove_all(dir);
}

TEST(LabSourceBuild, BadSpecsFailWithOneClearLine)
{
    auto dir = tempDir("errors");
    auto tree = fakeKernelTree(dir);
    auto cache = (dir / "cache").string();
    auto plain = dir / "plain";
    write(plain / "Makefile", "all:\n");
    fs::create_directories(plain / "arch/x86");

    EXPECT_NE(errorOf({"a", "src:" + (dir / "missing").string()}, cache).find("no such directory"),
              std::string::npos);
    EXPECT_NE(errorOf({"a", "src:" + dir.string()}, cache).find("not a kernel tree"), std::string::npos);
    EXPECT_NE(errorOf({"a", "src:" + plain.string()}, cache).find("not a git tree"), std::string::npos);
    EXPECT_NE(errorOf({"a", "src:" + tree.string() + "@nosuchrev"}, cache).find("no such commit"),
              std::string::npos);
    EXPECT_NE(errorOf({"a", "src:" + tree.string() + "+" + (dir / "none.patch").string()}, cache)
                  .find("no such file"),
              std::string::npos);
    auto plus = errorOf({"a", "src:" + tree.string() + "+" + (dir / "no+such.patch").string()}, cache);
    EXPECT_NE(plus.find("'+' separates patches"), std::string::npos) << plus;
    EXPECT_EQ(plus.find('\n'), std::string::npos) << "one line: " << plus;
    auto stale = patchFile(dir, "stale.patch", "int other(void);", "int other(int);");
    auto e = errorOf({"a", "src:" + tree.string() + "+" + stale}, cache);
    EXPECT_NE(e.find("does not apply"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << "one line: " << e;
    EXPECT_NE(errorOf({"a", "debian-src:0.99"}, cache).find("apt-get install linux-source-0.99"), std::string::npos);

    // The compiler's complaint is shown, not just make's exit.
    auto broken = patchFile(dir, "broken.patch", "int sem_lock(void) { return 1; }", "BROKEN sem_lock(void);");
    e = errorOf({"a", "src:" + tree.string() + "+" + broken}, cache);
    EXPECT_NE(e.find("failed (make exit 2"), std::string::npos) << e;
    EXPECT_NE(e.find("ipc/sem.c:1:5: error: BROKEN is not a type"), std::string::npos) << e;
    // After a failed build the next one still starts from a clean tree.
    auto ok = buildKernelFromSource({"b", "src:" + tree.string()}, cache, [](const std::string&) {});
    EXPECT_TRUE(fs::is_regular_file(ok.image));
    fs::remove_all(dir);
}

TEST(LabSourceBuild, AKernelWithoutBtfIsRefused)
{
    auto dir = tempDir("nobtf");
    // Kconfig dropping the option, as it does when pahole is missing.
    auto tree = fakeKernelTree(dir, "\tsed -i '/DEBUG_INFO_BTF/d' .config\n");
    auto e = errorOf({"a", "src:" + tree.string()}, (dir / "cache").string());
    EXPECT_NE(e.find("no BTF"), std::string::npos) << e;
    fs::remove_all(dir);
}

TEST(LabSourceBuild, RefusesACacheDirectoryOfAnotherUser)
{
    auto dir = tempDir("owner");
    std::string foreign;
    if (::geteuid() == 0) {
        foreign = (dir / "theirs").string();
        fs::create_directories(foreign);
        ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
    } else {
        foreign = "/";  // root's
    }
    try {
        ensureOwnedDirectory(foreign, "cache dir");
        ADD_FAILURE() << foreign << " was accepted";
    } catch (const LabError& e) {
        EXPECT_NE(std::string(e.what()).find("not to you"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(ensureOwnedDirectory((dir / "mine/nested").string(), "cache dir"));
    fs::remove_all(dir);
}

namespace {

std::string refusal(const std::string& dir, const std::string& option = "--cache")
{
    try {
        ensureOwnedDirectory(dir, "cache dir", option);
    } catch (const LabError& e) {
        return e.what();
    }
    return {};
}

} // namespace

TEST(LabSourceBuild, RefusesADirectoryOtherUsersCanWrite)
{
    auto dir = tempDir("mode");
    fs::create_directories(dir / "open");
    ASSERT_EQ(::chmod((dir / "open").c_str(), 0777), 0);
    auto e = refusal((dir / "open").string());
    EXPECT_NE(e.find("writable by other users (mode 0777)"), std::string::npos) << e;
    ASSERT_EQ(::chmod((dir / "open").c_str(), 0775), 0);
    EXPECT_NE(refusal((dir / "open").string()).find("mode 0775"), std::string::npos) << "group-writable";
    ASSERT_EQ(::chmod((dir / "open").c_str(), 0755), 0);
    EXPECT_EQ(refusal((dir / "open").string()), "");
    fs::remove_all(dir);
}

// Our own directory inside one another user can write (without /tmp's
// sticky bit) can be renamed away and replaced: refused, whoever owns it.
TEST(LabSourceBuild, RefusesADirectoryInsideOneOthersCanReplaceItFrom)
{
    auto dir = tempDir("parent");
    fs::create_directories(dir / "shared/cache");
    ASSERT_EQ(::chmod((dir / "shared").c_str(), 0777), 0);
    auto e = refusal((dir / "shared/cache").string());
    EXPECT_NE(e.find("'" + (dir / "shared").string() + "' (uid"), std::string::npos) << e;
    EXPECT_NE(e.find("lets another user replace it"), std::string::npos) << e;
    ASSERT_EQ(::chmod((dir / "shared").c_str(), 01777), 0); // sticky, like /tmp: fine
    EXPECT_EQ(refusal((dir / "shared/cache").string()), "");
    fs::remove_all(dir);
}

// The /tmp attack: another user plants a symbolic link where our cache
// would be, pointing at a directory of ours (or root's, for a root lab).
TEST(LabSourceBuild, RefusesASymbolicLinkOfAnotherUser)
{
    if (::geteuid() != 0)
        GTEST_SKIP() << "skipped: giving a symbolic link to another user needs root";
    auto dir = tempDir("link");
    fs::create_directories(dir / "mine");
    fs::create_directory_symlink(dir / "mine", dir / "planted");
    ASSERT_EQ(::lchown((dir / "planted").c_str(), 65534, 65534), 0);
    auto e = refusal((dir / "planted").string(), "-o");
    EXPECT_NE(e.find("symbolic link of uid 65534"), std::string::npos) << e;
    EXPECT_NE(e.find("with -o"), std::string::npos) << e;
    fs::create_directory_symlink(dir / "mine", dir / "own");
    EXPECT_EQ(refusal((dir / "own").string()), "") << "a link of our own is followed";
    fs::remove_all(dir);
}

TEST(LabSourceBuild, TheTmpFallbackCacheIsPerUser)
{
    const char* names[] = {"XDG_CACHE_HOME", "HOME"};
    std::vector<std::pair<std::string, std::string>> saved;
    for (const char* n : names)
        if (const char* v = std::getenv(n)) {
            saved.emplace_back(n, v);
            ::unsetenv(n);
        }
    const std::string fallback = defaultCacheDir();
    for (const auto& [n, v] : saved)
        ::setenv(n.c_str(), v.c_str(), 1);
    EXPECT_EQ(fallback, "/tmp/lockscope-lab-cache-" + std::to_string(::geteuid()));
}

TEST(LabSourceBuild, TheLabRefusesAnOutputDirectoryOfAnotherUser)
{
    if (::geteuid() != 0)
        GTEST_SKIP() << "skipped: making a directory of another user needs root";
    auto dir = tempDir("out");
    fs::create_directories(dir / "theirs");
    ASSERT_EQ(::chown((dir / "theirs").c_str(), 65534, 65534), 0);
    LabOptions o;
    o.kernels = {{"a", "/nonexistent/bzImage"}};
    o.workload = {"true"};
    o.lockscope = "/bin/true";
    o.out_dir = (dir / "theirs").string();
    o.cache_dir = (dir / "cache").string();
    std::ostringstream log;
    try {
        runLab(o, log);
        ADD_FAILURE() << "the lab ran into another user's directory";
    } catch (const LabError& e) {
        EXPECT_NE(std::string(e.what()).find("output dir '" + o.out_dir + "' belongs to uid 65534"),
                  std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir / "theirs/.lab")) << "wrote into it before refusing";
    fs::remove_all(dir);
}
