// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "lockscope/capture/capture.h"
#include "lockscope/reports/compare.h"

namespace lockscope::reports::test {

std::string fixture(const std::string& name);   // core/capture/tests/fixtures/<name>
std::string testdata(const std::string& name);  // reports/tests/<name>
std::string artifactDir();                      // build dir, created on demand
std::string readFile(const std::string& path);
void writeFile(const std::string& path, const std::string& text);

// A lock with n waits of `wait_ns` each (plus an optional spread) on one stack.
Lock makeLock(const std::string& key, uint32_t stack, uint64_t n, uint64_t wait_ns, uint64_t seed = 1);
Stack makeStack(uint32_t id, std::initializer_list<const char*> innermostFirst, uint64_t offsetBase = 0);

// A capture whose every name (label, lock key, name, type, cgroup, frame,
// module, owner comm) holds bytes that are not UTF-8 ("\xff", a cut
// sequence): a task names itself, a cgroup directory is any bytes. Holders
// on its one lock, so the holder-side exports have samples.
Capture notUtf8Capture();

// The comparison row of a lock key; throws when there is none.
const LockDelta& findLock(const Comparison& c, const std::string& key);

// Runs a shell command, returns exit status; output captured in *out (stdout+stderr).
int run(const std::string& cmd, std::string* out);

// Compares text with a golden file; on mismatch writes <golden>.actual and
// returns a diff as the failure message. LOCKSCOPE_UPDATE_GOLDEN=1 rewrites.
std::string checkGolden(const std::string& goldenName, const std::string& actual);

// The reports' JSON layout made from a DOM, the reference the streaming
// writer (reports/src/json_text.h) is checked against: dump(2)'s, except
// that an array or object holding only scalars (or nothing) is one line.
std::string jsonLayout(const nlohmann::json& v);

} // namespace lockscope::reports::test
