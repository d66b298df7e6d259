// SPDX-License-Identifier: GPL-2.0-or-later
#include <cstdio>
#include <exception>
#include <string_view>

#include "commands.h"
#include "parse_errors.h"
#include "lockscope/util/huge_page_heap.h"

namespace {
// `compare B1 B2 -- A1 A2`: CLI11 drops the "--" that separates the two run
// sets, so the first "--" after the compare command becomes --patched. A
// trailing one stays: "--patched" with nothing after it would be CLI11's
// message about an option the user never typed, not compare's usage line.
void markCompareSets(int argc, char** argv)
{
    static char patched[] = "--patched";
    if (argc < 2 || std::string_view(argv[1]) != "compare")
        return;
    for (int j = 2; j < argc; ++j)
        if (std::string_view(argv[j]) == "--") {
            if (j + 1 < argc)
                argv[j] = patched;
            return;
        }
}

// Commands that load whole captures: their time is mostly filling fresh
// heap (huge_page_heap.h). record, agent and lab keep 4-KiB pages: they run
// beside the workload they measure, and their heaps are small.
bool loadsCaptures(int argc, char** argv)
{
    if (argc < 2)
        return false;
    const std::string_view cmd = argv[1];
    return cmd == "report" || cmd == "compare" || cmd == "export" || cmd == "convert" || cmd == "check" ||
           cmd == "info";
}

bool judging(int argc, char** argv)
{
    if (argc < 2 || std::string_view(argv[1]) != "compare")
        return false;
    for (int j = 2; j < argc; ++j)
        if (std::string_view(argv[j]) == "--judge" || std::string_view(argv[j]).rfind("--judge=", 0) == 0)
            return true;
    return false;
}
} // namespace

int main(int argc, char** argv)
{
    using namespace lockscope::cli;
    if (loadsCaptures(argc, argv))
        lockscope::useHugePageHeap(argv);
    CLI::App app{"lockscope: find, measure and compare Linux kernel lock contention"};
    app.require_subcommand(1);
    app.set_version_flag("--version", LOCKSCOPE_VERSION);
    Result result;
    addInfoCommand(app, result);
    addCheckCommand(app, result);
    addConvertCommand(app, result);
    addLabCommand(app, result);
    addReportCommand(app, result);
    addCompareCommand(app, result);
    addExportCommand(app, result);
    addImportCommand(app, result);
#ifdef LOCKSCOPE_HAVE_RECORD
    addRecordCommand(app, result);
    addAgentCommand(app, result);
#endif
    markCompareSets(argc, argv);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // A wrong flag or argument: one line, exit 2 (usage error); 128 for a
        // bisect judge, where 2 would mean "bad" to git bisect run.
        std::fprintf(stderr, "lockscope: %s\n", parseErrorLine(app, e, argc, argv).c_str());
        return judging(argc, argv) ? 128 : 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lockscope: %s\n", e.what());
        return 1;
    }
    return result.exit_code;
}
