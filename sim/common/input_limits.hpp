// Guards every reader of user files applies before it parses or allocates
// (docs/robustness.md): bounded reads (a chip file named /dev/zero must not
// fill the memory), a nesting limit for JSON (deep documents overflow the
// stack in nlohmann's recursive copies, comparisons and dumps, and make
// path-tracking readers quadratic), and rejection of a key repeated in one
// JSON object (the parser would silently keep the last value).
#pragma once
#include <cstddef>
#include <istream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim {

// Deepest nesting of arrays and objects any input file may have; real chip,
// workload, graph, stream, study and golden files stay below 8.
constexpr std::size_t kMaxJsonDepth = 64;

// Offset of the first '[' or '{' (outside strings) nested deeper than
// max_depth, or npos.
std::size_t json_too_deep_at(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

// "LINE:COL" (1-based) of byte offset `off` in `text`, for JSON errors.
std::string line_col(const std::string& text, std::size_t off);
// nlohmann's parse_error message without its own position prefix.
std::string parse_error_reason(const std::string& what);

// Reads the whole stream into `out`. Returns false, having read at most
// limit + 1 bytes, when there is more than `limit`.
bool read_bounded(std::istream& in, std::string& out, std::size_t limit);

// std::getline that stops at `limit` bytes: returns false at the end of input;
// sets `too_long` (and returns true) when the line has more than `limit` bytes.
bool getline_bounded(std::istream& in, std::string& line, std::size_t limit, bool& too_long);

// Thrown by the callback of reject_duplicate_keys(): `path` is the object
// holding the key ("" for the top level, "cores.cube", "params.reads[0]").
struct DuplicateJsonKey : std::runtime_error {
    DuplicateJsonKey(std::string p, std::string k)
        : std::runtime_error("duplicate key '" + k + "'"), path(std::move(p)), key(std::move(k)) {}
    std::string path, key;
};

// A parser callback for Json::parse(text, callback) that throws
// DuplicateJsonKey when an object repeats a key.
template <class Json>
typename Json::parser_callback_t reject_duplicate_keys() {
    struct Frame {
        bool object = false;
        std::string key;         // current key (objects)
        std::size_t index = 0;   // current element (arrays)
        std::set<std::string> keys;
    };
    auto frames = std::make_shared<std::vector<Frame>>();
    return [frames](int, nlohmann::json::parse_event_t ev, Json& parsed) -> bool {
        using E = nlohmann::json::parse_event_t;
        auto& fs = *frames;
        switch (ev) {
            case E::object_start:
            case E::array_start:
                fs.emplace_back();
                fs.back().object = ev == E::object_start;
                break;
            case E::object_end:
            case E::array_end:
                if (!fs.empty()) fs.pop_back();
                if (!fs.empty() && !fs.back().object) ++fs.back().index;
                break;
            case E::key: {
                std::string k = parsed.template get<std::string>();
                Frame& f = fs.back();
                if (!f.keys.insert(k).second) {
                    std::string path;
                    for (std::size_t i = 0; i + 1 < fs.size(); ++i) {
                        if (fs[i].object) path += (path.empty() ? "" : ".") + fs[i].key;
                        else path += "[" + std::to_string(fs[i].index) + "]";
                    }
                    throw DuplicateJsonKey(path, std::move(k));
                }
                f.key = std::move(k);
                break;
            }
            case E::value:
                if (!fs.empty() && !fs.back().object) ++fs.back().index;
                break;
        }
        return true;
    };
}

}  // namespace npusim
