// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lockscope/capture/capture.h"

// One interface for everything that converts captures to other tools'
// formats (folded stacks, pprof, speedscope) and back from them (perf
// script text, /proc/lock_stat).
namespace lockscope::reports {

// Acquire: time spent spinning in the lock call (record --hold; Lock::acquire).
enum class Weight { Wait, Hold, Count, Acquire };

struct ExportOptions {
    Weight weight = Weight::Wait;     // folded/speedscope; pprof carries every one the capture has
};

class Exporter {
public:
    virtual ~Exporter() = default;
    virtual std::string_view name() const noexcept = 0;        // "folded", "pprof", "speedscope"
    virtual std::string_view extension() const noexcept = 0;   // ".folded", ".pb.gz", ".speedscope.json"
    virtual bool binary() const noexcept = 0;
    virtual std::string write(const Capture& capture, const ExportOptions& options) const = 0;
};

// Bad input for an importer: what() is one line "<source>:<line>: <problem>".
class ImportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Importer {
public:
    virtual ~Importer() = default;
    virtual std::string_view name() const noexcept = 0;        // "perf-script", "lock-stat"
    // source names the input in error messages (a path or "<stdin>").
    virtual Capture read(std::string_view text, const std::string& source) const = 0;
};

const std::vector<const Exporter*>& exporters();
const std::vector<const Importer*>& importers();
const Exporter* findExporter(std::string_view name) noexcept;
const Importer* findImporter(std::string_view name) noexcept;

std::optional<Weight> parseWeight(std::string_view name);

} // namespace lockscope::reports
