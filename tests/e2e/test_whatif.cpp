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

// BERT-128 recompiled for half the L0C ran 1% faster than on the default
// chip until the tiler re-rated its best block counts by the full Cube plan
// (the quick plan rated attn.out.matmul's 3 x 8 tile 2.4% slower with the
// larger L0C and lost it).
WHATIF_LESS("bert_layer", "chip.buffers.l0c_kb=64", "recompiled", "")

TEST_CASE("what-if: a Cube GEMM on ax300 is not slower with a lower HBM latency (fixed)", "[whatif][ports][e2e]") {
    // A 128 x 768 x 768 MatMul in 1 x 2 x 2 tiles. Its GM port serves MTE2
    // and FixPipe one at a time; when loads always went first, a lower HBM
    // latency let the next loads run ahead of a finished accumulator's
    // store, L0C stayed full and each task took 13% longer at 150 ns than at
    // 200 ns (18767 against 17228 cycles). A store the Cube waits for now
    // goes first.
    TempDir tmp;
    const std::string chip = kSrc + "/configs/chips/ax300.json";
    const std::string graph = tmp.path("mm.json");
    std::ofstream(graph) << R"({"kind": "graph", "name": "mm", "tensors": {
        "x": {"shape": [1, 128, 768], "dtype": "fp16", "input": true, "layout": "FRACTAL_NZ"},
        "w": {"shape": [768, 768], "dtype": "fp16", "const": true},
        "y": {"shape": [1, 128, 768]}},
        "outputs": ["y"], "nodes": [{"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["y"]}]})";
    const std::string stream = tmp.path("mm.jsonl");
    const Result c = run_npusim(tmp, {"compile", "--chip", chip, "--workload", graph, "-q", "--emit-tasks", stream, "--set",
                                      R"(workload.tiling={"mm": {"m_blocks": 1, "n_blocks": 2, "k_blocks": 2}})"});
    SHOW(c);
    REQUIRE(c.code == 0);
    double slower = 0;
    for (const int ns : {300, 200, 150, 100}) {
        const std::string stats = tmp.path("s" + std::to_string(ns) + ".json");
        const Result r = run_npusim(tmp, {"run", "--chip", chip, "--workload", stream, "-q", "--stats", stats, "--set",
                                          "chip.hbm.latency_ns=" + std::to_string(ns)});
        SHOW(r);
        REQUIRE(r.code == 0);
        const double cycles = read_json(stats).at("total_cycles").get<double>();
        INFO("HBM latency " << ns << " ns: " << cycles << " cycles (the one before: " << slower << ")");
        if (slower > 0) CHECK(cycles <= slower);
        slower = cycles;
    }
}
