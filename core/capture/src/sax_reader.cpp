// SPDX-License-Identifier: GPL-2.0-or-later
// parseCaptureReference(): text -> Capture through nlohmann's SAX parser and a
// handler that converts the big arrays while parsing, so that a large
// capture's DOM never exists whole. The reference reader: parseCapture()
// (fast_reader.cpp) gives it every input the fast reader declines, so its
// messages are the errors users see; tests and the bench compare against it.
#include "lockscope/capture/io.h"

#include <string>
#include <utility>
#include <vector>

#include "capture_reader.h"
#include "zstd_text.h"
#include "lockscope/util/error_text.h"

namespace lockscope {
namespace {

using detail::checkFormatAndVersion;
using detail::fail;
using detail::json;
using detail::kRoot;
using detail::Streamed;

// Thrown from the SAX handler to stop before a deep document is built.
struct TooDeep { };

// Builds the DOM like nlohmann's own SAX DOM builder, with three differences:
// nesting is refused beyond max_depth as soon as a container opens; a file
// whose "format" and "version" are both seen and not what this lockscope
// reads stops there (CaptureVersionError), rather than after building the
// whole DOM of a file it cannot stream; and once
// "format"/"version" have been seen and are right, each element of the
// top-level "stacks" and "locks" arrays is validated and converted as soon as
// it closes (in the compact layout once "symbols" has been read), then
// dropped from the DOM. Documents in another order (hand written) simply
// keep their DOM and are validated at the end.
class CaptureSax {
public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    CaptureSax(unsigned maxDepth, Streamed& streamed)
        : maxDepth_(maxDepth)
        , streamed_(streamed)
    {
    }

    json& root() { return root_; }

