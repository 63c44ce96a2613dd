// The run and sweep reports rendered by a real browser (headless Chromium,
// Debian package `chromium`): the page's script runs without an error, the
// page fits 1400 px without scrolling sideways, and the sections a user
// looks for are drawn. A probe script is put into a copy of each report: it
// records script errors and, once the page is drawn, writes what it
// measured into the DOM, which --dump-dom prints.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/e2e.hpp"

using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json", kA2 = kSrc + "/configs/chips/a2.json";

bool have_chromium() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

const char* kProbeHead =
    R"(<script>window.__errors=[];window.addEventListener("error",function(e){window.__errors.push(String(e.message));});</script>)";
// After the page's own script: errors, widths, and the texts drawn.
const char* kProbeEnd = R"(<script>(function(){
var wide=[];document.querySelectorAll("body *").forEach(function(e){
  var o=getComputedStyle(e).overflowX;if(o!=="visible"&&e.scrollWidth>e.clientWidth+1)wide.push(e.tagName+"."+e.className);});
var charts={},tips=[];document.querySelectorAll("svg[aria-label]").forEach(function(svg){
  charts[svg.getAttribute("aria-label")]=Array.prototype.map.call(svg.querySelectorAll("text"),function(t){return t.textContent;});
  svg.querySelectorAll("title").forEach(function(t){tips.push(t.textContent);});});
var p=document.createElement("pre");p.id="probe";
p.textContent=JSON.stringify({errors:window.__errors,scroll_width:document.documentElement.scrollWidth,
  client_width:document.documentElement.clientWidth,wide:wide,charts:charts,tips:tips,
  headings:Array.prototype.map.call(document.querySelectorAll("h2"),function(h){return h.textContent;}),
  text:document.body.innerText});
document.body.appendChild(p);})();</script>)";

// Renders `report` at 1400 px (with `hash` after its address) and returns
// what the probe measured.
json render(const TempDir& tmp, const std::string& report, const std::string& hash = "") {
    std::string page = slurp(report);
    REQUIRE(page.find("<head>") != std::string::npos);
    page.replace(page.find("<head>"), 6, std::string("<head>") + kProbeHead);
    page.replace(page.rfind("</body>"), 7, std::string(kProbeEnd) + "</body>");
    const std::string probe = tmp.write("probe.html", page);
    const Result r = run_program(tmp, "timeout 120 chromium",
                                 {"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                  "--user-data-dir=" + tmp.path("chromium-profile"), "--window-size=1400,1000",
                                  "--virtual-time-budget=5000", "--dump-dom", "file://" + probe + hash});
    INFO("chromium exit " << r.code << "\nstderr:\n" << r.err.substr(0, 2000));
    REQUIRE(r.code == 0);
    const std::string open = "<pre id=\"probe\">";
    const auto at = r.out.find(open);
    REQUIRE(at != std::string::npos);
    std::string text = r.out.substr(at + open.size(), r.out.find("</pre>", at) - at - open.size());
    // --dump-dom escapes &, < and > in the text.
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
        for (std::size_t i = text.find(from); i != std::string::npos; i = text.find(from, i + to.size()))
            text.replace(i, from.size(), to);
    return json::parse(text);
}

void check_clean(const json& p) {
    INFO(p.dump().substr(0, 3000));
    CHECK(p["errors"].empty());
    CHECK(p["scroll_width"].get<int>() <= p["client_width"].get<int>());
    CHECK(p["client_width"].get<int>() <= 1400);
    CHECK(p["wide"].empty());  // no box scrolls sideways either
}

}  // namespace

