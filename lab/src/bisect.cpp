// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/lab/bisect.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lockscope/capture/io.h"
#include "lockscope/lab/bisect_state.h"
#include "lockscope/lab/error.h"
#include "lockscope/lab/process.h"
#include "lockscope/lab/source_build.h"
#include "lockscope/reports/format.h"
#include "lockscope/reports/judge.h"
#include "lockscope/reports/render.h"
#include "lockscope/util/file_text.h"
#include "lockscope/util/output_file.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace lockscope::lab {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string secondsText(double s) { return reports::fmt::fixed(s, 0) + " s"; }

json commitJson(const CommitInfo& c)
{
    return json{{"sha", c.sha}, {"subject", c.subject}, {"author", c.author}, {"date", c.date}};
}

json optionsJson(const BisectOptions& o)
{
    const auto& l = o.lab;
    return json{{"tree", o.tree},
                {"good", o.good},
                {"bad", o.bad},
                {"lock", o.lock},
                {"figure", o.figure},
                {"runs", l.runs},
                {"max_runs", o.max_runs},
                {"workload", l.workload},
                {"record_args", l.record_args},
                {"add", l.extra_files},
                {"cache", l.cache_dir},
                {"timeout", l.boot.timeout_s},
                {"memory", l.boot.memory_mb},
                {"cpus", l.boot.cpus},
                {"accel", o.accel},
                {"append", l.boot.append},
                {"stall_timeout", l.boot.stall_s},
                {"boot_retries", l.boot_retries}};
}

// Checks everything that can be checked before a kernel is built, so that
// bad input costs nothing and writes nothing.
void checkInput(const BisectOptions& o, const GitHistory& git, std::string& good, std::string& bad)
{
    if (o.lab.workload.empty())
        throw LabError("no workload: add `-- <command> [args]` to run under lockscope record in each guest");
    if (findExecutable(o.lab.workload[0]).empty())
        throw LabError("workload '" + o.lab.workload[0] + "' not found on this host (give its path)");
    // Every commit's runs are judged against another's, and one run against one gives no verdict:
    // refused before any kernel is built.
    if (o.lab.runs < 2)
        throw LabError("--runs " + std::to_string(o.lab.runs) +
                       ": one run a commit gives no verdict: use --runs 2 or more (3 by default)");
    if (o.max_runs && o.max_runs < o.lab.runs)
        throw LabError("--max-runs (" + std::to_string(o.max_runs) + ") is below --runs (" +
                       std::to_string(o.lab.runs) + ")");
    if (!o.figure.empty()) {
        try {
            reports::judgeFigure(o.figure);
        } catch (const std::exception& e) {
            throw LabError(std::string("--figure: ") + e.what());
        }
    }
    if (o.good.empty() || o.bad.empty())
        throw LabError("--good and --bad are both needed");
    good = git.resolve(o.good);
    bad = git.resolve(o.bad);
    if (good == bad)
        throw LabError("--good and --bad are the same commit " + good.substr(0, 12));
    if (!git.isAncestor(good, bad))
        throw LabError("--good " + o.good + " is not an ancestor of --bad " + o.bad +
                       " (bisect looks for the first bad commit after a good one)");
}

// A failed build's one line: the lab's first line and the compiler's first error.
std::string buildFailureLine(const std::string& what)
{
    std::string first = what.substr(0, what.find('\n')), error;
    std::istringstream lines(what);
    for (std::string l; std::getline(lines, l);)
        if (error.empty() && l.find("error") != std::string::npos && l != first)
            error = l;
    return error.empty() ? first : first + " " + error;
}

class Bisector {
public:
    Bisector(const BisectOptions& o, std::ostream& progress, std::ostream& result)
        : o_(o), progress_(progress), result_(result), git_(o.tree), dir_(o.lab.out_dir)
    {
    }

