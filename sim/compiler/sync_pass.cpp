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

// Which groups a task of each group can reach walking up at least one
// edge: the ancestor-or-self groups of its groups' direct preds, and itself
// when a task of it has a pred in it. A bit per group, rows of
// ceil(groups / 64) words; the ancestors are iterated to a fixpoint over
// the distinct group edges (groups may feed each other both ways).
std::vector<std::uint64_t> groups_above(const std::vector<std::vector<int>>& preds, const std::vector<int>& group,
                                        std::size_t groups, std::size_t words) {
    std::set<std::pair<int, int>> edges;  // (pred group, task group)
    std::vector<std::uint64_t> above(groups * words, 0);
    const auto set = [&](std::vector<std::uint64_t>& rows, std::size_t k, std::size_t bit) {
        rows[k * words + bit / 64] |= std::uint64_t{1} << (bit % 64);
    };
    for (std::size_t t = 0; t < preds.size(); ++t)
        for (int q : preds[t]) {
            const auto from = static_cast<std::size_t>(group[static_cast<std::size_t>(q)]);
            const auto to = static_cast<std::size_t>(group[t]);
            if (from != to) edges.emplace(static_cast<int>(from), static_cast<int>(to));
            else set(above, to, to);
        }
    std::vector<std::uint64_t> anc(groups * words, 0);
    for (std::size_t k = 0; k < groups; ++k) set(anc, k, k);
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
    for (const auto& [from, to] : edges)
        for (std::size_t w = 0; w < words; ++w)
            above[static_cast<std::size_t>(to) * words + w] |= anc[static_cast<std::size_t>(from) * words + w];
    return above;
}

// The reduction's walk (transitive_reduction): exact, in memory linear in
// tasks + edges (and groups^2 bits with groups). For each task, a walk up
// from its preds (through the already reduced preds of earlier tasks,
// which keep the same ancestors) marks every pred reachable from another
// one. Preds come before their task, so the walk never goes below the
// lowest pred. With groups (a task's kernel), the walk goes up from a task
// only while a group of the preds still to be found is above its group
// (groups_above): a tile of a producer op is not walked through to the ops
// before it, and a consumer of every tile of a wide producer does not scan
// each tile's own preds.
class PredWalk {
public:
    PredWalk(std::vector<std::vector<int>>& preds, const std::vector<int>* group) : preds_(preds), group_(group) {
        std::size_t groups = 0;
        if (group)
            for (const int k : *group) groups = std::max(groups, static_cast<std::size_t>(k) + 1);
        words_ = (groups + 63) / 64;
        if (group) above_ = groups_above(preds, *group, groups, words_);
        wanted_.assign(words_, 0);
        wanted_count_.assign(groups, 0);
        seen_.assign(preds.size(), 0);
        is_pred_.assign(preds.size(), 0);
    }

    // Drops task t's preds that another of its preds reaches; returns how many.
    std::size_t reduce(std::size_t t) {
        auto& p = preds_[t];
        if (p.size() < 2) return 0;
        stamp_ = t + 1;
        lowest_ = *std::min_element(p.begin(), p.end());
        for (int q : p) {
            is_pred_[static_cast<std::size_t>(q)] = stamp_;
            want(q, true);
        }
        left_ = p.size();
        // Highest first: a pred reached from a higher one is redundant and
        // its ancestors are already walked; a pred whose turn has come can
        // no longer be reached (only higher ones lead to it).
        for (auto it = p.rbegin(); it != p.rend() && left_ > 1; ++it) {
            if (seen_[static_cast<std::size_t>(*it)] == stamp_) continue;
            seen_[static_cast<std::size_t>(*it)] = stamp_;
            want(*it, false);
            if (useful(*it)) walk_from(*it);
        }
        if (group_)  // preds left when the walk stopped early
            for (int q : p) {
                const auto k = static_cast<std::size_t>((*group_)[static_cast<std::size_t>(q)]);
                wanted_count_[k] = 0;
                wanted_[k / 64] = 0;
            }
        const std::size_t redundant = p.size() - left_;
        if (redundant > 0)
            p.erase(std::remove_if(p.begin(), p.end(),
                                   [&](int q) { return is_pred_[static_cast<std::size_t>(q)] != stamp_; }),
                    p.end());
        return redundant;
    }

private:
    void walk_from(int start) {
        stack_.assign(1, start);
        while (!stack_.empty() && left_ > 1) {
            const int u = stack_.back();
            stack_.pop_back();
            // Preds are sorted: from the highest down to `lowest_` only.
            const auto& up = preds_[static_cast<std::size_t>(u)];
            for (auto ai = up.rbegin(); ai != up.rend() && *ai >= lowest_; ++ai) {
                const int a = *ai;
                if (seen_[static_cast<std::size_t>(a)] == stamp_) continue;
                seen_[static_cast<std::size_t>(a)] = stamp_;
                if (is_pred_[static_cast<std::size_t>(a)] == stamp_) {
                    is_pred_[static_cast<std::size_t>(a)] = 0;  // redundant
                    --left_;
                    want(a, false);
                }
                if (useful(a)) stack_.push_back(a);
            }
        }
    }
    // The groups of the preds still to be found: a count per group, its bit
    // set while the count is not zero.
    void want(int q, bool yes) {
        if (!group_) return;
        const auto k = static_cast<std::size_t>((*group_)[static_cast<std::size_t>(q)]);
        const std::uint64_t bit = std::uint64_t{1} << (k % 64);
        if (yes && wanted_count_[k]++ == 0) wanted_[k / 64] |= bit;
        if (!yes && --wanted_count_[k] == 0) wanted_[k / 64] &= ~bit;
    }
    // Whether a pred still to be found may lie above task a.
    bool useful(int a) const {
        if (!group_) return true;
        const std::uint64_t* row = &above_[static_cast<std::size_t>((*group_)[static_cast<std::size_t>(a)]) * words_];
        for (std::size_t w = 0; w < words_; ++w)
            if (row[w] & wanted_[w]) return true;
        return false;
    }

