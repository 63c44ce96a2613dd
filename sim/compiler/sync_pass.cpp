#include "compiler/sync_pass.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

namespace npusim::compiler {

namespace {
// Regions of one global address space meet (hbm and l2 name the same bytes).
bool overlaps_any_space(const Region& a, Region b) {
    b.space = a.space;
    return overlaps(a, b);
}
}  // namespace

std::vector<std::vector<int>> data_dependences(const std::vector<TileTask>& tasks) {
    struct Written {
        std::uint64_t lo, hi;  // the region's envelope
        int task;
        const Region* region;
    };
    std::vector<Written> w;
    for (std::size_t i = 0; i < tasks.size(); ++i)
        for (const Region& r : tasks[i].writes) w.push_back({r.addr, r.end(), static_cast<int>(i), &r});
    std::sort(w.begin(), w.end(), [](const Written& a, const Written& b) { return a.lo != b.lo ? a.lo < b.lo : a.task < b.task; });
    // reach[i]: the furthest end of writes 0..i. It never decreases, so the
    // first write that can overlap a read [lo, hi) is the first with
    // reach > lo: one binary search, then only writes that start before hi
    // (one long write elsewhere no longer widens every scan).
    std::vector<std::uint64_t> reach(w.size());
    std::uint64_t furthest = 0;
    for (std::size_t i = 0; i < w.size(); ++i) reach[i] = furthest = std::max(furthest, w[i].hi);
    std::vector<std::vector<int>> preds(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        std::vector<int>& p = preds[i];
        for (const Region& r : tasks[i].reads) {
            const std::uint64_t lo = r.addr, hi = r.end();
            auto k = static_cast<std::size_t>(std::upper_bound(reach.begin(), reach.end(), lo) - reach.begin());
            for (; k < w.size() && w[k].lo < hi; ++k)
                if (w[k].hi > lo && w[k].task < static_cast<int>(i) && (p.empty() || p.back() != w[k].task) &&
                    overlaps_any_space(*w[k].region, r))
                    p.push_back(w[k].task);
        }
        std::sort(p.begin(), p.end());
        p.erase(std::unique(p.begin(), p.end()), p.end());
    }
    return preds;
}

namespace {

// Which groups reach which (ancestor-or-self), from the task edges: a bit
// per group, rows of ceil(groups / 64) words; iterated to a fixpoint over
// the distinct group edges (groups may feed each other both ways).
std::vector<std::uint64_t> group_ancestors(const std::vector<std::vector<int>>& preds, const std::vector<int>& group,
                                           std::size_t groups, std::size_t words) {
    std::set<std::pair<int, int>> edges;  // (pred group, task group)
    for (std::size_t t = 0; t < preds.size(); ++t)
        for (int q : preds[t])
            if (group[static_cast<std::size_t>(q)] != group[t]) edges.emplace(group[static_cast<std::size_t>(q)], group[t]);
    std::vector<std::uint64_t> anc(groups * words, 0);
    for (std::size_t k = 0; k < groups; ++k) anc[k * words + k / 64] |= std::uint64_t{1} << (k % 64);
    for (bool changed = true; changed;) {
        changed = false;
        for (const auto& [from, to] : edges)
            for (std::size_t w = 0; w < words; ++w) {
                std::uint64_t& dst = anc[static_cast<std::size_t>(to) * words + w];
                const std::uint64_t add = anc[static_cast<std::size_t>(from) * words + w] & ~dst;
                if (add) {
                    dst |= add;
                    changed = true;
                }
            }
    }
    return anc;
}

}  // namespace

std::size_t transitive_reduction(std::vector<std::vector<int>>& preds, const std::vector<int>* group) {
    // Exact, in memory linear in tasks + edges (and groups^2 bits with
    // groups): for each task, a walk up
    // from its preds (through the already reduced preds of earlier tasks,
    // which keep the same ancestors) marks every pred reachable from another
    // one. Preds come before their task, so the walk never goes below the
    // lowest pred: in a layered graph it sees little more than the preds.
    // With groups (a task's kernel), the walk enters only tasks whose group
    // has a group of the preds among its ancestors: a tile of a producer
    // op is not walked through to the ops before it.
    const std::size_t n = preds.size();
    std::size_t groups = 0;
    if (group)
        for (const int k : *group) groups = std::max(groups, static_cast<std::size_t>(k) + 1);
    const std::size_t words = (groups + 63) / 64;
    const std::vector<std::uint64_t> anc = group ? group_ancestors(preds, *group, groups, words) : std::vector<std::uint64_t>{};
    std::vector<std::uint64_t> wanted(words);  // the groups of the preds of the task being reduced
    const auto useful = [&](int a) {
        if (!group) return true;
        const std::uint64_t* row = &anc[static_cast<std::size_t>((*group)[static_cast<std::size_t>(a)]) * words];
        for (std::size_t w = 0; w < words; ++w)
            if (row[w] & wanted[w]) return true;
        return false;
    };
    std::vector<std::size_t> seen(n, 0), is_pred(n, 0);  // stamps: t + 1 while reducing t
    std::vector<int> stack;
    std::size_t removed = 0;
    for (std::size_t t = 0; t < n; ++t) {
        auto& p = preds[t];
        if (p.size() < 2) continue;
        const std::size_t stamp = t + 1;
        const int lowest = *std::min_element(p.begin(), p.end());
        std::fill(wanted.begin(), wanted.end(), 0);
        for (int q : p) {
            is_pred[static_cast<std::size_t>(q)] = stamp;
            if (group) {
                const auto k = static_cast<std::size_t>((*group)[static_cast<std::size_t>(q)]);
                wanted[k / 64] |= std::uint64_t{1} << (k % 64);
            }
        }
        std::size_t redundant = 0;
        // Highest first: a pred reached from a higher one is redundant and
        // its ancestors are already walked.
        for (auto it = p.rbegin(); it != p.rend() && redundant + 1 < p.size(); ++it) {
            if (seen[static_cast<std::size_t>(*it)] == stamp) continue;
            seen[static_cast<std::size_t>(*it)] = stamp;
            stack.assign(1, *it);
            while (!stack.empty() && redundant + 1 < p.size()) {
                const int u = stack.back();
                stack.pop_back();
                // Preds are sorted: from the highest down to `lowest` only.
                const auto& up = preds[static_cast<std::size_t>(u)];
                for (auto ai = up.rbegin(); ai != up.rend() && *ai >= lowest; ++ai) {
                    const int a = *ai;
                    if (seen[static_cast<std::size_t>(a)] == stamp) continue;
                    seen[static_cast<std::size_t>(a)] = stamp;
                    if (is_pred[static_cast<std::size_t>(a)] == stamp) {
                        is_pred[static_cast<std::size_t>(a)] = 0;  // redundant
                        ++redundant;
                    }
                    if (useful(a)) stack.push_back(a);
                }
            }
        }
        if (redundant == 0) continue;
        p.erase(std::remove_if(p.begin(), p.end(), [&](int q) { return is_pred[static_cast<std::size_t>(q)] != stamp; }),
                p.end());
        removed += redundant;
    }
    return removed;
}

namespace {

// Each kernel's counting event: "op:<kernel name>" (kernel names are
// unique: form_kernels).
std::vector<std::string> op_event_ids(const KernelPlan& plan) {
    std::vector<std::string> ids;
    for (const Kernel& k : plan.kernels) ids.push_back(fmt::format("op:{}", k.name));
    return ids;
}

// Tile granularity: a task waits for each tile it reads, except that one
// reading every tile of a producer op (attention over a whole K cache, a
// GEMM over a whole activation) waits for that op's counting event: the
// same moment (its last tile signals), one wait instead of one per tile.
template <class TileEvent>
void wait_per_tile(const std::vector<TileTask>& tasks, const KernelPlan& plan, const std::vector<std::string>& op_ids,
                   SyncPlan& s, TileEvent tile_event) {
    std::vector<std::uint32_t> tiles(plan.kernels.size(), 0);
    for (const TileTask& t : tasks) ++tiles[static_cast<std::size_t>(t.kernel)];
    std::vector<std::uint32_t> seen(plan.kernels.size(), 0);
    std::vector<bool> op_event(plan.kernels.size(), false);
    const auto whole_producers = [&](std::size_t t) {
        std::vector<int> whole;
        for (int p : s.preds[t]) {
            const auto k = static_cast<std::size_t>(tasks[static_cast<std::size_t>(p)].kernel);
            if (static_cast<int>(k) != tasks[t].kernel && ++seen[k] == tiles[k] && tiles[k] > 1) whole.push_back(static_cast<int>(k));
        }
        for (int p : s.preds[t]) seen[static_cast<std::size_t>(tasks[static_cast<std::size_t>(p)].kernel)] = 0;
        return whole;
    };
    for (std::size_t t = 0; t < tasks.size(); ++t)
        for (int k : whole_producers(t)) op_event[static_cast<std::size_t>(k)] = true;
    for (std::size_t k = 0; k < plan.kernels.size(); ++k)
        if (op_event[k]) s.events.emplace_back(op_ids[k], tiles[k]);
    for (std::size_t t = 0; t < tasks.size(); ++t) {
        const int own = tasks[t].kernel;
        if (op_event[static_cast<std::size_t>(own)]) s.signal[t].push_back(op_ids[static_cast<std::size_t>(own)]);
        const std::vector<int> whole = whole_producers(t);
        for (int k : whole) s.wait[t].push_back(op_ids[static_cast<std::size_t>(k)]);
        for (int p : s.preds[t]) {
            const int k = tasks[static_cast<std::size_t>(p)].kernel;
            if (std::find(whole.begin(), whole.end(), k) == whole.end()) s.wait[t].push_back(tile_event(p));
        }
    }
}

}  // namespace

SyncPlan insert_sync(const std::vector<TileTask>& tasks, const KernelPlan& plan, SyncGranularity sync) {
    SyncPlan s;
    s.preds = data_dependences(tasks);
    for (const auto& p : s.preds) s.edges_before += p.size();
    // Groups of consecutive kernels, at most kMaxSyncGroups (their
    // reachability bits are groups^2): any grouping gives the same edges.
    constexpr int kMaxSyncGroups = 4096;
    const int per_group = (static_cast<int>(plan.kernels.size()) + kMaxSyncGroups - 1) / kMaxSyncGroups;
    std::vector<int> kernel_of(tasks.size());
    for (std::size_t t = 0; t < tasks.size(); ++t) kernel_of[t] = std::max(0, tasks[t].kernel) / std::max(1, per_group);
    transitive_reduction(s.preds, &kernel_of);
    s.wait.resize(tasks.size());
    s.signal.resize(tasks.size());
    const std::vector<std::string> op_ids = op_event_ids(plan);
    auto tile_event = [&](int p) {
        const std::string id = fmt::format("t{}", p);
        if (s.signal[static_cast<std::size_t>(p)].empty() || s.signal[static_cast<std::size_t>(p)].front() != id) {
            s.signal[static_cast<std::size_t>(p)].insert(s.signal[static_cast<std::size_t>(p)].begin(), id);
            s.events.emplace_back(id, 1);
        }
        return id;
    };

    if (sync == SyncGranularity::tile) {
        wait_per_tile(tasks, plan, op_ids, s, tile_event);
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
            if (has_event[k]) s.events.emplace_back(op_ids[k], static_cast<std::uint32_t>(tiles[k]));
        for (std::size_t t = 0; t < tasks.size(); ++t) {
            const int k = tasks[t].kernel;
            if (has_event[static_cast<std::size_t>(k)]) s.signal[t].push_back(op_ids[static_cast<std::size_t>(k)]);
            for (int p : kp[static_cast<std::size_t>(k)]) s.wait[t].push_back(op_ids[static_cast<std::size_t>(p)]);
            if (tasks[t].paired >= 0) s.wait[t].push_back(tile_event(tasks[t].paired));
        }
    }
    for (const auto& w : s.wait) s.edges_after += w.size();
    return s;
}

}  // namespace npusim::compiler
