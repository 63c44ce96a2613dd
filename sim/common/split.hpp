// Splits text at every separator, keeping empty parts ("a..b" -> a, "", b)
// so callers can report them.
#pragma once
#include <string>
#include <vector>

namespace npusim {

inline std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const auto at = s.find(sep, start);
        parts.push_back(s.substr(start, at - start));
        if (at == std::string::npos) return parts;
        start = at + 1;
    }
}

}  // namespace npusim
