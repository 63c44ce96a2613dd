// The HTML page of a report: the skeleton, styles and script of assets/
// (compiled in, see CMakeLists.txt) around the report's title and data. The
// script draws the data as SVG; everything is inline, so the file opens offline.
#include <string>

#include "report/html_report.hpp"
#include "report/report_assets.hpp"

namespace npusim::report {

namespace {

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

}  // namespace

std::string render_page(const std::string& title, const nlohmann::json& data) {
    // Inside <script>, "</" could end the element early; JSON allows "<\/".
    std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    for (std::size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3)) json.insert(at + 1, "\\");
    return kPageBeforeTitle + html_escape(title) + kPageBeforeData + json + kPageEnd;
}

}  // namespace npusim::report
