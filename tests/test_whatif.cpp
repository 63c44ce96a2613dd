// What-if signs (issue 13, "What-if conformance"): a resource that grows never
// makes a run slower by more than 1%, whether the stream is compiled once for
// the base chip (fixed) or recompiled for the changed chip. The CI subset of
// tools/whatif_conformance.py, which holds the full table with magnitude
// bands (docs/validation.md, "What-if conformance").
//
// Every case must pass; the full table has no wrong sign either
// (docs/validation.md, "What-if conformance").
#include "support/e2e.hpp"

#include <fstream>

using namespace npusim::test;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kChip = kSrc + "/configs/chips/a2.json";

// total_cycles of one run; fails the test if the run fails.
double cycles(const TempDir& tmp, std::vector<std::string> args) {
    const std::string stats = tmp.path("s.json");
    args.insert(args.begin(), {"run", "--chip", kChip, "-q", "--stats", stats});
    const Result r = run_npusim(tmp, args);
    SHOW(r);
    REQUIRE(r.code == 0);
    return read_json(stats).at("total_cycles").get<double>();
}

// The model's stream compiled for the base chip. Core-count changes run it
// with the pins removed: a compiled stream pins each task to a core index,
// which a chip with other counts would reject or leave idle.
std::string fixed_stream(const TempDir& tmp, const std::string& model, bool unpin) {
    const std::string pinned = tmp.path("pinned.jsonl");
    const Result r = run_npusim(tmp, {"compile", "--chip", kChip, "--workload", model, "-q", "--emit-tasks", pinned});
    SHOW(r);
    REQUIRE(r.code == 0);
    if (!unpin) return pinned;
    const std::string unpinned = tmp.path("unpinned.jsonl");
    std::ifstream in(pinned);
    std::ofstream out(unpinned);
    for (std::string line; std::getline(in, line);) {
        nlohmann::json t = nlohmann::json::parse(line);
        t.erase("core");
        out << t.dump() << "\n";
    }
    return unpinned;
}

// Runs `model` on a2 and on a2 with `set`, fixed or recompiled. If `set`
// grows a resource the changed chip must be at most 1% slower; if it shrinks
// one, at most 1% faster (the base chip is then the one that grew).
void never_slower_with_more(const std::string& model_name, const std::string& set, bool fixed, bool grows) {
    TempDir tmp;
    const std::string model = kSrc + "/models/" + model_name + ".json";
    const bool cores = set.find("cores.") != std::string::npos;
    const std::string workload = fixed ? fixed_stream(tmp, model, cores) : model;
    const double base = cycles(tmp, {"--workload", workload});
    const double changed = cycles(tmp, {"--workload", workload, "--set", set});
    INFO(model_name << (fixed ? " fixed" : " recompiled") << ": base " << base << " cycles, with " << set << " "
                    << changed << " cycles (x" << changed / base << ")");
    if (grows) CHECK(changed <= base * 1.01);
    else CHECK(base <= changed * 1.01);
}

}  // namespace

// MORE: `set` grows a resource; LESS: it shrinks one.
#define WHATIF_MORE(model, set, mode, tags)                                                               \
    TEST_CASE("what-if: " model " on a2 is not slower with " set " (" mode ")", "[whatif][e2e]" tags) { \
        never_slower_with_more(model, set, std::string(mode) == "fixed", true);                          \
    }
#define WHATIF_LESS(model, set, mode, tags)                                                               \
    TEST_CASE("what-if: " model " on a2 is not faster with " set " (" mode ")", "[whatif][e2e]" tags) { \
        never_slower_with_more(model, set, std::string(mode) == "fixed", false);                         \
    }

