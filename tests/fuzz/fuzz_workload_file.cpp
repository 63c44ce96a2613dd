// Workload files (.json documents with a "kind"): load_workload and the
// workload-section validation of RunConfig::load, on the bundled ax300 chip.
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "fuzzing.hpp"

using namespace npusim;

NPUSIM_FUZZ_TARGET(workload_file) {
    static const std::string chip = fuzz::source_file("configs/chips/ax300.json");
    const std::string workload = fuzz::write_scratch("workload.json", {reinterpret_cast<const char*>(data), size});
    try {
        const RunConfig rc = RunConfig::load(chip, workload, {});
        const std::string kind = rc.workload_kind();
        NPUSIM_FUZZ_CHECK(kind == "tasks" || kind == "graph", "kind " + kind);
        NPUSIM_FUZZ_CHECK(rc.document()["workload"]["file"].is_string(), rc.dump());
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.find("workload.json") != std::string::npos, "message does not name the workload file: " + msg);
    }
    return 0;
}