    bool null() { return value(json(nullptr)); }
    bool boolean(bool v) { return value(json(v)); }
    bool number_integer(number_integer_t v) { return value(json(v)); }
    bool number_unsigned(number_unsigned_t v) { return value(json(v)); }
    bool number_float(number_float_t v, const string_t&) { return value(json(v)); }
    bool string(string_t& v) { return value(json(std::move(v))); }
    bool binary(binary_t& v) { return value(json::binary(std::move(v))); }
    bool key(string_t& k)
    {
        key_ = std::move(k);
        return true;
    }
    bool start_object(std::size_t) { return open(json::object()); }
    bool start_array(std::size_t) { return open(json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    template <class Exception> bool parse_error(std::size_t, const std::string&, const Exception& ex)
    {
        throw ex;
    }

private:
    enum class Section { Other, Symbols, Stacks, Locks };

    json* place(json&& v)
    {
        if (open_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        json& top = *open_.back();
        if (top.is_array()) {
            top.push_back(std::move(v));
            return &top.back();
        }
        json& slot = top[key_];
        slot = std::move(v);
        return &slot;
    }

    bool value(json&& v)
    {
        if (open_.size() == 1 && open_.back()->is_object()) {
            if (key_ == "format" || key_ == "version") {
                if (key_ == "format")
                    formatOk_ = v.is_string() && v.get_ref<const std::string&>() == kCaptureFormat;
                else
                    version(v);
                header_[key_] = v;
                if (header_.size() == 2 && !(formatOk_ && versionOk_))
                    checkFormatAndVersion(header_); // throws: another tool's file or version
            }
        }
        place(std::move(v));
        if (open_.size() == 2 && streaming())
            convertLast(); // a scalar where a stack or lock should be: let the converter say so
        return true;
    }

    // The layout decides how stacks and locks are converted: one version only.
    void version(const json& v)
    {
        if (seenVersion_)
            fail(kRoot / "version", "appears twice in the document");
        seenVersion_ = true;
        const uint64_t n = v.is_number_unsigned() ? v.get<uint64_t>() : 0;
        versionOk_ = n == static_cast<uint64_t>(kCaptureVersion)
            || n == static_cast<uint64_t>(kCaptureVersionCompact);
        streamed_.enc.compact = n == static_cast<uint64_t>(kCaptureVersionCompact);
    }

    bool streaming() const { return section_ == Section::Stacks || section_ == Section::Locks; }

    void convertLast()
    {
        json& array = *open_.back();
        if (section_ == Section::Stacks)
            streamed_.addStack(array.back(), converted_);
        else
            streamed_.addLock(array.back(), converted_);
        ++converted_;
        array.get_ref<json::array_t&>().pop_back();
    }

    bool open(json&& container)
    {
        if (open_.size() >= maxDepth_)
            throw TooDeep {};
        const bool array = container.is_array();
        if (open_.size() == 1 && open_.back()->is_object() && array) {
            section_ = Section::Other;
            if (key_ == "symbols") {
                if (seenSymbols_)
                    fail(kRoot / "symbols", "appears twice in the document");
                seenSymbols_ = true;
                section_ = Section::Symbols;
            } else if (key_ == "stacks" || key_ == "locks") {
                const bool isStacks = key_ == "stacks";
                bool& done = isStacks ? streamed_.stacks : streamed_.locks;
                bool& seen = isStacks ? seenStacks_ : seenLocks_;
                if (seen) // a second "stacks" member: refuse rather than guess which one counts
                    fail(kRoot / (isStacks ? "stacks" : "locks"), "appears twice in the document");
                seen = true;
                // Locks are only converted when every stack is known, for their references.
                const bool symbolsKnown = !streamed_.enc.compact || streamed_.symbols;
                if (formatOk_ && versionOk_ && symbolsKnown && (isStacks || stacksClosed_)) {
                    section_ = isStacks ? Section::Stacks : Section::Locks;
                    done = true;
                    converted_ = 0;
                }
            }
        }
        open_.push_back(place(std::move(container)));
        return true;
    }

    bool close()
    {
        open_.pop_back();
        if (open_.size() == 2 && streaming()) {
            convertLast();
        } else if (open_.size() == 1) {
            if (section_ == Section::Stacks)
                stacksClosed_ = true;
            if (section_ == Section::Symbols && formatOk_ && versionOk_ && streamed_.enc.compact) {
                const json& symbols = root_["symbols"];
                streamed_.enc.symbols = detail::symbolsFromJson(symbols, kRoot / "symbols");
                streamed_.symbols = true;
            }
            section_ = Section::Other;
        }
        return true;
    }

    const size_t maxDepth_;
    Streamed& streamed_;
    json root_;
    std::vector<json*> open_;
    std::string key_;
    json header_ = json::object(); // "format" and "version" as seen so far
    bool formatOk_ = false;
    bool versionOk_ = false;
    bool stacksClosed_ = false;
    bool seenStacks_ = false;
    bool seenLocks_ = false;
    bool seenSymbols_ = false;
    bool seenVersion_ = false;
    Section section_ = Section::Other;
    size_t converted_ = 0;
};

} // namespace

Capture parseCaptureReference(std::string_view text, const ReadLimits& limits)
{
    if (detail::isZstd(text)) // *.lockscope.json.zst, or any capture compressed by hand
        return parseCaptureReference(detail::zstdDecompress(text, limits.max_file_bytes).view(), limits);
    if (text.size() > limits.max_file_bytes)
        throw CaptureError("input is " + std::to_string(text.size()) + " bytes, larger than the limit of "
            + std::to_string(limits.max_file_bytes) + " bytes");
    bool blank = true;
    for (char ch : text)
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') {
            blank = false;
            break;
        }
    if (blank)
        throw CaptureError("empty input: expected a lockscope capture (JSON)");

    Streamed streamed;
    CaptureSax sax(limits.max_depth, streamed);
    try {
        json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, /*strict=*/true,
            /*ignore_comments=*/false);
    } catch (const TooDeep&) {
        throw CaptureError("JSON nested deeper than " + std::to_string(limits.max_depth)
            + " levels: not a lockscope capture (the format needs fewer than 10)");
    } catch (const json::exception& e) {
        // e.what() is "[json.exception.parse_error.N] parse error at line L, column C: detail".
        std::string what = e.what();
        const auto pos = what.find("] ");
        if (what.starts_with("[json.exception.") && pos != std::string::npos)
            what = what.substr(pos + 2);
        throw CaptureError("invalid JSON (" + util::printable(what, 200) + ")");
    }
    return captureFromJson(sax.root(), streamed);
}

} // namespace lockscope
