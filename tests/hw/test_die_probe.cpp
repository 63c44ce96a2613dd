// The die model run without SystemC (hw/die_probe: the compiler's way to
// cost a plan by running it) against the same stream run by SystemC.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compiler/compiler.hpp"
#include "compiler/plan_search.hpp"
#include "support/build_paths.hpp"
#include "support/e2e.hpp"
#include "config/run_config.hpp"
#include "hw/die.hpp"
#include "hw/die_probe.hpp"
#include "tasks/stream_reader.hpp"
#include "tasks/sub_stream.hpp"

using namespace npusim;

namespace {
const std::string kSrc = NPUSIM_SOURCE_DIR;

// Puts back the registered plan timer however a test case ends.
struct TimerRestore {
    compiler::DieTimer before;
    ~TimerRestore() { compiler::set_die_timer(std::move(before)); }
};
}  // namespace

TEST_CASE("die probe: a compiled model ends at the same picosecond as the SystemC run, probed twice before it",
          "[die][probe]") {
    const RunConfig cfg = RunConfig::load(kSrc + "/configs/chips/a2.json", kSrc + "/models/bert_layer.json", {});
    const compiler::CompileResult r = compiler::compile_workload(cfg.workload(), cfg.chip());
    REQUIRE(r.stream.tasks.size() > 100);
    DieProbe probe(cfg.chip());
    const std::uint64_t first = probe.end_ps(r.stream);
    const std::uint64_t second = probe.end_ps(r.stream);
    CHECK(second == first);
    CHECK(probe.probes() == 2);
    // A part runs alone too: the first kernel's tasks end no later than the
    // whole stream does.
    std::vector<std::uint32_t> kernel;
    for (std::uint32_t i = 0; i < r.stream.tasks.size(); ++i)
        if (r.stream.tasks[i].op == r.stream.tasks[0].op) kernel.push_back(i);
    const std::uint64_t part = probe.end_ps(sub_stream(r.stream, kernel));
    CHECK(part > 0);
    CHECK(part < first);

    Die die("die0", cfg.chip(), r.stream, nullptr);
    die.run();
    CHECK(die.end_ps() == first);
    // A module cannot be built once the simulation has run.
    CHECK_THROWS_AS(probe.end_ps(r.stream), std::logic_error);
}

TEST_CASE("die probe: compile --estimates gives each task and its kernel alone on the die model", "[die][probe][e2e]") {
    // BERT-128 on a2: each Cube task of ffn.down reads all rows of the
    // activation; alone it fetches them from HBM, in its kernel the first
    // core's fetch leaves them in L2 for the others, so the whole kernel
    // alone ends sooner than one of its tasks alone.
    test::TempDir tmp;
    const std::string csv = tmp.path("est.csv");
    const test::Result r = test::run_npusim(
        tmp, {"compile", "--chip", kSrc + "/configs/chips/a2.json", "--workload", kSrc + "/models/bert_layer.json",
              "--emit-tasks", tmp.path("s.jsonl"), "--estimates", csv});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Matchers::Contains("the die model ran 436 tasks and 22 kernels alone"));
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    REQUIRE(line == "id,op,core_type,est_cycles,alone_cycles,kernel_alone_cycles");
    std::map<std::string, std::pair<double, double>> down;  // id -> (alone, kernel alone)
    std::size_t rows = 0;
    while (std::getline(in, line)) {
        ++rows;
        // "id","op",core,est,alone,kernel: the last three fields are numbers.
        const auto c3 = line.rfind(','), c2 = line.rfind(',', c3 - 1);
        const double alone = std::stod(line.substr(c2 + 1)), kernel = std::stod(line.substr(c3 + 1));
        CHECK(alone > 0);
        CHECK(kernel > 0);
        if (line.rfind("\"ffn.down.matmul#", 0) == 0) down[line.substr(1, line.find('"', 1) - 1)] = {alone, kernel};
    }
    CHECK(rows == 436);
    REQUIRE(down.size() == 24);
    for (const auto& [id, t] : down) {
        CAPTURE(id, t.first, t.second);
        CHECK(t.second < t.first);
    }
}

