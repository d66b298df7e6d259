// SPDX-License-Identifier: GPL-2.0-or-later
#include "parse_errors.h"

#include <string_view>
#include <vector>

namespace lockscope::cli {
namespace {

// The command the user ran, innermost first met (lab, then lab bisect).
const CLI::App& innermostCommand(const CLI::App& app)
{
    const CLI::App* at = &app;
    while (!at->get_subcommands().empty())
        at = at->get_subcommands().front();
    return *at;
}

std::string joined(const std::vector<std::string>& words, const char* separator = " ")
{
    std::string out;
    for (const auto& w : words)
        out += (out.empty() ? "" : separator) + w;
    return out;
}

std::string commandLine(const CLI::App& command)
{
    std::vector<std::string> names{"lockscope"};
    for (const CLI::App* at = &command; at->get_parent(); at = at->get_parent()) // the root is argv[0]
        names.insert(names.begin() + 1, at->get_name());
    return joined(names);
}

bool looksLikeOption(const std::string& word)
{
    return word.size() > 1 && word[0] == '-';
}

// Unexpected words, wherever CLI11 left them (after "--" a word the command
// has no room for is the root's), in command-line order; the "--" that
// introduces a workload is not one of them. An unknown option leaves its value behind
// too (`--port 80`): only the options are named then.
std::string unexpected(const CLI::App& app)
{
    std::vector<std::string> words, options;
    for (const auto& w : app.remaining(true))
        if (w != "--") {
            words.push_back(w);
            if (looksLikeOption(w))
                options.push_back(w);
        }
    if (!options.empty())
        return std::string("unknown option") + (options.size() > 1 ? "s " : " ") + joined(options);
    if (words.empty())
        return "unexpected arguments";
    return std::string("unexpected argument") + (words.size() > 1 ? "s " : " ") + joined(words);
}

std::string commandNames(const CLI::App& app)
{
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names.push_back(sub->get_name());
    return joined(names, ", ");
}

} // namespace

std::string parseErrorLine(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv)
{
    const CLI::App& command = innermostCommand(app);
    const std::string help = " (see " + commandLine(command) + " --help)";
    if (&command == &app) { // no command was recognised
        if (argc < 2)
            return "a command is required: " + commandNames(app) + help;
        const std::string_view word = argv[1];
        if (looksLikeOption(std::string(word)))
            return "unknown option " + std::string(word) + " before the command" + help;
        return "unknown command '" + std::string(word) + "': the commands are " + commandNames(app) + help;
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&error))
        return unexpected(app) + help;
    return error.what() + help;
}

} // namespace lockscope::cli
