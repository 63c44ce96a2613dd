// --set PATH=VALUE (docs/design.md §4.2): each line of the input is one --set
// argument (at most 8), applied to the bundled ax300 chip with a task stream
// (even first byte) or a model graph (odd) as the workload, so both kinds'
// workload keys are reachable. Errors must name the --set argument or a file.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "fuzzing.hpp"

using namespace npusim;

NPUSIM_FUZZ_TARGET(set_values) {
    static const std::string chip = fuzz::source_file("configs/chips/ax300.json");
    static const std::string stream = fuzz::source_file("traces/convbnrelu_tile.jsonl");
    static const std::string graph = fuzz::source_file("models/convbnrelu.json");
    if (size == 0) return 0;
    const bool use_graph = data[0] & 1;
    std::vector<std::string> sets;
    std::string cur;
    for (std::size_t i = 1; i < size && sets.size() < 8; ++i) {
        if (data[i] == '\n') {
            sets.push_back(cur);
            cur.clear();
        } else {
            cur += static_cast<char>(data[i]);
        }
    }
    if (sets.size() < 8 && !cur.empty()) sets.push_back(cur);
    try {
        const RunConfig rc = RunConfig::load(chip, use_graph ? graph : stream, sets);
        (void)rc.dump();
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.find("--set ") != std::string::npos || msg.find(".json") != std::string::npos,
                          "message names neither a --set argument nor a file: " + msg);
    }
    return 0;
}
