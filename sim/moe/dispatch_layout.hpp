// Where the MoE Dispatch keeps things in each rank's GM (docs/design.md §1.3,
// docs/hardware-facts.md "Vendor MoE dispatch kernel"):
//
//   window   sparse by expert: for each local expert, for each source rank,
//            room for `batch` token slots. A slot holds one token (its payload:
//            H bytes, a 32 B scale for int8 tokens, 12 B of (rank, token, k)),
//            padded to whole DataBlocks; with a separate flag, one more block.
//   status   one DataBlock per (local expert, source rank): {flag, count}, 32 B
//            written, spaced a block apart so writers do not contend.
//   output   dense by expert: the Dispatch node's output tensor.
// Every Dispatch of a graph uses the same window and status blocks: each call
// writes its own flag value (MoeOp::epoch), so a watch sees only its own call.
#pragma once
#include <cstdint>

#include "hw/fabric.hpp"
#include "collective/moe_op.hpp"

namespace npusim {

struct DispatchLayout {
    static constexpr Addr kStatusBase = 0x200000000000ULL;  // 32 TB, above every tensor
    static constexpr Addr kWindowBase = 0x210000000000ULL;
    static constexpr std::uint64_t kScaleBytes = 32, kMetaBytes = 12;

    int ranks = 1, batch = 1, epr = 1;
    std::uint32_t block = 512;
    std::uint64_t flag = 1;          // this call's flag value
    std::uint64_t token_bytes = 0;   // payload of one token
    std::uint32_t data_blocks = 0;   // blocks holding the payload
    std::uint32_t slot_blocks = 0;   // data_blocks (+1 for a separate flag block)
    bool data_as_flag = true;

    DispatchLayout(const MoeOp& p, std::uint32_t block_bytes)
        : ranks(p.ranks()), batch(p.batch), epr(p.experts_per_rank()), block(block_bytes), flag(p.epoch) {
        token_bytes = p.out_row_bytes() + (p.out_elt == 1 ? kScaleBytes : 0) + kMetaBytes;
        // Only the optimized variant packs flags into the blocks.
        data_as_flag = p.variant == MoeOp::Variant::optimized && p.flag_in_block;
        const std::uint64_t per_block = data_as_flag ? block - 8 : block;
        data_blocks = static_cast<std::uint32_t>((token_bytes + per_block - 1) / per_block);
        const bool separate_flag = p.variant == MoeOp::Variant::optimized && !p.flag_in_block;
        slot_blocks = data_blocks + (separate_flag ? 1 : 0);
    }

    std::uint64_t slot_bytes() const { return static_cast<std::uint64_t>(slot_blocks) * block; }
    std::uint64_t data_bytes() const { return static_cast<std::uint64_t>(data_blocks) * block; }
    Addr slot(int local_expert, int src, int i) const {
        return kWindowBase + ((static_cast<Addr>(local_expert) * ranks + src) * batch + i) * slot_bytes();
    }
    Addr flag_block(int local_expert, int src, int i) const { return slot(local_expert, src, i) + data_bytes(); }
    Addr status(int local_expert, int src) const {
        return kStatusBase + (static_cast<Addr>(local_expert) * ranks + src) * block;
    }
};

}  // namespace npusim
