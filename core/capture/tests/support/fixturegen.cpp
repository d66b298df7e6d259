// SPDX-License-Identifier: GPL-2.0-or-later
// Writes the checked-in fixture pair; fixtures_test checks they are current.
#include <cstdio>
#include <string>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
        return 2;
    }
    using namespace lockscope;
    const std::string dir = argv[1];
    try {
        writeCapture(testing::makeSemopCapture(testing::SemopScenario::Baseline),
            dir + "/baseline.lockscope.json", true);
        writeCapture(testing::makeSemopCapture(testing::SemopScenario::Patched),
            dir + "/patched.lockscope.json", true);
    } catch (const CaptureError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
