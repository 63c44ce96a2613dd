#include "common/markup_escape.hpp"

namespace npusim {

std::string escape_markup(const std::string& s, Markup m) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'':
                out += m == Markup::xml ? "&apos;" : "'";
                break;
            default:
                if (m == Markup::xml && static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';
                else out += c;
        }
    }
    return out;
}

}  // namespace npusim
