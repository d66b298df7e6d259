// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/render.h"

#include <map>
#include <set>

#include "format_util.h"
#include "render_internal.h"

namespace lockscope::reports {

std::optional<Format> parseFormat(std::string_view name)
{
    if (name == "text")
        return Format::Text;
    if (name == "md" || name == "markdown")
        return Format::Markdown;
    if (name == "html")
        return Format::Html;
    if (name == "json")
        return Format::Json;
    return std::nullopt;
}

const char* toString(Format f) noexcept
{
    switch (f) {
    case Format::Text: return "text";
    case Format::Markdown: return "md";
    case Format::Html: return "html";
    case Format::Json: return "json";
    }
    return "?";
}

void render(const Report& report, Format format, const RenderExtras& extras, const TextSink& sink)
{
    switch (format) {
    case Format::Text: sink(fmt::terminalText(detail::textReport(report, extras))); return;
    case Format::Markdown: sink(detail::markdownReport(report, extras)); return;
    case Format::Html: sink(detail::htmlReport(report, extras)); return;
    case Format::Json: detail::jsonReport(report, extras, sink); return;
    }
}

void render(const Comparison& comparison, Format format, const RenderExtras& extras, const TextSink& sink)
{
    switch (format) {
    case Format::Text: sink(fmt::terminalText(detail::textComparison(comparison, extras))); return;
    case Format::Markdown: sink(detail::markdownComparison(comparison, extras)); return;
    case Format::Html: sink(detail::htmlComparison(comparison, extras)); return;
    case Format::Json: detail::jsonComparison(comparison, extras, sink); return;
    }
}

std::string render(const Report& report, Format format, const RenderExtras& extras)
{
    std::string out;
    render(report, format, extras, [&](std::string_view piece) { out += piece; });
    return out;
}

std::string render(const Comparison& comparison, Format format, const RenderExtras& extras)
{
    std::string out;
    render(comparison, format, extras, [&](std::string_view piece) { out += piece; });
    return out;
}

std::string detail::scalingTable(const std::vector<ScalingChart>& charts, bool md)
{
    std::string out;
    for (const auto& chart : charts) {
        std::set<double> xs;
        for (const auto& s : chart.series)
            for (const auto& p : s.points)
                xs.insert(p.x);
        out += md ? "\n**Scaling: " + fmt::mdEscape(chart.title) + "** (" + chart.y_label + ")\n\n"
                  : "\nscaling: " + chart.title + " (" + chart.y_label + ")\n";
        std::vector<std::string> header{chart.x_label};
        for (const auto& s : chart.series)
            header.push_back(s.name);
        std::vector<std::vector<std::string>> rows;
        for (double x : xs) {
            std::vector<std::string> row{fmt::number(x)};
            for (const auto& s : chart.series) {
                std::string cell = "-";
                for (const auto& p : s.points)
                    if (p.x == x)
                        cell = fmt::number(p.y);
                row.push_back(cell);
            }
            rows.push_back(std::move(row));
        }
        if (md) {
            out += "|";
            for (const auto& h : header)
                out += " " + fmt::mdEscape(h) + " |";
            out += "\n|";
            for (size_t i = 0; i < header.size(); ++i)
                out += i ? "---:|" : "---:|";
            out += "\n";
            for (const auto& row : rows) {
                out += "|";
                for (const auto& cell : row)
                    out += " " + cell + " |";
                out += "\n";
            }
        } else {
            std::vector<size_t> w(header.size());
            for (size_t i = 0; i < header.size(); ++i) {
                w[i] = header[i].size();
                for (const auto& row : rows)
                    w[i] = std::max(w[i], row[i].size());
            }
            for (size_t i = 0; i < header.size(); ++i)
                out += "  " + fmt::padLeft(header[i], w[i]);
            out += "\n";
            for (const auto& row : rows) {
                for (size_t i = 0; i < row.size(); ++i)
                    out += "  " + fmt::padLeft(row[i], w[i]);
                out += "\n";
            }
        }
    }
    return out;
}

} // namespace lockscope::reports
