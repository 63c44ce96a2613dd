// The die model run without SystemC (hw/die_probe: the compiler's way to
// cost a plan by running it) against the same stream run by SystemC.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/compiler.hpp"
#include "support/build_paths.hpp"
#include "config/run_config.hpp"
#include "hw/die.hpp"
#include "hw/die_probe.hpp"
#include "tasks/sub_stream.hpp"

using namespace npusim;

namespace {
const std::string kSrc = NPUSIM_SOURCE_DIR;
}

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
