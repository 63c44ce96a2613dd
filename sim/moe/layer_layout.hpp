// Where the rest of the MoE layer keeps things in each rank's GM, next to
// the Dispatch's window and status blocks (moe/dispatch_layout.hpp):
//
//   ready     expert le's tokens are in the OutputBuffer: one flag block per
//             (local expert, AIV core) written by the Dispatch kernel; the
//             expert GEMM tasks wait on them (task wait_memory)
//   done      the rank's expert stream has finished: one flag block written
//             by the stream's last task; the Combine kernel waits on it
//   status    Combine, baseline: one {flag, count} block per expert, written
//             by the expert's rank into each source rank
//   window    Combine: one slot per (token, k) pair of the source rank for
//             the expert's bf16 output row, padded to whole DataBlocks
//             (Data-as-Flag in the optimized variant)
// All of it lies above 1 TB, clear of the Dispatch's regions.
#pragma once
#include <cstdint>

#include "mesh/global_memory.hpp"
#include "moe/moe_params.hpp"

namespace npusim {

struct LayerLayout {
    static constexpr Addr kReadyBase = 0x10000000000ULL;          // 1 TB
    static constexpr Addr kDoneAddr = 0x10100000000ULL;           // + 4 GB
    static constexpr Addr kStatusBase = 0x10200000000ULL;         // + 8 GB
    static constexpr Addr kWindowBase = 0x10300000000ULL;         // + 12 GB
    static constexpr std::uint64_t kReadyFlag = 1, kDoneFlag = 1;
    static constexpr std::uint64_t kCombineFlag = 2;  // the Combine's data and statuses
    static constexpr std::uint64_t kRowElementBytes = 2;   // expert output rows are bf16

    int cores = 1, top_k = 1;
    std::uint32_t block = 512;
    std::uint64_t row_bytes = 0;     // one expert output row (hidden x bf16)
    std::uint32_t data_blocks = 0;   // blocks one row takes in a Combine slot
    bool data_as_flag = true;        // optimized Combine: the flag in every block

    LayerLayout(const MoeParams& p, int aiv_cores, std::uint32_t block_bytes)
        : cores(aiv_cores), top_k(p.top_k), block(block_bytes) {
        row_bytes = static_cast<std::uint64_t>(p.hidden) * kRowElementBytes;
        data_as_flag = p.variant == MoeParams::Variant::optimized;
        const std::uint64_t per_block = data_as_flag ? block - 8 : block;
        data_blocks = static_cast<std::uint32_t>((row_bytes + per_block - 1) / per_block);
    }

    std::uint64_t slot_bytes() const { return static_cast<std::uint64_t>(data_blocks) * block; }
    Addr ready(int local_expert, int core) const {
        return kReadyBase + (static_cast<Addr>(local_expert) * cores + core) * block;
    }
    Addr done() const { return kDoneAddr; }
    Addr status(int expert) const { return kStatusBase + static_cast<Addr>(expert) * block; }
    Addr slot(int pair) const { return kWindowBase + static_cast<Addr>(pair) * slot_bytes(); }
};

}  // namespace npusim
