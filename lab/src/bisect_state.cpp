// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/lab/bisect_state.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "lockscope/lab/error.h"
#include "lockscope/lab/process.h"

namespace fs = std::filesystem;

namespace lockscope::lab {

namespace {

constexpr double kGitTimeoutS = 600;

std::string chomp(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

std::string firstLineOf(const std::string& text) { return text.substr(0, text.find('\n')); }

std::vector<std::string> lines(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
        if (!l.empty())
            out.push_back(l);
    return out;
}

// A reason on one comment line.
std::string oneLine(std::string s)
{
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::replace(s.begin(), s.end(), '\r', ' ');
    return s;
}

} // namespace

std::string CommitInfo::oneLine() const { return sha.substr(0, 12) + " " + subject; }

GitHistory::GitHistory(const std::string& tree)
{
    std::error_code ec;
    if (!fs::is_directory(tree, ec))
        throw LabError("--tree " + tree + ": no such directory");
    auto r = runProcess({"git", "-C", tree, "rev-parse", "--show-toplevel"}, 60);
    if (!r.ok())
        throw LabError("--tree " + tree + ": not a git tree (bisect needs the kernel's git history)");
    top_ = chomp(firstLineOf(r.output));
}

std::string GitHistory::git(const std::vector<std::string>& args, const std::string& what) const
{
    std::vector<std::string> argv = {"git", "-C", top_, "--no-optional-locks"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = runProcess(argv, kGitTimeoutS);
    if (!r.ok())
        throw LabError(what + " failed in " + top_ + ": " + firstLineOf(tailLines(r.output, 3)));
    return r.output;
}

std::string GitHistory::resolve(const std::string& rev) const
{
    if (rev.empty() || rev[0] == '-')
        throw LabError("'" + rev + "' is not a revision");
    auto r = runProcess({"git", "-C", top_, "rev-parse", "--verify", "-q", rev + "^{commit}"}, 60);
    if (!r.ok())
        throw LabError("unknown revision '" + rev + "' in " + top_);
    return chomp(firstLineOf(r.output));
}

bool GitHistory::isAncestor(const std::string& ancestor, const std::string& descendant) const
{
    auto r = runProcess({"git", "-C", top_, "merge-base", "--is-ancestor", ancestor, descendant}, kGitTimeoutS);
    if (r.started && !r.timed_out && r.signal == 0 && (r.exit_code == 0 || r.exit_code == 1))
        return r.exit_code == 0;
    throw LabError("git merge-base failed in " + top_ + ": " + firstLineOf(tailLines(r.output, 2)));
}

CommitInfo GitHistory::describe(const std::string& sha) const
{
    // One field per line; a subject holds no newline.
    auto out = lines(git({"show", "-s", "--format=%H%n%s%n%an <%ae>%n%aI", sha}, "git show " + sha));
    if (out.size() < 4)
        throw LabError("git show " + sha + " gave " + std::to_string(out.size()) + " lines");
    return CommitInfo{out[0], out[1], out[2], out[3]};
}

std::vector<std::string> GitHistory::parents(const std::string& sha) const
{
    auto out = lines(git({"rev-list", "--parents", "-n", "1", sha}, "git rev-list --parents"));
    if (out.empty())
        return {};
    std::istringstream words(out[0]);
    std::vector<std::string> p;
    std::string w;
    words >> w;  // the commit itself
    while (words >> w)
        p.push_back(w);
    return p;
}

std::vector<std::string> GitHistory::candidates(const std::string& bad, const std::vector<std::string>& goods) const
{
    std::vector<std::string> args = {"rev-list", "--bisect-all", bad};
    for (const auto& g : goods)
        args.push_back("^" + g);
    std::vector<std::string> out;
    for (const auto& l : lines(git(args, "git rev-list --bisect-all"))) {
        auto sha = l.substr(0, l.find(' '));
        if (sha != bad)
            out.push_back(sha);
    }
    return out;
}

NextStep nextStep(const GitHistory& git, const BisectState& state)
{
    NextStep step;
    const auto all = git.candidates(state.bad, state.goods);
    step.left = all.size();
    for (const auto& c : all)
        if (!state.skipped.count(c)) {
            step.kind = NextStep::Kind::Judge;
            step.commit = c;
            return step;
        }
    if (all.empty()) {
        step.kind = NextStep::Kind::Found;
        step.commit = state.bad;
        return step;
    }
    step.kind = NextStep::Kind::OnlySkippedLeft;
    step.suspects = all;
    step.suspects.push_back(state.bad);
    return step;
}

std::string bisectLogStart(const CommitInfo& good, const CommitInfo& bad)
{
    return "# lockscope lab bisect: `git bisect replay` takes this file; the reasons are comments\n"
           "git bisect start\n"
           "# bad: [" + bad.sha + "] " + oneLine(bad.subject) + "\n"
           "git bisect bad " + bad.sha + "\n"
           "# good: [" + good.sha + "] " + oneLine(good.subject) + "\n"
           "git bisect good " + good.sha + "\n";
}

std::string bisectLogEntry(const std::string& decision, const CommitInfo& commit, const std::string& reason)
{
    return "# " + decision + ": [" + commit.sha + "] " + oneLine(commit.subject) + "\n# lockscope: " +
           oneLine(reason) + "\ngit bisect " + decision + " " + commit.sha + "\n";
}

BisectState replayBisectLog(const std::string& text)
{
    BisectState s;
    std::string reason;
    bool started = false;
    for (const auto& l : lines(text)) {
        if (l.rfind("# lockscope: ", 0) == 0) {
            reason = l.substr(13);
            continue;
        }
        if (l[0] == '#')
            continue;
        std::istringstream words(l);
        std::string g, b, verb, sha, extra;
        words >> g >> b >> verb >> sha >> extra;
        if (g != "git" || b != "bisect" || !extra.empty())
            throw LabError("bisect log: unknown line '" + l + "'");
        if (verb == "start" && sha.empty()) {
            started = true;
            continue;
        }
        if (!started || sha.empty())
            throw LabError("bisect log: '" + l + "' before `git bisect start`, or without a commit");
        if (verb == "good") {
            s.goods.push_back(sha);
            s.reasons[sha] = reason;
        } else if (verb == "bad") {
            s.bad = sha;
            s.reasons[sha] = reason;
        } else if (verb == "skip") {
            s.skipped[sha] = reason;
        } else {
            throw LabError("bisect log: unknown decision '" + verb + "'");
        }
        reason.clear();
    }
    if (s.goods.empty() || s.bad.empty())
        throw LabError("bisect log: no good or no bad commit in it");
    return s;
}

} // namespace lockscope::lab