TEST_CASE("report in Chromium: a run report draws every section without script errors and fits 1400 px", "[slow][report][browser]") {
    if (!have_chromium()) {
        WARN("SKIPPED: chromium is not installed (apt-get install chromium); the report is not rendered");
        return;
    }
    TempDir tmp;
    const std::string report = tmp.path("run.html");
    const Result r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kSrc + "/traces/lint_concat_oversync.jsonl",
                                      "--set", "chip.hbm.bandwidth_gbps=800", "--report", report, "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json p = render(tmp, report);
    check_clean(p);
    const std::string text = p["text"];
    CHECK_THAT(text, Contains("chip.hbm.bandwidth_gbps=800"));  // the override, in the summary
    for (const char* h : {"Summary", "Utilisation per unit", "Critical path", "Ops"}) CHECK_THAT(p["headings"].dump(), Contains(h));
    CHECK_THAT(text, Contains("waited for"));
    CHECK_THAT(text, Contains("conv_done"));
    // The roofline has the Cube roof and a point per op that computes and moves bytes.
    REQUIRE(p["charts"].contains("roofline"));
    CHECK_THAT(p["charts"]["roofline"].dump(), Contains("Cube peak 32.768 TFLOP/s"));
    // The timeline's legend names the ops by colour, and the critical path is its first track.
    REQUIRE(p["charts"].contains("timeline"));
    CHECK(p["charts"]["timeline"].dump().find("critical path") != std::string::npos);
    for (const char* op : {"conv", "maxpool", "relu", "concat"}) CHECK_THAT(text, Contains(op));
    CHECK_THAT(text, Contains("critical path: compute"));
}

