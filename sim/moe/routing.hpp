// Token routing of the MoE Dispatch: for every rank's `batch` tokens, top-K
// distinct experts from a deterministic generator (workload.seed), uniform or
// Zipf-skewed; and what follows from it: per (source rank, expert) counts and
// the slot of each (token, k) pair in its expert's window region. Plain C++,
// identical on every machine (no <random> distributions).
#pragma once
#include <cstdint>
#include <vector>

#include "moe/moe_params.hpp"

namespace npusim {

class Routing {
public:
    explicit Routing(const MoeParams& p);

    int pairs() const { return pairs_; }  // batch x top_k per rank
    int experts() const { return experts_; }
    // Expert of pair `pair` (= token * top_k + k) of rank `rank`.
    int expert(int rank, int pair) const { return ids_[index(rank, pair)]; }
    // Position of the pair among the pairs of `rank` that go to the same expert.
    int slot(int rank, int pair) const { return slots_[index(rank, pair)]; }
    // Tokens rank `src` sends to `expert`.
    int count(int src, int expert) const { return counts_[static_cast<std::size_t>(src) * experts_ + expert]; }
    // Tokens rank `dst` receives in total.
    int received(int dst) const { return received_[static_cast<std::size_t>(dst)]; }

private:
    std::size_t index(int rank, int pair) const { return static_cast<std::size_t>(rank) * pairs_ + pair; }
    int ranks_, pairs_, experts_, epr_;
    std::vector<std::int32_t> ids_;
    std::vector<std::uint16_t> slots_;
    std::vector<std::uint16_t> counts_;
    std::vector<std::int32_t> received_;
};

}  // namespace npusim
