// The options of a kind "moe" workload (models/moe_dispatch.json): the typed
// workload section (config/workload_params.hpp, defaults from the schema)
// plus what the chip decides, checked together.
#pragma once
#include <cstdint>
#include <string>

#include "chip/chip_params.hpp"
#include "config/workload_params.hpp"

namespace npusim {

struct MoeParams : MoeWorkload {
    int ranks = 1;  // chip.interconnect.ranks

    int experts() const { return ranks * experts_per_rank; }
    bool skewed() const { return distribution == Distribution::skewed; }
    const char* variant_name() const { return variant == Variant::baseline ? "baseline" : "optimized"; }

    // Throws InputError for combinations the schema cannot express alone.
    static MoeParams from_run(const MoeWorkload& workload, const ChipParams& chip);
};

}  // namespace npusim