    int run(bool resume)
    {
        std::string good, bad;
        checkInput(o_, git_, good, bad);
        prepare(resume, good, bad);
        good_ = git_.describe(good);
        bad_ = git_.describe(bad);
        if (state_.contains("result")) {
            result_ << state_["result"].value("text", std::string()) << std::flush;
            return state_["result"].value("exit", 1);
        }
        say("bisect " + good_.sha.substr(0, 12) + ".." + bad_.sha.substr(0, 12) + " in " + git_.top() + ", " +
            std::to_string(o_.lab.runs) + " runs per commit (up to " + std::to_string(maxRuns()) +
            "); lab detail in " + (dir_ / "lab.log").string());
        if (!endpoints())
            return 1;
        BisectState s = fs::exists(logPath()) ? replayBisectLog(util::readTextFile(logPath())) : startLog();
        for (unsigned stepNo = unsigned(state_["steps"].size()) + 1;; ++stepNo) {
            const NextStep next = nextStep(git_, s);
            if (next.kind != NextStep::Kind::Judge)
                return finish(next, s);
            judgeStep(stepNo, next, s);
        }
    }

private:
    unsigned maxRuns() const { return o_.max_runs ? o_.max_runs : 2 * o_.lab.runs; }
    fs::path logPath() const { return dir_ / "bisect.log"; }
    fs::path jsonPath() const { return dir_ / "bisect.json"; }
    fs::path runsDir(const std::string& sha) const { return dir_ / "runs" / sha.substr(0, 12); }

    void say(const std::string& line) { progress_ << "bisect: " << line << std::endl; }

    void prepare(bool resume, const std::string& good, const std::string& bad)
    {
        if (resume) {
            if (!fs::exists(jsonPath()))
                throw LabError(dir_.string() + " holds no bisect to resume (no bisect.json)");
            state_ = json::parse(util::readTextFile(jsonPath()));
        } else {
            if (fs::exists(jsonPath()))
                throw LabError(dir_.string() + " holds a bisect already: --resume " + dir_.string() +
                               " continues it; -o DIR starts another");
            ensureOwnedDirectory(dir_.string(), "output dir", "-o");
            // The commits, not the names: a branch or HEAD~3 may point elsewhere by the time of --resume.
            state_ = json{{"version", 1}, {"options", optionsJson(o_)}, {"steps", json::array()}};
            state_["options"]["good"] = good;
            state_["options"]["bad"] = bad;
        }
        labLog_.open(dir_ / "lab.log", std::ios::app);
        cache_ = o_.lab.cache_dir.empty() ? defaultCacheDir() : o_.lab.cache_dir;
        payload_ = prepareGuestPayload(o_.lab);
        if (!resume)
            saveJson();
    }

    void saveJson() { util::writeFileAtomic(jsonPath().string(), state_.dump(1) + "\n", 0644); }

    void appendLog(const std::string& text)
    {
        const std::string old = fs::exists(logPath()) ? util::readTextFile(logPath()) : std::string();
        util::writeFileAtomic(logPath().string(), old + text, 0644);
    }

    BisectState startLog()
    {
        appendLog(bisectLogStart(good_, bad_));
        return replayBisectLog(util::readTextFile(logPath()));
    }

    struct Runs {
        std::vector<Capture> captures;
        std::string failure;  // "" when every run recorded
        std::string build_failure;  // "" unless the kernel did not build
        double build_s = 0, boot_s = 0;
        std::optional<Kernel> kernel;  // built (or found in the lab's cache) once a run needed it
    };

    // Up to `want` runs of a commit: the ones recorded before (an interrupted
    // step, an earlier bisect in this DIR) are read back, and the kernel is
    // built (the lab's cache: usually found) only when a run is missing.
    void record(const std::string& sha, unsigned want, Runs& runs)
    {
        for (unsigned k = unsigned(runs.captures.size()) + 1; k <= want && runs.failure.empty(); ++k) {
            const fs::path stem = runsDir(sha) / ("run-" + std::to_string(k));
            const fs::path file = stem.string() + ".lockscope.json";
            if (!fs::exists(file)) {
                if (!runs.kernel) {
                    const auto t0 = Clock::now();
                    try {
                        runs.kernel = resolveLabKernel({sha.substr(0, 12), "src:" + git_.top() + "@" + sha}, cache_,
                                                       labLog_);
                    } catch (const LabError& e) {
                        runs.build_failure = runs.failure = buildFailureLine(e.what());
                    }
                    runs.build_s += since(t0);
                    if (!runs.kernel)
                        break;
                }
                const auto t0 = Clock::now();
                const RecordOutcome r = recordOnce(o_.lab, *runs.kernel, sha.substr(0, 12), stem,
                                                   sha.substr(0, 12) + " run " + std::to_string(k), payload_, labLog_);
                runs.boot_s += since(t0);
                std::error_code ec;
                fs::remove_all(stem.string() + ".guest", ec);  // the initramfs alone is ~230 MiB
                if (r.capture.empty()) {
                    runs.failure = r.failure;
                    break;
                }
            }
            runs.captures.push_back(readCapture(file.string()));
        }
    }

