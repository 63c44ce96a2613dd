#include "moe/routing.hpp"

#include <algorithm>
#include <cmath>

#include "mesh/plane_hash.hpp"

namespace npusim {

namespace {

// A counter-based stream: value i of stream (seed, a, b).
struct Stream {
    std::uint64_t key;
    std::uint64_t i = 0;
    Stream(std::uint64_t seed, std::uint64_t a, std::uint64_t b) : key(mix64(mix64(seed) ^ mix64(a * 0x100000001B3ULL + b))) {}
    std::uint64_t next() { return mix64(key + 0x9E3779B97F4A7C15ULL * ++i); }
    double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
    int below(int n) { return static_cast<int>((next() >> 11) % static_cast<std::uint64_t>(n)); }
};

}  // namespace

Routing::Routing(const MoeParams& p)
    : ranks_(p.ranks),
      pairs_(p.batch * p.top_k),
      experts_(p.experts()),
      epr_(p.experts_per_rank),
      ids_(static_cast<std::size_t>(p.ranks) * p.batch * p.top_k),
      slots_(ids_.size()),
      counts_(static_cast<std::size_t>(p.ranks) * p.experts(), 0),
      received_(static_cast<std::size_t>(p.ranks), 0) {
    // Skewed: Zipf weights over a seeded permutation of the experts (so hot
    // experts are spread over ranks), sampled through the cumulative sum.
    std::vector<int> perm(static_cast<std::size_t>(experts_));
    std::vector<double> cdf;
    if (p.skewed()) {
        for (int e = 0; e < experts_; ++e) perm[static_cast<std::size_t>(e)] = e;
        Stream s(p.seed, 0xFFFFFFFFULL, 1);
        for (int e = experts_ - 1; e > 0; --e) std::swap(perm[static_cast<std::size_t>(e)], perm[static_cast<std::size_t>(s.below(e + 1))]);
        cdf.resize(static_cast<std::size_t>(experts_));
        double sum = 0;
        for (int e = 0; e < experts_; ++e) cdf[static_cast<std::size_t>(e)] = (sum += std::pow(e + 1.0, -p.skew));
        for (double& c : cdf) c /= sum;
    }
    std::vector<int> chosen;
    for (int r = 0; r < ranks_; ++r) {
        for (int t = 0; t < p.batch; ++t) {
            Stream s(p.seed, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(t));
            chosen.clear();
            int tries = 0;
            while (static_cast<int>(chosen.size()) < p.top_k) {
                int e;
                if (!p.skewed()) {
                    e = s.below(experts_);
                } else if (tries < 64) {
                    const double u = s.uniform();
                    const auto it = std::lower_bound(cdf.begin(), cdf.end(), u);
                    e = perm[static_cast<std::size_t>(std::min<std::ptrdiff_t>(it - cdf.begin(), experts_ - 1))];
                } else {
                    // Very steep skew: take the most popular expert not chosen yet.
                    e = -1;
                    for (int j = 0; j < experts_ && e < 0; ++j)
                        if (std::find(chosen.begin(), chosen.end(), perm[static_cast<std::size_t>(j)]) == chosen.end())
                            e = perm[static_cast<std::size_t>(j)];
                }
                ++tries;
                if (std::find(chosen.begin(), chosen.end(), e) != chosen.end()) continue;
                chosen.push_back(e);
            }
            for (int k = 0; k < p.top_k; ++k) ids_[index(r, t * p.top_k + k)] = chosen[static_cast<std::size_t>(k)];
        }
        // Counts and slots in pair order.
        std::uint16_t* cnt = &counts_[static_cast<std::size_t>(r) * experts_];
        for (int q = 0; q < pairs_; ++q) {
            const int e = ids_[index(r, q)];
            slots_[index(r, q)] = cnt[e]++;
            received_[static_cast<std::size_t>(e / epr_)] += 1;
        }
    }
}

}  // namespace npusim
