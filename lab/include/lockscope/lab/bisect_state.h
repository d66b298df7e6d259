// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <map>
#include <string>
#include <vector>

// The bookkeeping of `lab bisect`, without kernels: the user's git history,
// the decisions so far, which commit to judge next, and the log that holds
// them. The log is git's own bisect log format (`git bisect replay` takes
// it), with lockscope's reasons in comment lines; --resume rebuilds the
// state from it.
namespace lockscope::lab {

struct CommitInfo {
    std::string sha, subject, author, date;  // date: ISO 8601 (author date)
    std::string oneLine() const;             // "1a2b3c4d5e6f subject"
};

// git in the user's tree, read only. Every failure is a LabError of one line.
class GitHistory {
public:
    explicit GitHistory(const std::string& tree);  // throws unless a git work tree
    const std::string& top() const noexcept { return top_; }
    std::string resolve(const std::string& rev) const;  // the full commit id; throws for an unknown revision
    bool isAncestor(const std::string& ancestor, const std::string& descendant) const;
    CommitInfo describe(const std::string& sha) const;
    std::vector<std::string> parents(const std::string& sha) const;
    // Commits reachable from bad and from none of goods, bad excluded, the
    // best midpoint first (git rev-list --bisect-all's order).
    std::vector<std::string> candidates(const std::string& bad, const std::vector<std::string>& goods) const;

private:
    std::string git(const std::vector<std::string>& args, const std::string& what) const;
    std::string top_;
};

struct BisectState {
    std::vector<std::string> goods;              // the good endpoint first, then commits judged good
    std::string bad;                             // the newest commit known bad (the bad endpoint at first)
    std::map<std::string, std::string> skipped;  // commit -> why
    std::map<std::string, std::string> reasons;  // commit -> why it was judged good or bad
};

struct NextStep {
    enum class Kind { Judge, Found, OnlySkippedLeft } kind = Kind::Judge;
    std::string commit;                // Judge: the midpoint; Found: the first bad commit
    std::vector<std::string> suspects; // OnlySkippedLeft: the skipped commits and bad, one of them first bad
    size_t left = 0;                   // commits still in question (bad excluded)
};

// The midpoint to judge next, skipping skipped commits as git bisect skip
// does (the next best midpoint), or the answer.
NextStep nextStep(const GitHistory& git, const BisectState& state);

// The log, in `git bisect log` form. Each decision is appended with a
// comment line holding its reason.
std::string bisectLogStart(const CommitInfo& good, const CommitInfo& bad);
std::string bisectLogEntry(const std::string& decision, const CommitInfo& commit, const std::string& reason);
// Rebuilds the state from a log this module wrote; throws LabError on a line it does not know.
BisectState replayBisectLog(const std::string& text);

} // namespace lockscope::lab