    // Builds and records an endpoint; throws when it cannot.
    std::vector<Capture> endpointRuns(const CommitInfo& c, const char* which)
    {
        Runs runs;
        record(c.sha, o_.lab.runs, runs);
        if (!runs.failure.empty())
            throw LabError(std::string("the ") + which + " endpoint " + c.oneLine() + " cannot be recorded: " +
                           runs.failure);
        say(std::string(which) + " " + c.oneLine() + ": build " + secondsText(runs.build_s) + ", " +
            std::to_string(runs.captures.size()) + " runs " + secondsText(runs.boot_s));
        return std::move(runs.captures);
    }

    // Records both ends and settles the lock and figure; false (with the
    // reason said and kept) when there is nothing to bisect.
    bool endpoints()
    {
        goodRuns_ = endpointRuns(good_, "good");
        badRuns_ = endpointRuns(bad_, "bad");
        if (state_.contains("lock")) {
            target_ = {state_["lock"], state_["figure"]};
            return true;
        }
        std::string why;
        reports::FigureChange change;
        // Each end has --runs >= 2 runs here (checkInput; endpointRuns throws on a failed one).
        if (o_.lock.empty()) {
            const auto pick = reports::pickChangedLock(goodRuns_, badRuns_, o_.figure);
            if (!pick)
                return refuse("good and bad are alike for every lock" +
                              (o_.figure.empty() ? std::string() : " (" + o_.figure + ")") + ": nothing to bisect");
            target_ = pick->target;
            change = pick->change;
            why = pick->why;
        } else {
            target_ = {o_.lock, o_.figure};
            try {
                change = reports::endpointChange(goodRuns_, badRuns_, target_);
            } catch (const std::invalid_argument&) {
                return refuse("lock '" + o_.lock + "' is on neither endpoint (" +
                              std::to_string(goodRuns_.front().locks.size()) + " and " +
                              std::to_string(badRuns_.front().locks.size()) +
                              " locks): pick one `lockscope compare` shows, or leave --lock out");
            }
            if (change.change != reports::Change::Up && change.change != reports::Change::Down)
                return refuse("good and bad are alike for " + target_.lock + " " + target_.figure + ": " +
                              change.text() + ", nothing to bisect");
            why = changeLine(target_, change);
        }
        say(why);
        state_["lock"] = target_.lock;
        state_["figure"] = target_.figure;
        state_["why"] = why;
        state_["good"] = commitJson(good_);
        state_["bad"] = commitJson(bad_);
        saveJson();
        return true;
    }

    // "hash_lock total_hold: regressed (p 2e-07), 141.38 us/s ± 118.1% (n 5) -> 104.91 ms/s ± 3.1% (n 5)"
    static std::string changeLine(const reports::JudgeTarget& t, const reports::FigureChange& change)
    {
        const auto& fig = reports::judgeFigure(t.figure);
        return t.lock + " " + t.figure + ": " + change.text() + ", " + reports::figureText(fig, change.reference) +
               " -> " + reports::figureText(fig, change.other);
    }

    std::string bisectedChange(const std::vector<Capture>& before, const std::vector<Capture>& after) const
    {
        reports::JudgeTarget t = target_;
        try {
            return "`" + changeLine(t, reports::endpointChange(before, after, t)) + "`";
        } catch (const std::invalid_argument&) {
            return "`" + target_.lock + "` is on neither side";
        }
    }