TEST_CASE("die probe: every candidate plan the searches hand over ends at the same picosecond as its text read back",
          "[die][probe][compiler]") {
    // The searches time each candidate as the compiler built it, without the
    // text round trip `compile --emit-tasks` and `run` go through. On a2 the
    // Cube converts layouts on the way; on ax300 FormatConvert tasks do.
    const auto [chip, model] = GENERATE(std::make_pair(std::string("a2"), std::string("bert_layer")),
                                        std::make_pair(std::string("a2"), std::string("segnet")),
                                        std::make_pair(std::string("a2"), std::string("convbnrelu")),
                                        std::make_pair(std::string("ax300"), std::string("bert_layer")));
    CAPTURE(chip, model);
    const RunConfig cfg =
        RunConfig::load(kSrc + "/configs/chips/" + chip + ".json", kSrc + "/models/" + model + ".json", {});
    int candidates = 0, differ = 0, other_chip = 0;
    // Restores the registered timer however the compile ends.
    TimerRestore restore{compiler::set_die_timer([&](const TaskStream& built, const ChipParams& on) {
        DieProbe probe(on);
        std::ostringstream text;
        write_task_stream(built, text);
        std::istringstream in(text.str());
        const std::uint64_t direct = probe.end_ps(built), read_back = probe.end_ps(parse_task_stream(in, "candidate"));
        ++candidates;
        differ += direct != read_back;
        other_chip += on.cube.count != cfg.chip().cube.count || on.vector.count != cfg.chip().vector.count;
        return static_cast<double>(direct) / probe.ps_per_cycle();
    })};
    const compiler::CompileResult r = compiler::compile_workload(cfg.workload(), cfg.chip());
    CHECK(r.tasks > 0);
    CHECK(candidates >= 3);
    CHECK(differ == 0);
    CHECK(other_chip == 0);  // plans for fewer Cube cores run on the whole chip
}

TEST_CASE("die probe: without a die model registered the plan searches do not run, and the compile report says so",
          "[die][probe][compiler]") {
    // The compiler has no second way to rate a plan: with no timer the
    // tiler's plan stands, as with the searches off.
    const RunConfig cfg = RunConfig::load(kSrc + "/configs/chips/a2.json", kSrc + "/models/bert_layer.json", {});
    const RunConfig off =
        RunConfig::load(kSrc + "/configs/chips/a2.json", kSrc + "/models/bert_layer.json",
                        {"workload.passes.explore_cube_cores=false", "workload.passes.search_cube_plans=false",
                         "workload.passes.explore_vector_cores=false"});
    const compiler::CompileResult tiler = compiler::compile_workload(off.workload(), off.chip());
    const compiler::CompileResult searched = compiler::compile_workload(cfg.workload(), cfg.chip());
    TimerRestore restore{compiler::set_die_timer(nullptr)};
    const compiler::CompileResult alone = compiler::compile_workload(cfg.workload(), cfg.chip());
    const auto blocks = [](const compiler::CompileResult& r) {
        std::vector<std::string> out;
        for (const auto& t : r.tilings) out.push_back(t.kernel + ": " + t.shape);
        return out;
    };
    const auto noted = [](const compiler::CompileResult& r, const std::string& text) {
        return std::any_of(r.notes.begin(), r.notes.end(),
                           [&](const std::string& n) { return n.find(text) != std::string::npos; });
    };
    CHECK(blocks(alone) == blocks(tiler));
    CHECK(blocks(searched) != blocks(tiler));  // BERT-128 on a2: the searches keep other plans
    CHECK(noted(alone, "plan searches: no die model registered"));
    CHECK_FALSE(noted(searched, "plan searches:"));
}
