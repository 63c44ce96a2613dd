// Which link plane a DataBlock travels on, and the deterministic delivery
// jitter of chunk `seq` (chip.interconnect.reorder_seed). Plain C++.
#pragma once
#include <cstdint>

#include "common/mix64.hpp"

namespace npusim {

// Unified addressing: every rank's GM has its own range of the global address
// space, so the plane hash sees the receiver rank in the high bits.
inline std::uint64_t global_block(int rank, std::uint64_t block) {
    return (static_cast<std::uint64_t>(rank) << 40) + block;
}

// Global block index (global address / datablock_bytes) to plane.
inline int plane_of_block(std::uint64_t block, int planes, bool mix) {
    if (!mix) return static_cast<int>(block % static_cast<std::uint64_t>(planes));
    return static_cast<int>(mix64(block) % static_cast<std::uint64_t>(planes));
}

// Jitter in [0, bound_ps) for chunk number `seq`; 0 when seed is 0.
inline std::uint64_t delivery_jitter_ps(std::uint64_t seed, std::uint64_t seq, std::uint64_t bound_ps) {
    if (seed == 0 || bound_ps == 0) return 0;
    return mix64(seed * 0xD1B54A32D192ED03ULL ^ mix64(seq)) % bound_ps;
}

}  // namespace npusim