    bool refuse(const std::string& reason)
    {
        state_["result"] = json{{"refused", reason}, {"text", reason + "\n"}, {"exit", 1}};
        saveJson();
        result_ << reason << std::endl;
        return false;
    }

    // One step: build, record, judge (more runs while undecided), decide.
    void judgeStep(unsigned stepNo, const NextStep& next, BisectState& s)
    {
        const CommitInfo c = git_.describe(next.commit);
        json step{{"step", stepNo}, {"commit", commitJson(c)}};
        Runs runs;
        std::string decision, why, figureLine;
        record(c.sha, o_.lab.runs, runs);
        if (!runs.build_failure.empty()) {
            decision = "skip";
            why = "does not build: " + runs.build_failure;
        } else if (!runs.failure.empty()) {
            decision = "skip";
            why = "does not boot or record: " + runs.failure;
        } else {
            reports::JudgeResult j = reports::judge(goodRuns_, runs.captures, badRuns_, target_);
            while (j.call == reports::Call::Undecided && runs.captures.size() < maxRuns() && runs.failure.empty()) {
                record(c.sha, unsigned(runs.captures.size()) + 1, runs);
                if (runs.failure.empty())
                    j = reports::judge(goodRuns_, runs.captures, badRuns_, target_);
            }
            const auto& fig = reports::judgeFigure(j.figure);
            // The candidate's figure; from the bad side's comparison when good and candidate both lack the lock.
            const reports::RunSummary& mine = j.vs_good.other.n || !j.vs_bad ? j.vs_good.other : j.vs_bad->other;
            figureLine = "n " + std::to_string(runs.captures.size()) + ", " + j.figure + " " +
                         reports::figureText(fig, mine);
            decision = j.call == reports::Call::Good ? "good" : j.call == reports::Call::Bad ? "bad" : "skip";
            why = j.call == reports::Call::Undecided
                      ? "undecided after " + std::to_string(runs.captures.size()) + " runs: " + j.why
                      : j.why;
            if (!j.matched_by_name.empty()) {
                std::string m;
                for (const auto& x : j.matched_by_name)
                    m += (m.empty() ? "" : ", ") + x;
                why += "; lock matched by name, not key: " + m;
                step["matched_by_name"] = j.matched_by_name;
            }
            step["figure"] = {{"mean", mine.mean}, {"stddev", mine.stddev}, {"n", mine.n}};
        }
        if (decision == "good")
            s.goods.push_back(c.sha);
        else if (decision == "bad")
            s.bad = c.sha;
        else
            s.skipped[c.sha] = why;
        appendLog(bisectLogEntry(decision, c, why));
        const size_t left = nextStep(git_, s).left;
        step["decision"] = decision;
        step["why"] = why;
        step["build_s"] = runs.build_s;
        step["boot_s"] = runs.boot_s;
        step["runs"] = runs.captures.size();
        step["left"] = left;
        state_["steps"].push_back(step);
        saveJson();
        say("step " + std::to_string(stepNo) + ": " + c.oneLine() + " | build " + secondsText(runs.build_s) + ", boots " +
            secondsText(runs.boot_s) + " | " + (figureLine.empty() ? "-" : figureLine) + " | " + decision +
            (decision == "skip" ? " (" + why + ")" : "") + " | " + std::to_string(left) + " left");
    }

    // The runs of a commit already recorded (in DIR/runs), or recorded now.
    std::vector<Capture> runsOf(const std::string& sha)
    {
        if (sha == good_.sha)
            return goodRuns_;
        Runs runs;
        record(sha, o_.lab.runs, runs);
        if (!runs.failure.empty())
            throw LabError("the parent " + sha.substr(0, 12) + " cannot be recorded: " + runs.failure);
        return std::move(runs.captures);
    }

