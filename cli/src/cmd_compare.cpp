// SPDX-License-Identifier: GPL-2.0-or-later
#include <cstdio>
#include <memory>

#include "commands.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/input.h"
#include "lockscope/reports/render.h"
#include "output.h"

namespace lockscope::cli {

void addCompareCommand(CLI::App& app, Result& result)
{
    struct Opts {
        std::string before, after, format = "text", output;
        double threshold = 0.0, alpha = 0.01, min_effect = 5.0;
        std::optional<double> fail_if_worse;
        std::vector<std::string> scaling;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand("compare", "Compare a baseline capture with a patched one (locks matched by key)");
    cmd->add_option("before", o->before, "baseline capture")->required();
    cmd->add_option("after", o->after, "patched capture")->required();
    cmd->add_option("--format", o->format, "text, md, html or json")
        ->check(CLI::IsMember({"text", "md", "markdown", "html", "json"}));
    cmd->add_option("--threshold", o->threshold, "hide locks whose total wait changed by less than PCT percent")
        ->check(CLI::Range(0.0, 1e9));
    cmd->add_option("--fail-if-worse", o->fail_if_worse,
                    "exit 3 when a significant regression of at least PCT percent is found (CI gate)")
        ->check(CLI::Range(0.0, 1e9));
    cmd->add_option("--alpha", o->alpha, "significance level (default 0.01)")->check(CLI::Range(1e-12, 0.5));
    cmd->add_option("--min-effect", o->min_effect, "changes under PCT percent are never significant (default 5)")
        ->check(CLI::Range(0.0, 1e9));
    cmd->add_option("--scaling", o->scaling, "scaling results JSON to show beside the comparison");
    cmd->add_option("-o,--output", o->output, "write to this file instead of stdout");
    cmd->callback([o, &result]() {
        const auto [before, after] = reports::loadPair(o->before, o->after);
        reports::CompareOptions co;
        co.threshold_pct = o->threshold;
        co.alpha = o->alpha;
        co.min_effect_pct = o->min_effect;
        reports::RenderExtras extras;
        for (const auto& path : o->scaling)
            for (auto& chart : reports::readScalingFile(path))
                extras.scaling.push_back(std::move(chart));
        const reports::Comparison c = reports::compare(before, after, co);
        emit(reports::render(c, *reports::parseFormat(o->format), extras), o->output);
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
