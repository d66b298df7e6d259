// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture_encoding.h"
#include "capture_text.h"
#include "json_access.h"
#include "lockscope/capture/capture.h"

// JSON -> Capture: every field and cross-reference validated, the first
// problem thrown as CaptureError with its JSON path (internal to
// lockscope_capture: fromJson() and the SAX reader use it).
namespace lockscope::detail {

// The stack ids seen so far and their kind, for the references sites,
// holders and CPU samples make.
struct StackRefs {
    std::unordered_map<uint32_t, StackKind> kinds;

    void check(uint32_t id, const Path& at, std::optional<StackKind> want = std::nullopt) const
    {
        auto it = kinds.find(id);
        if (it == kinds.end())
            fail(at, "no stack with id " + std::to_string(id) + " in stacks");
        if (want && it->second != *want)
            fail(at,
                "stack " + std::to_string(id) + " is a " + toString(it->second) + " stack, expected a "
                    + toString(*want) + " stack");
    }
};

// Stacks and locks converted while parsing (see CaptureSax), so that their
// DOM, ~10x the text in nlohmann's representation, never exists all at once.
struct Streamed {
    bool stacks = false; // stacks were converted during parsing
    bool locks = false;
    bool symbols = false; // compact layout: enc.symbols was read during parsing
    Encoding enc;         // the layout the stacks and locks were converted with
    std::vector<Stack> stackList;
    std::vector<Lock> lockList;
    StackRefs refs;
    std::unordered_map<uint32_t, size_t> stackAt;
    std::unordered_map<std::string, size_t> lockAt;

    void addStack(const json& j, size_t i);
    void addLock(const json& j, size_t i);
};

// RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)), as
// meta.start_time must be when not empty.
bool isRfc3339(const std::string& s);

// Throws CaptureVersionError, with what the file holds, when doc's "format"
// or "version" is missing or not what this lockscope reads.
int checkFormatAndVersion(const json& doc); // the version read: 1 or kCaptureVersionCompact

// Converts doc, taking the stacks and locks already in streamed as they are.
Capture captureFromJson(const json& doc, Streamed& streamed);

// parseCapture() on text of its own, parsed in place (capture_text.h): the
// fast reader gives back the pages it has read; when it then declines the
// input, reload() gives the same bytes again for the reference reader.
Capture parseCaptureText(CaptureText&& text, const std::function<CaptureText()>& reload, const ReadLimits& limits);

} // namespace lockscope::detail
