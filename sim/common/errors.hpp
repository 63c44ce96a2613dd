// Error types that map to the CLI's exit codes (docs/design.md §4.1).
#pragma once
#include <cstdio>
#include <stdexcept>
#include <string>

namespace npusim {

// A message on one line: control characters that came from the input (a key
// "a\nb" decoded from JSON, a file name) are shown as escapes, so an error is
// always one line an editor or a CI log can point at.
inline std::string one_line(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u != 0x7f) {
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            out += hex;
        }
    }
    return out;
}

// Bad user input: a file, JSON position or key path, what was expected. Exit 2.
// The message is kept on one line (one_line).
struct InputError : std::runtime_error {
    explicit InputError(const std::string& what) : std::runtime_error(one_line(what)) {}
    explicit InputError(const char* what) : InputError(std::string(what)) {}
};

// The simulation can never finish: names a waiting task and its event. Exit 3.
struct DeadlockError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A check or regression failed. Exit 1.
struct CheckFailed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace npusim
