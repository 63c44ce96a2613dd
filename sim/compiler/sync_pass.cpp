#include "compiler/sync_pass.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace npusim::compiler {

std::vector<std::vector<int>> data_dependences(const std::vector<TileTask>& tasks) {
    struct Written {
        std::uint64_t lo, hi;
        int task;
    };
    std::vector<Written> w;
    for (std::size_t i = 0; i < tasks.size(); ++i)
        for (const Region& r : tasks[i].writes) w.push_back({r.addr, r.addr + r.bytes, static_cast<int>(i)});
    std::sort(w.begin(), w.end(), [](const Written& a, const Written& b) { return a.lo != b.lo ? a.lo < b.lo : a.task < b.task; });
    // Longest write, to bound the backward scan.
    std::uint64_t longest = 0;
    for (const auto& x : w) longest = std::max(longest, x.hi - x.lo);
    std::vector<std::vector<int>> preds(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        std::vector<int>& p = preds[i];
        for (const Region& r : tasks[i].reads) {
            const std::uint64_t lo = r.addr, hi = r.addr + r.bytes;
            auto it = std::lower_bound(w.begin(), w.end(), lo >= longest ? lo - longest : 0,
                                       [](const Written& a, std::uint64_t v) { return a.lo < v; });
            for (; it != w.end() && it->lo < hi; ++it)
                if (it->hi > lo && it->task < static_cast<int>(i)) p.push_back(it->task);
        }
        std::sort(p.begin(), p.end());
        p.erase(std::unique(p.begin(), p.end()), p.end());
    }
    return preds;
}

std::size_t transitive_reduction(std::vector<std::vector<int>>& preds) {
    const std::size_t n = preds.size();
    const std::size_t words = (n + 63) / 64;
    // Ancestor sets as bitsets: n^2/8 bytes, fine for the tens of thousands
    // of tasks a model compiles to.
    std::vector<std::uint64_t> anc(n * words, 0);
    std::size_t removed = 0;
    for (std::size_t t = 0; t < n; ++t) {
        std::uint64_t* a = &anc[t * words];
        auto& p = preds[t];
        for (int q : p) {
            const std::uint64_t* aq = &anc[static_cast<std::size_t>(q) * words];
            for (std::size_t w = 0; w < words; ++w) a[w] |= aq[w];
        }
        // p is redundant if some other pred already has it as an ancestor.
        const std::size_t before = p.size();
        p.erase(std::remove_if(p.begin(), p.end(), [&](int q) { return a[static_cast<std::size_t>(q) / 64] >> (q % 64) & 1; }),
                p.end());
        removed += before - p.size();
        for (int q : p) a[static_cast<std::size_t>(q) / 64] |= 1ULL << (q % 64);
    }
    return removed;
}

SyncPlan insert_sync(const std::vector<TileTask>& tasks, const KernelPlan& plan, SyncGranularity sync) {
    SyncPlan s;
    s.preds = data_dependences(tasks);
    for (const auto& p : s.preds) s.edges_before += p.size();
    transitive_reduction(s.preds);
    s.wait.resize(tasks.size());
    s.signal.resize(tasks.size());
    auto tile_event = [&](int p) {
        const std::string id = fmt::format("t{}", p);
        if (s.signal[static_cast<std::size_t>(p)].empty() || s.signal[static_cast<std::size_t>(p)].front() != id) {
            s.signal[static_cast<std::size_t>(p)].insert(s.signal[static_cast<std::size_t>(p)].begin(), id);
            s.events.emplace_back(id, 1);
        }
        return id;
    };

    if (sync == SyncGranularity::tile) {
        for (std::size_t t = 0; t < tasks.size(); ++t)
            for (int p : s.preds[t]) s.wait[t].push_back(tile_event(p));
    } else {
        // Lift to ops: a consumer op waits for every tile of each producer op
        // (one counting event), except fused pairs, which stay per tile.
        std::map<int, std::set<int>> op_preds;  // consumer kernel -> producer kernels
        for (std::size_t t = 0; t < tasks.size(); ++t)
            for (int p : s.preds[t]) {
                const TileTask& pt = tasks[static_cast<std::size_t>(p)];
                if (tasks[t].paired == p) continue;
                if (pt.kernel != tasks[t].kernel) op_preds[tasks[t].kernel].insert(pt.kernel);
            }
        // Reduce at op level too.
        std::vector<std::vector<int>> kp(plan.kernels.size());
        for (const auto& [c, ps] : op_preds) kp[static_cast<std::size_t>(c)].assign(ps.begin(), ps.end());
        transitive_reduction(kp);
        std::vector<int> tiles(plan.kernels.size(), 0);
        for (const TileTask& t : tasks) ++tiles[static_cast<std::size_t>(t.kernel)];
        std::vector<bool> has_event(plan.kernels.size(), false);
        for (std::size_t c = 0; c < kp.size(); ++c)
            for (int p : kp[c]) has_event[static_cast<std::size_t>(p)] = true;
        for (std::size_t k = 0; k < plan.kernels.size(); ++k)
            if (has_event[k]) s.events.emplace_back(fmt::format("op:{}", plan.kernels[k].name), static_cast<std::uint32_t>(tiles[k]));
        for (std::size_t t = 0; t < tasks.size(); ++t) {
            const int k = tasks[t].kernel;
            if (has_event[static_cast<std::size_t>(k)]) s.signal[t].push_back(fmt::format("op:{}", plan.kernels[static_cast<std::size_t>(k)].name));
            for (int p : kp[static_cast<std::size_t>(k)]) s.wait[t].push_back(fmt::format("op:{}", plan.kernels[static_cast<std::size_t>(p)].name));
            if (tasks[t].paired >= 0) s.wait[t].push_back(tile_event(tasks[t].paired));
        }
    }
    for (const auto& w : s.wait) s.edges_after += w.size();
    return s;
}

}  // namespace npusim::compiler
