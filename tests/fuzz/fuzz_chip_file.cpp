// Chip files (docs/design.md §4.2): the JSON reader, "extends", the schema validation
// and the cross-key checks of RunConfig::load. An input may hold two files
// separated by a line "----": chip.json and base.json (for "extends").
// Invariant: a chip that loads, written back from its resolved document,
// loads again to the very same document.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "fuzzing.hpp"

using namespace npusim;

NPUSIM_FUZZ_TARGET(chip_file) {
    const auto parts = fuzz::split_parts({reinterpret_cast<const char*>(data), size}, 2);
    const std::string chip = fuzz::write_scratch("chip.json", parts[0]);
    if (parts.size() > 1) fuzz::write_scratch("base.json", parts[1]);
    else std::remove((fuzz::scratch_dir() + "/base.json").c_str());
    nlohmann::json resolved;
    try {
        resolved = RunConfig::load(chip, "", {}).document();
    } catch (const InputError& e) {
        const std::string msg = e.what();
        NPUSIM_FUZZ_CHECK(msg.find("chip.json") != std::string::npos || msg.find("base.json") != std::string::npos,
                          "message names neither input file: " + msg);
        return 0;
    }
    const std::string again = fuzz::write_scratch("resolved.json", resolved["chip"].dump());
    nlohmann::json reloaded;
    try {
        reloaded = RunConfig::load(again, "", {}).document();
    } catch (const InputError& e) {
        fuzz::invariant_failed("the resolved chip loads again", e.what());
    }
    NPUSIM_FUZZ_CHECK(reloaded["chip"] == resolved["chip"],
                      "first: " + resolved["chip"].dump() + "\nagain: " + reloaded["chip"].dump());
    return 0;
}
