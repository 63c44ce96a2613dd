// The report page is built from sim/report/assets/ (compiled in by
// sim/report/CMakeLists.txt): the page must carry those files as they are,
// with the report's title and data in the skeleton's two holes.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "report/html_report.hpp"
#include "support/e2e.hpp"

using namespace npusim::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using Catch::Matchers::EndsWith;

namespace {
const std::string kAssets = std::string(NPUSIM_SOURCE_DIR) + "/sim/report/assets";
}

TEST_CASE("report: the page is the assets' skeleton, style and script around the title and data", "[report]") {
    const std::string css = slurp(kAssets + "/report.css"), js = slurp(kAssets + "/report.js");
    REQUIRE(css.size() > 100);
    REQUIRE(js.size() > 1000);
    const std::string page = npusim::report::render_page("a<b & c", nlohmann::json{{"note", "</script>"}});
    CHECK_THAT(page, StartsWith("<!DOCTYPE html>\n"));
    CHECK_THAT(page, EndsWith("</html>\n"));
    CHECK_THAT(page, Contains("<style>\n" + css + "</style>\n"));
    CHECK_THAT(page, Contains("<script>\n" + js + "</script>\n"));
    CHECK_THAT(page, Contains("<title>a&lt;b &amp; c</title>"));
    // "</" in the data is written "<\/", so the data cannot close its element.
    CHECK_THAT(page, Contains(R"(id="data">{"note":"<\/script>"}</script>)"));
    CHECK_THAT(page, !Contains("{{"));
}

TEST_CASE("report: the page script parses (node --check, where node is installed)", "[report]") {
    if (std::system("command -v node >/dev/null 2>&1") != 0) {
        WARN("node is not installed: the page script's syntax is not checked");
        return;
    }
    TempDir tmp;
    const Result r = run_program(tmp, "node", {"--check", kAssets + "/report.js"});
    SHOW(r);
    CHECK(r.code == 0);
}
