// SPDX-License-Identifier: GPL-2.0-or-later
#include <cstdio>
#include <memory>

#include "commands.h"
#include "option_checks.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/input.h"
#include "lockscope/reports/judge.h"
#include "lockscope/reports/render.h"
#include "output.h"

namespace lockscope::cli {
namespace {

// `compare GOOD... -- CANDIDATE... --judge LOCK:FIGURE [--bad BAD...]`: one
// line on stdout, git bisect run's exit codes. Any error is 128, which makes
// `git bisect run` stop rather than take it for "bad".
int runJudge(const std::vector<std::string>& good, const std::vector<std::string>& candidate,
             const std::vector<std::string>& bad, const std::string& spec, double alpha, double min_effect)
{
    try {
        if (candidate.empty())
            throw std::invalid_argument("--judge needs GOOD... -- CANDIDATE... (the runs after -- are judged)");
        const reports::JudgeTarget target = reports::parseJudgeTarget(spec);
        auto [g, c] = reports::loadSets(reports::expandCaptureArgs(good), reports::expandCaptureArgs(candidate));
        std::vector<Capture> b;
        if (!bad.empty())
            b = reports::loadSets({}, reports::expandCaptureArgs(bad)).second; // the good runs are read once
        reports::CompareOptions co;
        co.alpha = alpha;
        co.min_effect_pct = min_effect;
        const reports::JudgeResult r = reports::judge(g, c, b, target, co);
        const auto& fig = reports::judgeFigure(r.figure);
        std::printf("%s: %s %s %s (candidate) vs %s (good)%s; %s\n", reports::toString(r.call), r.lock.c_str(),
                    r.figure.c_str(), reports::figureText(fig, r.vs_good.other).c_str(),
                    reports::figureText(fig, r.vs_good.reference).c_str(),
                    r.vs_bad ? (" vs " + reports::figureText(fig, r.vs_bad->reference) + " (bad)").c_str() : "",
                    r.why.c_str());
        for (const auto& m : r.matched_by_name)
            std::printf("  matched by name, not key: %s\n", m.c_str());
        return reports::exitCode(r.call);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lockscope: %s\n", e.what());
        return 128;
    }
}

} // namespace

void addCompareCommand(CLI::App& app, Result& result)
{
    struct Opts {
        std::vector<std::string> captures, patched;
        std::string format = "text", output, sort = "wait";
        double threshold = 0.0, alpha = 0.01, min_effect = 5.0, max_loss_gap = 5.0;
        reports::CompareOptions floors;
        bool verbose = false;
        std::optional<double> fail_if_worse;
        std::vector<std::string> scaling;
        std::string judge;
        std::vector<std::string> bad;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand(
        "compare", "Compare baseline captures with patched ones (locks matched by key): BEFORE AFTER, "
                   "DIR_BEFORE DIR_AFTER, or several runs per side as B1 B2 ... -- A1 A2 ...");
    cmd->add_option("captures", o->captures,
                    "baseline then patched capture (or directory of *.lockscope.json); with -- all baseline runs");
    // main.cpp turns the compare command's "--" into --patched (CLI11 does not keep where "--" was).
    cmd->add_option("--patched", o->patched, "the patched runs (what follows -- ); the positionals are the baseline");
    cmd->add_option("--format", o->format, "text, md, html or json")
        ->check(CLI::IsMember({"text", "md", "markdown", "html", "json"}));
    cmd->add_option("--threshold", o->threshold, "hide locks whose judged figure changed by less than PCT percent")
        ->check(within(0.0, 1e9));
    cmd->add_option("--sort", o->sort, "lock order: wait (total wait, then hold), hold, or change (|Δ%|)")
        ->check(CLI::IsMember({"wait", "hold", "change"}));
    cmd->add_option("--fail-if-worse", o->fail_if_worse,
                    "exit 3 when a significant regression of at least PCT percent is found (CI gate)")
        ->check(within(0.0, 1e9));
    cmd->add_option("--alpha", o->alpha, "significance level (default 0.01)")->check(within(1e-12, 0.5));
    cmd->add_option("--min-effect", o->min_effect, "changes under PCT percent are never significant (default 5)")
        ->check(within(0.0, 1e9));
    cmd->add_option("--max-loss-gap", o->max_loss_gap,
                    "withhold lock verdicts when the sides' shares of lost events, failed stacks or untimed waits "
                    "differ by more than PP points (default 5)")
        ->check(within(0.0, 100.0));
    cmd->add_option("--floor-cpu", o->floors.floor_cpu_pct,
                    "a lock's wait or hold time per second must change by at least PCT% of one CPU for a verdict "
                    "(default 0.1 = 1 ms/s)")
        ->check(within(0.0, 1e6));
    cmd->add_option("--floor-rate", o->floors.floor_events_per_s,
                    "waits or holds per second must change by at least N/s for a verdict (default 10)")
        ->check(within(0.0, 1e12));
    cmd->add_option("--floor-ns", o->floors.floor_ns,
                    "time per operation, per wait, hold or call must change by at least NS for a verdict (default 10)")
        ->check(within(0.0, 1e15));
    cmd->add_option("--floor-per-op", o->floors.floor_events_per_op,
                    "waits or holds per operation must change by at least N for a verdict (default 0.001)")
        ->check(within(0.0, 1e12));
    cmd->add_flag("--verbose", o->verbose, "Markdown: add warnings, call paths, syscalls and the method");
    cmd->add_option("--scaling", o->scaling, "scaling results JSON to show beside the comparison");
    cmd->add_option("-o,--output", o->output, "write to this file instead of stdout");
    cmd->add_option("--judge", o->judge,
                    "LOCK[:FIGURE]: judge the patched runs as a bisect step against the baseline (good) runs and "
                    "exit 0 good, 1 bad, 125 undecided (git bisect run's codes; 128 on an error). FIGURE: " +
                        reports::judgeFigureNames() + " (docs/bisect.md)");
    cmd->add_option("--bad", o->bad, "with --judge: runs of the bad kernel, so the candidate must also be unlike them");
    cmd->callback([o, &result]() {
        if (!o->judge.empty()) {
            result.exit_code = runJudge(o->captures, o->patched, o->bad, o->judge, o->alpha, o->min_effect);
            return;
        }
        if (!o->bad.empty())
            throw CLI::ValidationError("--bad goes with --judge");
        std::vector<std::string> before = o->captures, after = o->patched;
        const char* usage = "compare takes BEFORE AFTER, or B1 B2 ... -- A1 A2 ... for run sets";
        if (before.empty())
            throw CLI::ValidationError(usage);
        if (after.empty()) {
            if (before.size() != 2)
                throw CLI::ValidationError(usage);
            after = {before[1]};
            before.resize(1);
        }
        reports::CompareOptions co = o->floors;
        co.threshold_pct = o->threshold;
        co.alpha = o->alpha;
        co.min_effect_pct = o->min_effect;
        co.max_loss_gap_pp = o->max_loss_gap;
        co.sort = o->sort == "hold" ? reports::CompareSort::Hold
                  : o->sort == "change" ? reports::CompareSort::Change
                                        : reports::CompareSort::Wait;
        reports::RenderExtras extras;
        extras.verbose = o->verbose;
        for (const auto& path : o->scaling)
            for (auto& chart : reports::readScalingFile(path))
                extras.scaling.push_back(std::move(chart));
        const auto beforeFiles = reports::expandCaptureArgs(before), afterFiles = reports::expandCaptureArgs(after);
        if (o->fail_if_worse && !reports::runsCanDecide(beforeFiles.size(), afterFiles.size()))
            throw CLI::ValidationError("--fail-if-worse needs two or more runs a side, or three or more against one "
                                       "(B1 B2 B3 -- A1): fewer give no verdict, so the gate could never fail");
        const reports::Comparison c = reports::compareSetFiles(beforeFiles, afterFiles, co);
        emitPieces(o->output, [&](const reports::TextSink& sink) {
            reports::render(c, *reports::parseFormat(o->format), extras, sink);
        });
        result.exit_code = 0;
        if (o->fail_if_worse) {
            const auto bad = reports::regressionsBeyond(c, *o->fail_if_worse);
            for (const auto& line : bad)
                std::fprintf(stderr, "lockscope: regression: %s\n", line.c_str());
            if (!bad.empty())
                result.exit_code = 3;
        }
    });
}

} // namespace lockscope::cli