    int finish(const NextStep& next, const BisectState& s)
    {
        std::ostringstream text;
        json result;
        int exit = 0;
        if (next.kind == NextStep::Kind::OnlySkippedLeft) {
            text << "the first bad commit for " << target_.lock << " " << target_.figure
                 << " could not be narrowed further: skipped commits remain. It is one of:\n";
            for (const auto& sha : next.suspects) {
                text << "  " << git_.describe(sha).oneLine();
                if (s.skipped.count(sha))
                    text << "  (skipped: " << s.skipped.at(sha) << ")";
                text << "\n";
            }
            result["suspects"] = next.suspects;
            exit = 1;
        } else {
            const CommitInfo c = git_.describe(next.commit);
            const auto parents = git_.parents(c.sha);
            text << "first bad commit for " << target_.lock << " " << target_.figure << ": " << c.sha << "\n"
                 << "    " << c.subject << "\n    Author: " << c.author << "\n    Date:   " << c.date << "\n";
            result["first_bad"] = commitJson(c);
            if (!parents.empty()) try {
                const std::vector<Capture> before = runsOf(parents.front());
                const std::vector<Capture> after = c.sha == bad_.sha ? badRuns_ : runsOf(c.sha);
                // The bisected lock first: the compare's own ordering may rank it below ten others.
                const std::string md = "Bisected lock: " + bisectedChange(before, after) + "\n\n" +
                                       reports::render(reports::compareSets(before, after), reports::Format::Markdown);
                util::writeFileAtomic((dir_ / "first-bad.md").string(), md, 0644);
                text << "\n" << c.sha.substr(0, 12) << " against its parent " << parents.front().substr(0, 12)
                     << " (" << (dir_ / "first-bad.md").string() << "):\n\n"
                     << md;
                result["parent"] = parents.front();
                result["compare_md"] = "first-bad.md";
            } catch (const LabError& e) {
                text << "\n(no comparison with its parent: " << e.what() << ")\n";
            }
        }
        appendLog("# lockscope: " + std::string(exit == 0 ? "first bad commit: [" + next.commit + "]" : "only skipped commits left") + "\n");
        result["text"] = text.str();
        result["exit"] = exit;
        state_["result"] = result;
        saveJson();
        result_ << text.str() << std::flush;
        return exit;
    }

    const BisectOptions& o_;
    std::ostream& progress_;
    std::ostream& result_;
    GitHistory git_;
    fs::path dir_;
    json state_;
    std::ofstream labLog_;
    std::string cache_;
    GuestPayload payload_;
    CommitInfo good_, bad_;
    std::vector<Capture> goodRuns_, badRuns_;
    reports::JudgeTarget target_;
};

} // namespace

BisectOptions loadBisectOptions(const std::string& dir)
{
    const fs::path file = fs::path(dir) / "bisect.json";
    if (!fs::exists(file))
        throw LabError(dir + " holds no bisect to resume (no bisect.json)");
    json j;
    try {
        j = json::parse(util::readTextFile(file)).at("options");
        BisectOptions o;
        o.tree = j.at("tree");
        o.good = j.at("good");
        o.bad = j.at("bad");
        o.lock = j.at("lock");
        o.figure = j.at("figure");
        o.lab.runs = j.at("runs");
        o.max_runs = j.at("max_runs");
        o.lab.workload = j.at("workload").get<std::vector<std::string>>();
        o.lab.record_args = j.at("record_args").get<std::vector<std::string>>();
        o.lab.extra_files = j.at("add").get<std::vector<std::string>>();
        o.lab.cache_dir = j.at("cache");
        o.lab.boot.timeout_s = j.at("timeout");
        o.lab.boot.memory_mb = j.at("memory");
        o.lab.boot.cpus = j.at("cpus");
        o.accel = j.at("accel");
        o.lab.boot.accel = parseAccel(o.accel);
        o.lab.boot.append = j.at("append");
        o.lab.boot.stall_s = j.at("stall_timeout");
        o.lab.boot_retries = j.at("boot_retries");
        o.lab.out_dir = dir;
        return o;
    } catch (const json::exception& e) {
        throw LabError(file.string() + ": not a bisect state this lockscope wrote (" + e.what() + ")");
    }
}

int runBisect(const BisectOptions& options, bool resume, std::ostream& progress, std::ostream& result)
{
    return Bisector(options, progress, result).run(resume);
}

} // namespace lockscope::lab
