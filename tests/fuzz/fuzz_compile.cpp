// The built-in compiler on small graphs: read_graph_text + compile() with the
// options picked by the first byte (sync, input layout, passes, fusion
// boundary) on ax300 (coupled) or a2 (split). Invariant: what compiles is a
// stream the simulator accepts for that chip (check_stream_fits_chip passes)
// and that survives its own write/read round trip.
#include <sstream>
#include <string>

#include "common/errors.hpp"
#include "compiler/compiler.hpp"
#include "compiler/graph_reader.hpp"
#include "config/run_config.hpp"
#include "fuzzing.hpp"
#include "tasks/stream_checks.hpp"
#include "tasks/stream_reader.hpp"

using namespace npusim;
using namespace npusim::compiler;

NPUSIM_FUZZ_TARGET(compile) {
    static const ChipParams ax300 = RunConfig::load(fuzz::source_file("configs/chips/ax300.json"), "", {}).chip();
    static const ChipParams a2 = RunConfig::load(fuzz::source_file("configs/chips/a2.json"), "", {}).chip();
    if (size < 1) return 0;
    const std::uint8_t o = data[0];
    CompileOptions opt;
    opt.sync = (o & 1) ? SyncGranularity::op : SyncGranularity::tile;
    opt.input_layout = (o & 2) ? Layout::NC1HWC0 : Layout::NCHW;
    opt.fold_bn = !(o & 4);
    opt.fuse_activation = !(o & 8);
    opt.fuse_vector = !(o & 16);
    opt.hoist_layout = !(o & 32);
    opt.boundary = (o & 64) ? FusionBoundary::split : FusionBoundary::automatic;
    const ChipParams& chip = (o & 128) ? a2 : ax300;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    Graph g;
    try {
        g = read_graph_text(text, "graph.json");
    } catch (const InputError&) {
        return 0;
    }
    CompileResult r;
    try {
        r = compile(g, chip, opt);
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.find("graph.json") != std::string::npos, "message does not name the graph: " + msg);
        return 0;
    }
    try {
        check_stream_fits_chip(r.stream, chip);
    } catch (const InputError& e) {
        fuzz::invariant_failed("the compiled stream fits the chip it was compiled for", e.what());
    }
    std::stringstream out;
    write_task_stream(r.stream, out);
    try {
        const TaskStream back = parse_task_stream(out, "compiled.jsonl");
        NPUSIM_FUZZ_CHECK(back.tasks.size() == r.stream.tasks.size(), "task count changed on the round trip");
    } catch (const InputError& e) {
        fuzz::invariant_failed("a compiled stream reads back", e.what());
    }
    return 0;
}
