// Golden files (`npusim check`, sim/study/golden.cpp): load_golden, then
// compare_metric of each metric against a statistics document. The input is
// the golden, optionally followed by a line "----" and the statistics JSON.
// Beside the golden lie chip.json (ax300) and stream.jsonl.
// Invariant: a numeric comparison passes exactly when |actual - expected| is
// within the tolerance that applied.
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "fuzzing.hpp"
#include "study/golden.hpp"

using namespace npusim;

namespace {
void copy_file_beside(const std::string& from, const std::string& name) {
    std::ifstream in(fuzz::source_file(from), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    fuzz::write_scratch(name, ss.str());
}
}  // namespace

NPUSIM_FUZZ_TARGET(golden) {
    static const bool ready = [] {
        copy_file_beside("configs/chips/ax300.json", "chip.json");
        copy_file_beside("traces/convbnrelu_tile.jsonl", "stream.jsonl");
        return true;
    }();
    (void)ready;
    const auto parts = fuzz::split_parts({reinterpret_cast<const char*>(data), size}, 2);
    const std::string file = fuzz::write_scratch("golden.json", parts[0]);
    study::Golden g;
    try {
        g = study::load_golden(file);
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.find("golden.json") != std::string::npos, "message does not name the golden: " + msg);
        return 0;
    }
    (void)g.set_args();
    if (parts.size() < 2) return 0;
    const nlohmann::json stats = nlohmann::json::parse(parts[1], nullptr, /*allow_exceptions=*/false);
    if (stats.is_discarded()) return 0;
    for (const auto& m : g.metrics) {
        const study::Comparison c = study::compare_metric(m, stats);
        if (c.numeric) {
            const bool within = std::fabs(c.delta) <= c.allowed;
            NPUSIM_FUZZ_CHECK(c.pass == within, "metric " + m.path);
        }
    }
    return 0;
}
