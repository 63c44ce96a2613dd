// The options of a kind "moe" workload (models/moe_dispatch.json), read from
// the resolved run document (defaults are already filled in by the schema).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "chip/chip_params.hpp"

namespace npusim {

struct MoeParams {
    enum class Variant { baseline, optimized };
    Variant variant = Variant::optimized;
    bool flag_in_block = true;
    int ranks = 1;             // chip.interconnect.ranks
    int batch = 128;           // tokens per rank
    int hidden = 7168;         // int8 bytes per token
    int top_k = 8;
    int experts_per_rank = 1;
    bool skewed = false;
    double skew = 1.0;         // Zipf exponent when skewed
    std::uint64_t seed = 1;
    int trace_ranks = 1;

    int experts() const { return ranks * experts_per_rank; }
    const char* variant_name() const { return variant == Variant::baseline ? "baseline" : "optimized"; }

    // Throws InputError for combinations the schema cannot express alone.
    static MoeParams from_run(const nlohmann::json& workload, const ChipParams& chip);
};

}  // namespace npusim
