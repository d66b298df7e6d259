// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/reports/compare.h"

// Capture loading for the report/compare front ends, with the one-line
// errors users need (empty file, mismatched format versions).
namespace lockscope::reports {

// readCapture() plus a clearer message for an empty file. Throws CaptureError.
Capture loadCapture(const std::string& path);

// Both captures of a comparison. When one fails to load because the two
// were written in different capture format versions, the error says so
// (from readCapture's CaptureVersionError: no file is read twice).
std::pair<Capture, Capture> loadPair(const std::string& before, const std::string& after);

// The capture files a compare argument names: the file itself, or every
// *.lockscope.json directly inside a directory (sorted by name). Throws
// CaptureError for a directory without captures.
std::vector<std::string> expandCaptureArgs(const std::vector<std::string>& args);

// Two run sets; a file refused for its format version is named together with
// a file of the comparison in another version, as in loadPair.
std::pair<std::vector<Capture>, std::vector<Capture>> loadSets(const std::vector<std::string>& before,
                                                               const std::vector<std::string>& after);

// compareSets of two run sets read from files, each run folded into its
// side's pool as it is read (on loadSets' threads, in argument order): memory
// holds the pools and each run's per-run figures, not every file's capture.
// Errors as loadSets.
Comparison compareSetFiles(const std::vector<std::string>& before, const std::vector<std::string>& after,
                           const CompareOptions& options = {});

} // namespace lockscope::reports
