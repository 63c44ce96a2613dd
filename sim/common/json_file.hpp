// The one reader of JSON input files (chip files, workload files, graphs,
// studies, goldens, task-stream lines): bounded size and depth
// (common/input_limits.hpp), duplicate keys rejected, and every syntax error
// one line "FILE:LINE:COL: what was expected", thrown as InputError (exit 2).
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "common/input_limits.hpp"

namespace npusim {

// What the caller expects of the file, for the checks and the messages.
struct JsonFileSpec {
    std::string what = "JSON file";  // "chip file": "cannot open chip file", "... of the chip file"
    bool object = true;              // the top level must be an object
    std::size_t max_bytes = kMaxJsonFileBytes;
    std::string note;  // appended to messages about the whole file, e.g. " (extended by a.json)"
};

// Reads and parses FILE. Instantiated for nlohmann::json and
// nlohmann::ordered_json (key order kept: study axes, golden rows, graphs).
template <class Json>
Json read_json_file(const std::string& file, const JsonFileSpec& spec = {});

// The same for text already in memory; `file` is only used in messages.
template <class Json>
Json parse_json_text(const std::string& text, const std::string& file, const JsonFileSpec& spec = {});

// One line of a JSON Lines file (a task stream): positions are FILE:LINE:COL
// with LINE = `line`. Any JSON value is accepted; blank lines are the caller's.
nlohmann::json parse_json_line(const std::string& text, const std::string& file, std::size_t line);

// "an object", "a list", "a string", "a number", "a boolean", "null": for
// "expected ..., got ..." messages.
template <class Json>
std::string json_kind(const Json& v);

}  // namespace npusim
