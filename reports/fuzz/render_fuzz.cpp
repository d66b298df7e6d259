// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target for one renderer or exporter (LOCKSCOPE_FUZZ_RENDERER:
// text, md, html, json, folded, pprof, pprof-holders, speedscope) over any capture the
// reader accepts, as a report and as a comparison of the capture with itself. Besides not crashing, the text formats must hold their escaping
// promises (format_util.h): no control character but newline in terminal
// text or Markdown, one "frames weight" line per folded stack; JSON must
// parse (its writer lays lines out again as it goes: json_text.h).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/exchange.h"
#include "lockscope/reports/render.h"
#include "lockscope/reports/report.h"

namespace {

void requireNoControls(const std::string& s)
{
    for (char c : s)
        if (const auto ch = static_cast<unsigned char>(c); (ch < 0x20 && ch != '\n') || ch == 0x7f)
            std::abort();
}

void requireFoldedLines(const std::string& s)
{
    size_t begin = 0;
    while (begin < s.size()) {
        const size_t end = s.find('\n', begin);
        if (end == std::string::npos)
            std::abort(); // every line ends in a newline
        const std::string_view line(s.data() + begin, end - begin);
        const size_t space = line.rfind(' ');
        if (space == std::string_view::npos || space + 1 == line.size() ||
            line.find_first_not_of("0123456789", space + 1) != std::string_view::npos)
            std::abort();
        begin = end + 1;
    }
    requireNoControls(s);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace lockscope;
    Capture c;
    try {
        c = parseCapture(std::string_view(reinterpret_cast<const char*>(data), size));
    } catch (const CaptureError&) {
        return 0;
    }
    const std::string_view name = LOCKSCOPE_FUZZ_RENDERER;
    if (const auto format = reports::parseFormat(name)) {
        const std::string report = reports::render(reports::buildReport(c), *format);
        const std::string comparison = reports::render(reports::compare(c, c), *format);
        if (*format == reports::Format::Text || *format == reports::Format::Markdown) {
            requireNoControls(report);
            requireNoControls(comparison);
        }
        if (*format == reports::Format::Json && !(nlohmann::json::accept(report) && nlohmann::json::accept(comparison)))
            std::abort();
        return 0;
    }
    const reports::Exporter* e = reports::findExporter(name);
    if (!e)
        std::abort();
    for (auto w : {reports::Weight::Wait, reports::Weight::Hold, reports::Weight::Count}) {
        const std::string out = e->write(c, reports::ExportOptions{w});
        if (name == "folded")
            requireFoldedLines(out);
    }
    return 0;
}
