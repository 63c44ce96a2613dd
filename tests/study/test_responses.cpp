// Response studies (docs/studies.md "Responses"): chip and workload entries,
// one-at-a-time changes (absolute or scaled from the base), fixed and
// recompiled modes, and the roofline and monotone expectations with the
// misses a study records, end to end through `npusim sweep`.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "study/points.hpp"
#include "study/study.hpp"
#include "support/e2e.hpp"

using Catch::Matchers::Contains;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using namespace npusim;
using namespace npusim::test;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kAx300 = kSrc + "/configs/chips/ax300.json";
const std::string kConv = kSrc + "/models/convbnrelu.json";

// ConvBNReLU on ax300 at batch 1 and 2, HBM bandwidth and Cube cores changed.
ojson conv_study(const ojson& changes, const ojson& modes, const ojson& expect = ojson()) {
    ojson s;
    s["chip"] = {{"ax300", kAx300}};
    s["workload"] = {{"b1", {{"file", kConv}, {"set", {{"workload.batch", 1}}}}},
                     {"b2", {{"file", kConv}, {"set", {{"workload.batch", 2}}}}}};
    s["changes"] = changes;
    s["modes"] = modes;
    s["metrics"] = {"total_cycles"};
    if (!expect.is_null()) s["expect"] = expect;
    return s;
}

ojson hbm_and_cubes() {
    ojson c;
    c["chip.hbm.bandwidth_gbps"] = {{{"scale", 0.5}}, {{"scale", 2}}};
    c["chip.cores.cube.count"] = {{{"scale", 0.5}}};
    return c;
}

std::string load_error(const TempDir& tmp, const ojson& s) {
    const std::string f = tmp.write("bad.json", s.dump(2));
    try {
        study::load_study(f);
    } catch (const InputError& e) {
        return e.what();
    }
    FAIL("expected an InputError");
    return "";
}

}  // namespace

TEST_CASE("response study: each base point runs alone and with each change, scaled values follow the base chip",
          "[study][responses]") {
    TempDir tmp;
    const study::Study s = study::load_study(tmp.write("s.json", conv_study(hbm_and_cubes(), {"fixed", "recompiled"}).dump()));
    const auto pts = study::expand_points(s);
    // Per workload: fixed pinned base + 2 HBM changes, fixed unpinned base +
    // 1 core change (a stream pins tasks to cores), recompiled base + 3.
    REQUIRE(pts.size() == 2 * (3 + 2 + 4));
    const json doc = json::parse(slurp(kAx300));
    const double hbm = doc["hbm"]["bandwidth_gbps"].get<double>();
    const int cubes = doc["cores"]["cube"]["count"].get<int>();
    std::map<std::string, int> modes;
    for (const auto& p : pts) {
        modes[p.values["mode"].get<std::string>() + "/" + p.values.value("stream", std::string("-"))]++;
        CHECK(pts[p.base].is_base());
        CHECK(pts[p.base].workload == p.workload);
        CHECK(pts[p.base].mode == p.mode);
        CHECK(pts[p.base].unpinned == p.unpinned);
        if (p.change == "chip.hbm.bandwidth_gbps") {
            const double f = p.values["value"]["scale"].get<double>();
            CHECK(p.applied.get<double>() == Approx(hbm * f));
            CHECK_FALSE(p.unpinned);
        }
        if (p.change == "chip.cores.cube.count") {
            CHECK(p.applied.get<int>() == std::max(1, (cubes + 1) / 2));
            CHECK(p.unpinned == (p.mode == study::Mode::fixed));
        }
        // A fixed run gets chip keys only: the workload's were compiled in.
        const auto args = p.set_args(s);
        const bool has_batch = std::any_of(args.begin(), args.end(), [](const std::string& a) { return a.rfind("workload.", 0) == 0; });
        CHECK(has_batch == (p.mode == study::Mode::recompiled));
    }
    CHECK(modes["fixed/pinned"] == 6);
    CHECK(modes["fixed/unpinned"] == 4);
    CHECK(modes["recompiled/-"] == 8);
}

TEST_CASE("response study: bad changes, modes and expectations name the key with a did-you-mean", "[study][responses][errors]") {
    TempDir tmp;
    ojson s = conv_study(hbm_and_cubes(), {"fixed", "recompiled"});
    s["changes"]["workload.batch"] = {4};
    CHECK_THAT(load_error(tmp, s), Contains("\"fixed\" runs the base point's stream") && Contains("workload.batch"));
    s = conv_study(hbm_and_cubes(), {"fixd"});
    CHECK_THAT(load_error(tmp, s), Contains("\"modes\"") && Contains("did you mean 'fixed'"));
    ojson c;
    c["chip.hbm.bandwidth_gbps"] = {{{"scale", 0}}};
    CHECK_THAT(load_error(tmp, conv_study(c, {"recompiled"})), Contains("F > 0"));
    c = ojson();
    c["chip.hbm.bandwith_gbps"] = {800};
    CHECK_THAT(load_error(tmp, conv_study(c, {"recompiled"})), Contains("did you mean 'bandwidth_gbps'"));
    c = ojson();
    c["chip.hbm.channels"] = {16};
    CHECK_THAT(load_error(tmp, conv_study(c, {"recompiled"}, {{"rule", "roofline"}})),
               Contains("does not know what more of chip.hbm.channels is") && Contains("chip.hbm.bandwidth_gbps"));
    CHECK_THAT(load_error(tmp, conv_study(hbm_and_cubes(), {"recompiled"}, {{"rule", "rooflne"}})),
               Contains("did you mean 'roofline'"));
    CHECK_THAT(load_error(tmp, conv_study(hbm_and_cubes(), {"recompiled"}, {{"rule", "monotone"}, {"tolerence", 0.1}})),
               Contains("did you mean 'tolerance'"));
    CHECK_THAT(load_error(tmp, conv_study(hbm_and_cubes(), {"recompiled"}, {{"rule", 1}})), Contains("\"rule\": expected"));
    ojson known = ojson::array();
    known.push_back({{"model", "b1"}, {"verdict", "no effect"}});
    CHECK_THAT(load_error(tmp, conv_study(hbm_and_cubes(), {"recompiled"}, {{"rule", "roofline"}, {"known", known}})),
               Contains("\"expect\".\"known\"[0]: unknown field \"model\"") && Contains("did you mean 'mode'"));
    s = conv_study(hbm_and_cubes(), {"fixed"});
    s.erase("changes");
    s["axes"] = {{"chip.hbm.bandwidth_gbps", {800, 1600}}};
    CHECK_THAT(load_error(tmp, s), Contains("\"modes\": modes are those of the \"changes\""));
    s = conv_study(hbm_and_cubes(), {"recompiled"});
    s["workload"]["b1"] = {{"set", {{"workload.batch", 1}}}};
    CHECK_THAT(load_error(tmp, s), Contains("\"workload\".\"b1\": missing required key \"file\""));
}

