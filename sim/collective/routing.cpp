#include "collective/routing.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <tuple>

#include "common/mix64.hpp"

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

bool RoutingSpec::operator<(const RoutingSpec& o) const {
    return std::tie(distribution, skew, seed, redundant_experts) <
           std::tie(o.distribution, o.skew, o.seed, o.redundant_experts);
}

const char* to_string(RoutingSpec::Distribution d) { return d == RoutingSpec::Distribution::zipf ? "zipf" : "uniform"; }

Routing::Routing(const RoutingSpec& spec, int ranks, int batch, int top_k, int experts)
    : ranks_(ranks),
      batch_(batch),
      top_k_(top_k),
      pairs_(batch * top_k),
      logical_(experts),
      slots_(experts + spec.redundant_experts),
      epr_((experts + spec.redundant_experts) / std::max(1, ranks)),
      ids_(static_cast<std::size_t>(ranks) * batch * top_k),
      slots_of_(ids_.size()),
      counts_(static_cast<std::size_t>(ranks) * slots_, 0),
      received_(static_cast<std::size_t>(ranks), 0) {
    const bool zipf = spec.distribution == RoutingSpec::Distribution::zipf;
    // A seeded permutation of the experts: Zipf's popularity order (hot
    // experts spread over the ranks), and the hottest get the copies.
    std::vector<int> perm(static_cast<std::size_t>(logical_));
    for (int e = 0; e < logical_; ++e) perm[static_cast<std::size_t>(e)] = e;
    Stream s(spec.seed, 0xFFFFFFFFULL, 1);
    for (int e = logical_ - 1; e > 0; --e) std::swap(perm[static_cast<std::size_t>(e)], perm[static_cast<std::size_t>(s.below(e + 1))]);
    std::vector<double> cdf;
    if (zipf) {
        cdf.resize(static_cast<std::size_t>(logical_));
        double sum = 0;
        for (int e = 0; e < logical_; ++e) cdf[static_cast<std::size_t>(e)] = (sum += std::pow(e + 1.0, -spec.skew));
        for (double& c : cdf) c /= sum;
    }
    // Copies: copy j (slot experts + j) of the j-th hottest expert, one
    // expert at a time round the hottest ones when there are more copies.
    std::vector<std::vector<int>> copies(static_cast<std::size_t>(logical_));
    for (int j = 0; j < spec.redundant_experts; ++j)
        copies[static_cast<std::size_t>(perm[static_cast<std::size_t>(j % std::max(1, logical_))])].push_back(logical_ + j);
    std::vector<int> chosen;
    for (int r = 0; r < ranks_; ++r) {
        for (int t = 0; t < batch; ++t) {
            Stream st(spec.seed, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(t));
            chosen.clear();
            int tries = 0;
            while (static_cast<int>(chosen.size()) < top_k) {
                int e;
                if (!zipf) {
                    e = st.below(logical_);
                } else if (tries < 64) {
                    const double u = st.uniform();
                    const auto it = std::lower_bound(cdf.begin(), cdf.end(), u);
                    e = perm[static_cast<std::size_t>(std::min<std::ptrdiff_t>(it - cdf.begin(), logical_ - 1))];
                } else {
                    // Very steep skew: take the most popular expert not chosen yet.
                    e = -1;
                    for (int j = 0; j < logical_ && e < 0; ++j)
                        if (std::find(chosen.begin(), chosen.end(), perm[static_cast<std::size_t>(j)]) == chosen.end())
                            e = perm[static_cast<std::size_t>(j)];
                }
                ++tries;
                if (std::find(chosen.begin(), chosen.end(), e) != chosen.end()) continue;
                chosen.push_back(e);
            }
            for (int k = 0; k < top_k; ++k) {
                const int e = chosen[static_cast<std::size_t>(k)];
                const auto& c = copies[static_cast<std::size_t>(e)];
                // Among the expert and its copies, by hash of the token.
                const auto pick = c.empty() ? 0
                                            : static_cast<std::size_t>(mix64(spec.seed ^ mix64(index(r, t * top_k + k))) %
                                                                       (c.size() + 1));
                ids_[index(r, t * top_k + k)] = pick == 0 ? e : c[pick - 1];
            }
        }
        // Counts and slots in pair order.
        std::uint16_t* cnt = &counts_[static_cast<std::size_t>(r) * slots_];
        for (int q = 0; q < pairs_; ++q) {
            const int e = ids_[index(r, q)];
            slots_of_[index(r, q)] = cnt[e]++;
            received_[static_cast<std::size_t>(e / epr_)] += 1;
        }
    }
}

int Routing::received(int dst, int local) const {
    int n = 0;
    const int slot = dst * epr_ + local;
    for (int src = 0; src < ranks_; ++src) n += count(src, slot);
    return n;
}

std::shared_ptr<const Routing> Routing::shared(const RoutingSpec& spec, int ranks, int batch, int top_k, int experts) {
    // One simulation per process: the cache lives as long as the run. The
    // compiler may plan ranks on two threads.
    static std::mutex mutex;
    static std::map<std::tuple<RoutingSpec, int, int, int, int>, std::shared_ptr<const Routing>> cache;
    std::lock_guard<std::mutex> lk(mutex);
    auto& r = cache[std::make_tuple(spec, ranks, batch, top_k, experts)];
    if (!r) r = std::make_shared<const Routing>(spec, ranks, batch, top_k, experts);
    return r;
}

}  // namespace npusim