    std::vector<std::vector<int>>& preds_;
    const std::vector<int>* group_;
    std::size_t words_ = 0;
    std::vector<std::uint64_t> above_, wanted_;
    std::vector<std::uint32_t> wanted_count_;
    std::vector<std::size_t> seen_, is_pred_;  // stamps: t + 1 while reducing t
    std::vector<int> stack_;
    std::size_t stamp_ = 0, left_ = 0;  // left_: preds not found redundant
    int lowest_ = 0;
};

}  // namespace

std::size_t transitive_reduction(std::vector<std::vector<int>>& preds, const std::vector<int>* group) {
    PredWalk walk(preds, group);
    std::size_t removed = 0;
    for (std::size_t t = 0; t < preds.size(); ++t) removed += walk.reduce(t);
    return removed;
}

namespace {

std::vector<std::uint32_t> tiles_per_kernel(const std::vector<TileTask>& tasks, const KernelPlan& plan) {
    std::vector<std::uint32_t> tiles(plan.kernels.size(), 0);
    for (const TileTask& t : tasks) ++tiles[static_cast<std::size_t>(t.kernel)];
    return tiles;
}

// The counting event "op:<kernel name>" of each kernel `counted` (kernel
// names are unique: form_kernels), which all its tiles signal; returns
// each kernel's index in s.events (0 where not counted).
std::vector<std::uint32_t> declare_op_events(const KernelPlan& plan, const std::vector<bool>& counted,
                                             const std::vector<std::uint32_t>& tiles, SyncPlan& s) {
    std::vector<std::uint32_t> at(plan.kernels.size(), 0);
    for (std::size_t k = 0; k < plan.kernels.size(); ++k)
        if (counted[k]) {
            at[k] = static_cast<std::uint32_t>(s.events.size());
            s.events.emplace_back(fmt::format("op:{}", plan.kernels[k].name), tiles[k]);
        }
    return at;
}

// Tile granularity: a task waits for each tile it reads, except that one
// reading every tile of a producer op (attention over a whole K cache, a
// GEMM over a whole activation) waits for that op's counting event: the
// same moment (its last tile signals), one wait instead of one per tile.
template <class TileEvent>
void wait_per_tile(const std::vector<TileTask>& tasks, const KernelPlan& plan, SyncPlan& s, TileEvent tile_event) {
    const std::vector<std::uint32_t> tiles = tiles_per_kernel(tasks, plan);
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
    const std::vector<std::uint32_t> op_event_at = declare_op_events(plan, op_event, tiles, s);
    for (std::size_t t = 0; t < tasks.size(); ++t) {
        const auto own = static_cast<std::size_t>(tasks[t].kernel);
        if (op_event[own]) s.signal[t].push_back(op_event_at[own]);
        const std::vector<int> whole = whole_producers(t);
        for (int k : whole) s.wait[t].push_back(op_event_at[static_cast<std::size_t>(k)]);
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
    // Task p's own event "t<p>", declared the first time a task waits on it
    // and signalled first by p.
    std::vector<std::uint32_t> tile_event_at(tasks.size(), UINT32_MAX);
    auto tile_event = [&](int p) {
        std::uint32_t& at = tile_event_at[static_cast<std::size_t>(p)];
        if (at == UINT32_MAX) {
            at = static_cast<std::uint32_t>(s.events.size());
            auto& sig = s.signal[static_cast<std::size_t>(p)];
            sig.insert(sig.begin(), at);
            s.events.emplace_back(fmt::format("t{}", p), 1);
        }
        return at;
    };

    if (sync == SyncGranularity::tile) {
        wait_per_tile(tasks, plan, s, tile_event);
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
        std::vector<bool> has_event(plan.kernels.size(), false);
        for (std::size_t c = 0; c < kp.size(); ++c)
            for (int p : kp[c]) has_event[static_cast<std::size_t>(p)] = true;
        const std::vector<std::uint32_t> op_event_at =
            declare_op_events(plan, has_event, tiles_per_kernel(tasks, plan), s);
        for (std::size_t t = 0; t < tasks.size(); ++t) {
            const auto k = static_cast<std::size_t>(tasks[t].kernel);
            if (has_event[k]) s.signal[t].push_back(op_event_at[k]);
            for (int p : kp[k]) s.wait[t].push_back(op_event_at[static_cast<std::size_t>(p)]);
            if (tasks[t].paired >= 0) s.wait[t].push_back(tile_event(tasks[t].paired));
        }
    }
    for (const auto& w : s.wait) s.edges_after += w.size();
    return s;
}

}  // namespace npusim::compiler
