// The HTML page of a report: the skeleton, styles and script of assets/
// (compiled in, see CMakeLists.txt) around the report's title and data. The
// script draws the data as SVG; everything is inline, so the file opens offline.
#include <string>

#include "report/html_report.hpp"
#include "report/report_assets.hpp"

#include "common/markup_escape.hpp"

namespace npusim::report {

std::string render_page(const std::string& title, const nlohmann::json& data) {
    // Inside <script>, "</" could end the element early; JSON allows "<\/".
    std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    for (std::size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3)) json.insert(at + 1, "\\");
    return kPageBeforeTitle + escape_markup(title, Markup::html) + kPageBeforeData + json + kPageEnd;
}

}  // namespace npusim::report
