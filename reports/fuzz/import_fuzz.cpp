// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target for one importer (LOCKSCOPE_FUZZ_IMPORTER names it): any
// text gives a Capture or an ImportError of one line, and what is accepted is
// a valid capture (the capture reader takes it back unchanged) that every
// renderer can print.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lockscope/capture/io.h"
#include "lockscope/reports/exchange.h"
#include "lockscope/reports/render.h"
#include "lockscope/reports/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace lockscope;
    static const reports::Importer* importer = reports::findImporter(LOCKSCOPE_FUZZ_IMPORTER);
    if (!importer)
        std::abort();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    Capture c;
    try {
        c = importer->read(text, "fuzz");
    } catch (const reports::ImportError& e) {
        if (std::string_view(e.what()).find('\n') != std::string_view::npos)
            std::abort(); // an error is one line
        return 0;
    }
    if (!(parseCapture(toJson(c).dump()) == c))
        std::abort();
    const reports::Report r = reports::buildReport(c);
    for (auto f : {reports::Format::Text, reports::Format::Markdown, reports::Format::Html, reports::Format::Json})
        (void)reports::render(r, f);
    return 0;
}
