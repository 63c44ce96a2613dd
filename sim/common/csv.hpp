// CSV fields as RFC 4180 writes them.
#pragma once
#include <string>

namespace npusim {

// A field in quotes, its quotes doubled (names from a graph may hold commas).
inline std::string csv_quoted(const std::string& s) {
    std::string q = "\"";
    for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

}  // namespace npusim
