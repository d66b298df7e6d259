// SPDX-License-Identifier: GPL-2.0-or-later
// The bisect's bookkeeping on a real git history made here: which commit is
// judged next, how skips move it, what the log says, and that git itself
// replays the log to the same state.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "lockscope/lab/bisect_state.h"
#include "lockscope/lab/error.h"
#include "lockscope/lab/process.h"

namespace fs = std::filesystem;

namespace lockscope::lab {
namespace {

std::string sh(const fs::path& dir, const std::string& cmd)
{
    auto r = runProcess({"sh", "-c", "cd " + shellQuote(dir.string()) + " && " + cmd}, 60);
    EXPECT_TRUE(r.ok()) << cmd << ": " << r.output;
    std::string out = r.output;
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

// base, then c1..c8, one file changed per commit (a linear history).
class History : public ::testing::Test {
protected:
    void SetUp() override
    {
        dir_ = fs::temp_directory_path() / ("lockscope-bisect-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        sh(dir_, "git init -q && git config user.name t && git config user.email t@t.invalid");
        commits_.push_back(commit("base"));
        for (int i = 1; i <= 8; ++i)
            commits_.push_back(commit("c" + std::to_string(i)));
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string commit(const std::string& name)
    {
        std::ofstream(dir_ / (name + ".txt")) << name << "\n";
        sh(dir_, "git add -A && git commit -q -m " + shellQuote("subject of " + name));
        return sh(dir_, "git rev-parse HEAD");
    }
    int indexOf(const std::string& sha) const
    {
        for (size_t i = 0; i < commits_.size(); ++i)
            if (commits_[i] == sha)
                return int(i);
        return -1;
    }

    fs::path dir_;
    std::vector<std::string> commits_;  // [0] base, [i] ci
};

TEST_F(History, ResolvesRevisionsAndAncestry)
{
    GitHistory git(dir_.string());
    EXPECT_EQ(git.resolve("HEAD"), commits_[8]);
    EXPECT_EQ(git.resolve("HEAD~8"), commits_[0]);
    EXPECT_TRUE(git.isAncestor(commits_[0], commits_[8]));
    EXPECT_FALSE(git.isAncestor(commits_[8], commits_[0]));
    EXPECT_THROW(git.resolve("no-such-rev"), LabError);
    EXPECT_THROW(git.resolve("--all"), LabError);
    const CommitInfo c = git.describe(commits_[3]);
    EXPECT_EQ(c.subject, "subject of c3");
    EXPECT_EQ(c.author, "t <t@t.invalid>");
    EXPECT_EQ(c.date.size(), 25u) << c.date;  // ISO 8601 with the zone
    EXPECT_EQ(git.parents(commits_[3]), std::vector<std::string>{commits_[2]});
}

TEST_F(History, NotAGitTreeIsOneLine)
{
    const fs::path plain = dir_ / "plain";
    fs::create_directories(plain);
    fs::remove_all(dir_ / ".git");
    try {
        GitHistory git(plain.string());
        FAIL() << "no error";
    } catch (const LabError& e) {
        EXPECT_NE(std::string(e.what()).find("not a git tree"), std::string::npos) << e.what();
    }
}

TEST_F(History, HalvesUntilTheFirstBadCommit)
{
    // The change is in c5: good below, bad from it on. Count the judged commits.
    GitHistory git(dir_.string());
    BisectState s{{commits_[0]}, commits_[8], {}, {}};
    int judged = 0;
    for (;;) {
        const NextStep n = nextStep(git, s);
        if (n.kind == NextStep::Kind::Found) {
            EXPECT_EQ(n.commit, commits_[5]);
            break;
        }
        ASSERT_EQ(n.kind, NextStep::Kind::Judge);
        ++judged;
        if (indexOf(n.commit) >= 5)
            s.bad = n.commit;
        else
            s.goods.push_back(n.commit);
    }
    EXPECT_LE(judged, 3);  // ceil(log2(8))
}

TEST_F(History, ASkippedMidpointMovesToANeighbour)
{
    GitHistory git(dir_.string());
    BisectState s{{commits_[0]}, commits_[8], {}, {}};
    const NextStep first = nextStep(git, s);
    ASSERT_EQ(first.kind, NextStep::Kind::Judge);
    EXPECT_EQ(first.left, 7u);
    s.skipped[first.commit] = "does not build";
    const NextStep second = nextStep(git, s);
    ASSERT_EQ(second.kind, NextStep::Kind::Judge);
    EXPECT_NE(second.commit, first.commit);
    EXPECT_LE(std::abs(indexOf(second.commit) - indexOf(first.commit)), 2);
}

TEST_F(History, OnlySkippedCommitsLeftNamesTheSuspects)
{
    GitHistory git(dir_.string());
    BisectState s{{commits_[0], commits_[5]}, commits_[7], {{commits_[6], "does not build"}}, {}};
    const NextStep n = nextStep(git, s);
    ASSERT_EQ(n.kind, NextStep::Kind::OnlySkippedLeft);
    EXPECT_EQ(n.suspects, (std::vector<std::string>{commits_[6], commits_[7]}));
}

TEST_F(History, TheLogReplaysHereAndInGit)
{
    GitHistory git(dir_.string());
    std::string log = bisectLogStart(git.describe(commits_[0]), git.describe(commits_[8]));
    log += bisectLogEntry("good", git.describe(commits_[4]), "against good: no significant change (p 0.5)");
    log += bisectLogEntry("skip", git.describe(commits_[6]), "does not build: kernel/time/x.c:1: error\nsecond");
    log += bisectLogEntry("bad", git.describe(commits_[7]), "against bad: no significant change");
    const BisectState s = replayBisectLog(log);
    EXPECT_EQ(s.goods, (std::vector<std::string>{commits_[0], commits_[4]}));
    EXPECT_EQ(s.bad, commits_[7]);
    ASSERT_EQ(s.skipped.count(commits_[6]), 1u);
    EXPECT_EQ(s.skipped.at(commits_[6]), "does not build: kernel/time/x.c:1: error second");
    EXPECT_EQ(s.reasons.at(commits_[4]), "against good: no significant change (p 0.5)");

    // git bisect replay reaches the same state and names the same next commit.
    std::ofstream(dir_ / "bisect.log") << log;
    sh(dir_, "git bisect replay bisect.log >/dev/null");
    EXPECT_EQ(sh(dir_, "git rev-parse refs/bisect/bad"), commits_[7]);
    EXPECT_EQ(sh(dir_, "git rev-parse HEAD"), nextStep(git, s).commit);
    sh(dir_, "git bisect reset -q >/dev/null 2>&1 || git bisect reset >/dev/null");
}

TEST_F(History, ALogWithAStrangeLineIsRefused)
{
    EXPECT_THROW(replayBisectLog("git bisect start\ngit bisect maybe 123\n"), LabError);
    EXPECT_THROW(replayBisectLog("git bisect start\n"), LabError);
}

} // namespace
} // namespace lockscope::lab
