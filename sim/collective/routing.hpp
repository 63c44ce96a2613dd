// The routing of MoE tokens to experts (docs/graph-format.md, "Dispatch"):
// for every rank of an expert-parallel group, each of its `batch` tokens
// picks top_k distinct experts from a deterministic generator (seed, rank,
// token), uniformly or Zipf-skewed over a seeded permutation of the experts;
// `redundant` extra expert slots hold copies of the hottest experts, and a
// token routed to a copied expert takes one copy by hash (EPLB). What follows
// from it: per (source rank, slot) counts, the slot of each (token, k) pair
// in its window, the tokens each rank receives per local slot. Plain C++,
// identical on every machine (no <random> distributions).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace npusim {

struct RoutingSpec {
    enum class Distribution : std::uint8_t { uniform, zipf };
    Distribution distribution = Distribution::uniform;
    double skew = 1.0;        // Zipf exponent
    std::uint64_t seed = 1;
    int redundant_experts = 0;  // extra slots holding copies of the hottest experts
    bool operator<(const RoutingSpec& o) const;
};

class Routing {
public:
    // `ranks` ranks of one group, `batch` tokens each, top_k of `experts`
    // (logical) experts; slots = experts + redundant, slots / ranks per rank.
    Routing(const RoutingSpec& spec, int ranks, int batch, int top_k, int experts);

    int ranks() const { return ranks_; }
    int batch() const { return batch_; }
    int top_k() const { return top_k_; }
    int pairs() const { return pairs_; }  // batch x top_k per rank
    int experts() const { return slots_; }  // expert slots (= experts + redundant copies)
    int logical_experts() const { return logical_; }
    int experts_per_rank() const { return epr_; }
    // Slot of pair `pair` (= token * top_k + k) of rank `rank`; its rank is slot / experts_per_rank().
    int expert(int rank, int pair) const { return ids_[index(rank, pair)]; }
    // Position of the pair among the pairs of `rank` that go to the same slot.
    int slot(int rank, int pair) const { return slots_of_[index(rank, pair)]; }
    // Tokens rank `src` sends to slot `expert`.
    int count(int src, int expert) const { return counts_[static_cast<std::size_t>(src) * slots_ + expert]; }
    // Tokens rank `dst` receives in total, and per local slot.
    int received(int dst) const { return received_[static_cast<std::size_t>(dst)]; }
    int received(int dst, int local) const;

    // One Routing per distinct (spec, ranks, batch, top_k, experts), shared
    // by everything that asks (each rank's compile, the programs).
    static std::shared_ptr<const Routing> shared(const RoutingSpec& spec, int ranks, int batch, int top_k, int experts);

private:
    std::size_t index(int rank, int pair) const { return static_cast<std::size_t>(rank) * pairs_ + pair; }
    int ranks_, batch_, top_k_, pairs_, logical_, slots_, epr_;
    std::vector<std::int32_t> ids_;
    std::vector<std::uint16_t> slots_of_;
    std::vector<std::uint16_t> counts_;
    std::vector<std::int32_t> received_;
};

const char* to_string(RoutingSpec::Distribution d);

}  // namespace npusim