TEST_CASE("response sweep: halving the Cube cores slows a Cube-bound model, doubling HBM does not slow it, "
          "a recorded miss that passes fails the sweep",
          "[sweep][responses]") {
    TempDir tmp;
    const std::string study = tmp.write(
        "s.json", conv_study(hbm_and_cubes(), {"fixed", "recompiled"}, {{"rule", "roofline"}, {"known", json::array()}}).dump());
    const std::string out = tmp.path("out");
    const Result r = run_npusim(tmp, {"sweep", study, "--out", out, "-j", "2", "--report"});
    SHOW(r);
    REQUIRE(r.code == 0);
    const auto rows = read_jsonl(out + "/responses.jsonl");
    REQUIRE(rows.size() == 2 * 6);  // every change, both modes, both workloads
    // The report names the files, changes and verdicts, and has a column per field.
    const std::string page = slurp(out + "/report.html");
    CHECK_THAT(page, Contains("rule roofline on total_cycles (tolerance 0.01): ok 12"));
    CHECK_THAT(page, Contains("changes (each alone)"));
    CHECK_THAT(page, Contains("\"path\":\"mode\""));
    for (const auto& row : rows) {
        INFO(row.dump());
        CHECK(row["verdict"] == "ok");
        if (row["change"] == "chip.cores.cube.count") CHECK(row["r"].get<double>() > 1.4);
        if (row["value"] == json{{"scale", 2}}) CHECK(row["r"].get<double>() <= 1.01);
        if (row["value"] == json{{"scale", 0.5}} && row["change"] == "chip.hbm.bandwidth_gbps")
            CHECK(row["r"].get<double>() >= 0.99);
    }
    // The doc tables' printer reads the folder.
    const Result t = run_program(tmp, "/usr/bin/python3", {kSrc + "/tools/study_tables.py", out});
    SHOW(t);
    CHECK(t.code == 0);
    CHECK_THAT(t.out, Contains("Verdicts: ok 12.") && Contains("#### b2 on ax300") &&
                          Contains("| cores.cube.count x0.5 | ≥ 1 |"));
    // The same study recording a miss that is not one: exit 1, named.
    ojson known = ojson::array();
    known.push_back({{"workload", "b1"}, {"change", "chip.cores.cube.count"}, {"mode", "fixed"}, {"verdict", "wrong sign"}});
    const std::string with_known = tmp.write(
        "k.json", conv_study(hbm_and_cubes(), {"fixed", "recompiled"}, {{"rule", "roofline"}, {"known", known}}).dump());
    const Result k = run_npusim(tmp, {"sweep", with_known, "--out", tmp.path("out2"), "-j", "2"});
    CHECK(k.code == 1);
    CHECK_THAT(k.out, Contains("no longer a miss") && Contains("chip.cores.cube.count"));
}

TEST_CASE("response sweep: monotone flags a step where more of a resource is slower", "[sweep][responses]") {
    TempDir tmp;
    ojson grows, shrinks;
    grows["chip.cores.cube.count"] = {1, 2, 4};
    shrinks["chip.cores.cube.count"] = {4, 2, 1};  // written the wrong way: every step is slower
    const ojson expect = {{"rule", "monotone"}};
    const Result ok = run_npusim(tmp, {"sweep", tmp.write("g.json", conv_study(grows, {"recompiled"}, expect).dump()),
                                       "--out", tmp.path("g"), "-j", "2"});
    SHOW(ok);
    CHECK(ok.code == 0);
    const auto rows = read_jsonl(tmp.path("g") + "/responses.jsonl");
    REQUIRE(rows.size() == 2 * 2);  // two steps per workload
    for (const auto& row : rows) CHECK(row["r"].get<double>() < 1.0);
    const Result bad = run_npusim(tmp, {"sweep", tmp.write("s.json", conv_study(shrinks, {"recompiled"}, expect).dump()),
                                        "--out", tmp.path("s"), "-j", "2"});
    CHECK(bad.code == 1);
    CHECK_THAT(bad.out, Contains("new miss") && Contains("\"from\":4") && Contains("\"to\":2"));
}

TEST_CASE("study: the bundled response studies load and expand", "[study][responses]") {
    const auto w = study::load_study(kSrc + "/configs/studies/whatif_conformance.json");
    // 2 chips x 6 models x (3 bases + 20 recompiled + 16 pinned + 4 unpinned changes).
    CHECK(study::expand_points(w).size() == 12 * 43);
    const auto b = study::load_study(kSrc + "/configs/studies/between_grid.json");
    CHECK(study::expand_points(b).size() == 10 * (1 + 54));
}
