// Where the MoE Combine keeps things in each rank's GM, next to the
// Dispatch's window and status blocks (moe/dispatch_layout.hpp):
//
//   status    baseline: one {flag, count} block per expert, written by the
//             expert's rank into each source rank
//   window    one slot per (token, k) pair of the source rank for the
//             expert's output row, padded to whole DataBlocks (Data-as-Flag
//             in the optimized variant)
// Every Combine of a graph uses the same blocks, each call with its own flag.
#pragma once
#include <cstdint>

#include "hw/fabric.hpp"
#include "collective/moe_op.hpp"

namespace npusim {

struct CombineLayout {
    static constexpr Addr kStatusBase = 0x220000000000ULL;
    static constexpr Addr kWindowBase = 0x230000000000ULL;

    int top_k = 1;
    std::uint32_t block = 512;
    std::uint64_t flag = 1;          // this call's flag value
    std::uint64_t row_bytes = 0;     // one expert output row
    std::uint32_t data_blocks = 0;   // blocks one row takes in a slot
    bool data_as_flag = true;        // optimized: the flag in every block

    CombineLayout(const MoeOp& p, std::uint32_t block_bytes)
        : top_k(p.top_k), block(block_bytes), flag(p.epoch), row_bytes(p.in_row_bytes()) {
        data_as_flag = p.variant == MoeOp::Variant::optimized;
        const std::uint64_t per_block = data_as_flag ? block - 8 : block;
        data_blocks = static_cast<std::uint32_t>((row_bytes + per_block - 1) / per_block);
    }

    std::uint64_t slot_bytes() const { return static_cast<std::uint64_t>(data_blocks) * block; }
    Addr status(int expert) const { return kStatusBase + static_cast<Addr>(expert) * block; }
    Addr slot(int pair) const { return kWindowBase + static_cast<Addr>(pair) * slot_bytes(); }
};

}  // namespace npusim
