#include "moe/moe_params.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"

namespace npusim {

MoeParams MoeParams::from_run(const MoeWorkload& w, const ChipParams& chip) {
    MoeParams p;
    static_cast<MoeWorkload&>(p) = w;
    p.ranks = chip.interconnect.ranks;

    if (p.hidden % 32 != 0)
        throw InputError(fmt::format("workload.hidden: expected a multiple of 32 (B), got {}", p.hidden));
    if (p.experts() < p.top_k)
        throw InputError(fmt::format(
            "workload.top_k = {} needs at least that many experts, but chip.interconnect.ranks x workload.experts_per_rank = "
            "{} x {} = {} (MoE dispatch needs a supernode chip, e.g. configs/chips/a3-supernode.json)",
            p.top_k, p.ranks, p.experts_per_rank, p.experts()));
    if (p.experts() > 4096)
        throw InputError(fmt::format("chip.interconnect.ranks x workload.experts_per_rank = {} experts: expected at most 4096",
                                     p.experts()));
    if (chip.interconnect.datablock_bytes < 64)
        throw InputError("chip.interconnect.datablock_bytes: Data-as-Flag needs blocks of at least 64 B");
    if (p.layer && p.expert_ffn % 16 != 0)
        throw InputError(fmt::format("workload.expert_ffn: expected a multiple of 16 (the cube's fractal), got {}", p.expert_ffn));
    if (p.layer && chip.cube.count < 1)
        throw InputError("workload.layer: the expert GEMMs run on Cube cores, but chip.cores.cube.count is 0");
    return p;
}

}  // namespace npusim