TEST_CASE("report in Chromium: a split die shows Vector tracks beside Cube ones, a host run shows its host figures", "[slow][report][browser]") {
    if (!have_chromium()) {
        WARN("SKIPPED: chromium is not installed (apt-get install chromium); the report is not rendered");
        return;
    }
    TempDir tmp;
    const std::string split = tmp.path("split.html");
    Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", kSrc + "/models/convbnrelu.json", "--report", split, "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    json p = render(tmp, split);
    check_clean(p);
    const std::string tl = p["charts"]["timeline"].dump();
    CHECK(tl.find("\"cube0") != std::string::npos);
    CHECK(tl.find("\"vector") != std::string::npos);

    const std::string host = tmp.path("host.html");
    r = run_npusim(tmp, {"run", "--chip", kAx300, "--workload", kSrc + "/models/host_smallops.json", "--set",
                         "workload.host_mode=sync", "--report", host, "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    p = render(tmp, host);
    check_clean(p);
    CHECK_THAT(p["headings"].dump(), Contains("Host runtime"));
    CHECK_THAT(p["text"].get<std::string>(), Contains("end to end"));
    CHECK_THAT(p["text"].get<std::string>(), Contains("workload.host_mode=sync"));
}

TEST_CASE("report in Chromium: a sweep report draws its charts from zero without script errors", "[slow][report][browser]") {
    if (!have_chromium()) {
        WARN("SKIPPED: chromium is not installed (apt-get install chromium); the report is not rendered");
        return;
    }
    TempDir tmp;
    nlohmann::ordered_json study;
    study["chip"] = kAx300;
    study["workload"] = kSrc + "/traces/convbnrelu_tile.jsonl";
    study["axes"] = {{"chip.hbm.bandwidth_gbps", {800, 1600}}, {"chip.cores.cube.count", {2, 4}}};
    study["metrics"] = {"total_cycles"};
    const std::string file = tmp.write("study.json", study.dump(2)), out = tmp.path("sweep");
    const Result r = run_npusim(tmp, {"sweep", file, "--out", out, "--report"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json p = render(tmp, out + "/report.html");
    check_clean(p);
    REQUIRE(p["charts"].contains("total_cycles"));
    // The y axis of total cycles (all well above zero) starts at 0.
    const auto& texts = p["charts"]["total_cycles"];
    CHECK(std::find(texts.begin(), texts.end(), "0") != texts.end());
}

TEST_CASE("report in Chromium: a sweep report of three axes fixes one and facets another and draws the speed-up against a base point", "[slow][report][browser]") {
    if (!have_chromium()) {
        WARN("SKIPPED: chromium is not installed (apt-get install chromium); the report is not rendered");
        return;
    }
    TempDir tmp;
    nlohmann::ordered_json study;
    study["chip"] = kAx300;
    study["workload"] = kSrc + "/traces/convbnrelu_tile.jsonl";
    study["axes"] = {{"chip.cores.cube.count", {2, 4}}, {"chip.cores.vector.count", {2, 4}}, {"chip.hbm.bandwidth_gbps", {200, 400}}};
    study["metrics"] = {"total_cycles"};
    const std::string file = tmp.write("study.json", study.dump(2)), out = tmp.path("sweep");
    const Result r = run_npusim(tmp, {"sweep", file, "--out", out, "--report"});
    SHOW(r);
    REQUIRE(r.code == 0);
    // Point 0 (cube 2, vector 2, hbm 200) is the base; the view holds hbm at
    // 400 and draws a panel per vector count.
    const json p = render(tmp, out + "/report.html", "#hbm.bandwidth_gbps=400;vector.count=facet;base=0");
    check_clean(p);
    INFO(p["tips"].dump());
    REQUIRE(p["charts"].contains("total_cycles"));
    const auto& texts = p["charts"]["total_cycles"];  // the last panel's
    CHECK(std::find(texts.begin(), texts.end(), "speed-up of total_cycles vs cube.count, vector.count = 4") != texts.end());
    // Its point at cube 4 is the base's cycles over its own, as results.jsonl has them.
    double base = 0, point = 0;
    std::ifstream rows(out + "/results.jsonl");
    for (std::string line; std::getline(rows, line);) {
        const json row = json::parse(line);
        const json& a = row["axes"];
        if (row["index"] == 0) base = row["metrics"]["total_cycles"];
        if (a["chip.cores.cube.count"] == 4 && a["chip.cores.vector.count"] == 4 && a["chip.hbm.bandwidth_gbps"] == 400)
            point = row["metrics"]["total_cycles"];
    }
    REQUIRE(point > 0);
    const std::string want = fmt::format("cube.count=4: {:.5g}x", base / point);  // as the page rounds (5 digits)
    bool found = false;
    for (const auto& t : p["tips"]) found = found || t.get<std::string>().find(want) != std::string::npos;
    CHECK(found);
    // No point with hbm 200 is drawn: every tip is of a 400 line.
    for (const auto& t : p["tips"]) CHECK(t.get<std::string>().find("hbm.bandwidth_gbps=200") == std::string::npos);
}

TEST_CASE("report in Chromium: an LLM step on 16 dies shows its serving figures, ranks and mesh beside the die's sections",
          "[slow][report][browser][llm]") {
    if (!have_chromium()) {
        WARN("SKIPPED: chromium is not installed (apt-get install chromium); the report is not rendered");
        return;
    }
    TempDir tmp;
    const std::string report = tmp.path("llm.html");
    const Result r = run_npusim(tmp, {"run", "--chip", kSrc + "/configs/chips/a3-supernode.json", "--workload",
                                      kSrc + "/models/llm/deepseek_v3.json", "--set", "chip.interconnect.ranks=16", "--set",
                                      "workload.layers=4", "--set", "workload.batch=8", "--set", "workload.kv_len=1024", "--set",
                                      "workload.routing.redundant_experts=0", "--report", report, "-q"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const json p = render(tmp, report);
    check_clean(p);
    for (const char* h : {"Summary", "Utilisation per unit", "LLM serving", "Ranks and mesh", "Critical path", "Ops"})
        CHECK_THAT(p["headings"].dump(), Contains(h));
    const std::string text = p["text"];
    CHECK_THAT(text, Contains("workload.layers=4"));
    CHECK_THAT(text, Contains("time per output token") && Contains("tokens/s per die") && Contains("op time shares"));
    CHECK_THAT(text, Contains("layer 3") && Contains("ends at"));  // the per-layer table, as the run summary prints it
    CHECK_THAT(text, Contains("16; the last to finish: rank"));
    CHECK_THAT(text, Contains("m0.l3.experts.gate_up"));  // the MoE layer's experts in the ops table
    REQUIRE(p["charts"].contains("timeline"));
    CHECK(p["charts"]["timeline"].dump().find("critical path") != std::string::npos);
}
