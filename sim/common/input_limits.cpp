#include "common/input_limits.hpp"

namespace npusim {

std::size_t json_too_deep_at(std::string_view text, std::size_t max_depth) {
    std::size_t depth = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '[' || c == '{') {
            if (++depth > max_depth) return i;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return std::string_view::npos;
}

std::string line_col(const std::string& text, std::size_t off) {
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < off && i < text.size(); ++i)
        if (text[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
    return std::to_string(line) + ":" + std::to_string(off - line_start + 1);
}

std::string parse_error_reason(const std::string& what) {
    std::string r = what;
    const auto p = r.find("parse error");
    if (p != std::string::npos) {
        const auto colon = r.find(": ", p);
        if (colon != std::string::npos) r = r.substr(colon + 2);
    }
    const std::string noise = "syntax error while parsing ";
    if (r.compare(0, noise.size(), noise) == 0) r = r.substr(noise.size());
    return r;
}

bool read_bounded(std::istream& in, std::string& out, std::size_t limit) {
    out.clear();
    char buf[1 << 16];
    while (in) {
        in.read(buf, sizeof buf);
        const auto n = static_cast<std::size_t>(in.gcount());
        if (out.size() + n > limit) {
            out.append(buf, limit + 1 - out.size());
            return false;
        }
        out.append(buf, n);
    }
    return true;
}

bool getline_bounded(std::istream& in, std::string& line, std::size_t limit, bool& too_long) {
    line.clear();
    too_long = false;
    char buf[1 << 16];
    bool any = false;
    for (;;) {
        in.getline(buf, sizeof buf);
        const auto n = static_cast<std::size_t>(in.gcount());
        if (in.eof()) {  // last line, no newline: n bytes stored
            line.append(buf, n);
            return any || n > 0;
        }
        if (in.fail()) {  // buffer full, the line goes on
            in.clear();
            line.append(buf, n);
            any = true;
            if (line.size() > limit) {
                too_long = true;
                return true;
            }
            continue;
        }
        line.append(buf, n - 1);  // n counts the newline, which is not stored
        if (line.size() > limit) too_long = true;
        return true;
    }
}

}  // namespace npusim