WHATIF_MORE("convbnrelu", "chip.hbm.bandwidth_gbps=3200", "fixed", "")
WHATIF_MORE("convbnrelu", "chip.hbm.bandwidth_gbps=3200", "recompiled", "")
WHATIF_MORE("convbnrelu", "chip.l2.size_mb=384", "fixed", "")
WHATIF_MORE("convbnrelu", "chip.l2.size_mb=384", "recompiled", "")
WHATIF_MORE("convbnrelu", "chip.cores.cube.count=48", "fixed", "")
WHATIF_MORE("convbnrelu", "chip.cores.cube.count=48", "recompiled", "")
WHATIF_MORE("convbnrelu", "chip.cores.vector.count=96", "fixed", "")
WHATIF_MORE("convbnrelu", "chip.cores.vector.count=96", "recompiled", "")
WHATIF_MORE("convbnrelu", "chip.buffers.ub_kb=384", "fixed", "")
WHATIF_MORE("convbnrelu", "chip.buffers.ub_kb=384", "recompiled", "")
WHATIF_MORE("convbnrelu", "chip.buffers.l1_kb=1024", "fixed", "")
WHATIF_MORE("convbnrelu", "chip.buffers.l1_kb=1024", "recompiled", "")
WHATIF_MORE("convbnrelu", "chip.buffers.l0c_kb=256", "fixed", "")
WHATIF_MORE("convbnrelu", "chip.buffers.l0c_kb=256", "recompiled", "")
WHATIF_LESS("convbnrelu", "chip.hbm.bandwidth_gbps=800", "fixed", "")
WHATIF_LESS("convbnrelu", "chip.hbm.bandwidth_gbps=800", "recompiled", "")
WHATIF_LESS("convbnrelu", "chip.buffers.ub_kb=96", "fixed", "")
WHATIF_LESS("convbnrelu", "chip.buffers.ub_kb=96", "recompiled", "")
WHATIF_LESS("convbnrelu", "chip.buffers.l1_kb=256", "fixed", "")
WHATIF_LESS("convbnrelu", "chip.buffers.l1_kb=256", "recompiled", "")
WHATIF_LESS("convbnrelu", "chip.buffers.l0c_kb=64", "fixed", "")
WHATIF_LESS("convbnrelu", "chip.buffers.l0c_kb=64", "recompiled", "")

WHATIF_MORE("resnet50", "chip.hbm.bandwidth_gbps=3200", "fixed", "")
WHATIF_MORE("resnet50", "chip.hbm.bandwidth_gbps=3200", "recompiled", "")
WHATIF_MORE("resnet50", "chip.l2.size_mb=384", "fixed", "")
WHATIF_MORE("resnet50", "chip.l2.size_mb=384", "recompiled", "")
WHATIF_MORE("resnet50", "chip.cores.cube.count=48", "fixed", "")
WHATIF_MORE("resnet50", "chip.cores.cube.count=48", "recompiled", "")
WHATIF_MORE("resnet50", "chip.cores.vector.count=96", "fixed", "")
WHATIF_MORE("resnet50", "chip.cores.vector.count=96", "recompiled", "")
WHATIF_MORE("resnet50", "chip.buffers.ub_kb=384", "fixed", "")
WHATIF_MORE("resnet50", "chip.buffers.ub_kb=384", "recompiled", "")
WHATIF_MORE("resnet50", "chip.buffers.l1_kb=1024", "fixed", "")
WHATIF_MORE("resnet50", "chip.buffers.l1_kb=1024", "recompiled", "")
WHATIF_MORE("resnet50", "chip.buffers.l0c_kb=256", "fixed", "")
WHATIF_MORE("resnet50", "chip.buffers.l0c_kb=256", "recompiled", "")
WHATIF_LESS("resnet50", "chip.hbm.bandwidth_gbps=800", "fixed", "")
WHATIF_LESS("resnet50", "chip.hbm.bandwidth_gbps=800", "recompiled", "")
WHATIF_LESS("resnet50", "chip.buffers.ub_kb=96", "fixed", "")
WHATIF_LESS("resnet50", "chip.buffers.ub_kb=96", "recompiled", "")
WHATIF_LESS("resnet50", "chip.buffers.l1_kb=256", "fixed", "")
WHATIF_LESS("resnet50", "chip.buffers.l1_kb=256", "recompiled", "")
WHATIF_LESS("resnet50", "chip.buffers.l0c_kb=64", "fixed", "")
WHATIF_LESS("resnet50", "chip.buffers.l0c_kb=64", "recompiled", "")
