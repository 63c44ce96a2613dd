// Guards every reader of user files applies before it parses or allocates
// (docs/robustness.md): bounded reads (a chip file named /dev/zero must not
// fill the memory), a nesting limit for JSON (deep documents overflow the
// stack in nlohmann's recursive copies, comparisons and dumps, and make
// path-tracking readers quadratic). common/json_file.hpp applies them to
// every JSON file and also rejects a key repeated in one object.
#pragma once
#include <cstddef>
#include <istream>
#include <string>
#include <string_view>

namespace npusim {

// Deepest nesting of arrays and objects any input file may have; real chip,
// workload, graph, stream, study and golden files stay below 8.
constexpr std::size_t kMaxJsonDepth = 64;

// Largest JSON file read whole (chip, workload, study, golden files); model
// graphs have their own, larger limit (compiler/graph_reader.hpp).
constexpr std::size_t kMaxJsonFileBytes = std::size_t(64) << 20;

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

}  // namespace npusim
