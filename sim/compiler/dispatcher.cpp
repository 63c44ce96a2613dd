#include "compiler/dispatcher.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace npusim::compiler {

namespace {

// One scalar dispatch slot's busy time, as merged [start, end) intervals:
// every task takes the slot for dispatch_cycles before it can start. Tasks
// are booked kernel by kernel, not in time order (a later kernel of a
// parallel branch may be ready sooner), so a booking takes the first gap.
class DispatchSlot {
public:
    // The start of the first free stretch of `d` at or after `t`.
    double first_free(double t, double d) const {
        auto it = busy_.upper_bound(t);
        if (it != busy_.begin() && std::prev(it)->second > t) t = std::prev(it)->second;
        while (it != busy_.end() && it->first < t + d) t = std::max(t, it->second), ++it;
        return t;
    }
    // Books [t, t + d).
    void take(double t, double d) {
        double lo = t, hi = t + d;
        auto it = busy_.lower_bound(lo);
        if (it != busy_.begin() && std::prev(it)->second >= lo) lo = (--it)->first;
        while (it != busy_.end() && it->first <= hi) hi = std::max(hi, it->second), it = busy_.erase(it);
        busy_.emplace(lo, hi);
    }
private:
    std::map<double, double> busy_;
};

}  // namespace

std::vector<Placement> place_tasks(const std::vector<TileTask>& tasks, const std::vector<std::vector<int>>& preds,
                                   const ChipParams& chip) {
    const std::size_t n = tasks.size();
    std::vector<Placement> out(n);
    std::vector<double> cube_free(static_cast<std::size_t>(std::max(1, chip.cube.count)), 0.0);
    std::vector<double> vector_free(static_cast<std::size_t>(std::max(1, chip.vector.count)), 0.0);
    const int cubes = static_cast<int>(cube_free.size()), vectors = static_cast<int>(vector_free.size());
    // Tiles of the kernel being placed, per core, and the most one core may
    // take: a kernel of N tiles spreads over min(N, cores) cores, a whole
    // wave on every core as a launch over all of them does, even when the
    // estimate (serial, coarse) would stack two on a core it thinks frees
    // first: the estimate drifts from the run, and a stacked tile doubles
    // its kernel's span.
    std::vector<int> on_core;
    int cap = 0;
    // The core beside a paired tile's partner: of the vector cores
    // beside a Cube core (or the Cube cores beside a vector core when there
    // are fewer vector cores), the one free first, then the one with fewer
    // of this kernel's tiles, so a kernel's tiles alternate between them.
    // Spread in proportion when the counts do not divide: a clamp to the
    // last core would stack every tile of the higher cores on it.
    // The cores a task may take: its core group's, or every core of its type.
    const auto group = [&](const TileTask& t, CoreType core) {
        const int all = core == CoreType::cube ? cubes : vectors;
        const int lo = std::min(t.core_hi > 0 ? t.core_lo : 0, all - 1);
        return std::make_pair(lo, t.core_hi > 0 ? std::min(t.core_hi, all) : all);
    };
    const auto beside = [&](const TileTask& t, const TileTask& partner, int near) {
        const CoreType core = t.core;
        const auto& free = core == CoreType::cube ? cube_free : vector_free;
        const auto [ml, mh] = group(t, core);
        const auto [ol, oh] = group(partner, partner.core);
        const int mine = mh - ml, other = oh - ol;
        near = std::clamp(near - ol, 0, other - 1);
        const int lo = ml + near * mine / other, hi = std::max(lo + 1, ml + (near + 1) * mine / other);
        int best = lo;  // near < other, so lo < hi <= mine
        for (int c = lo + 1; c < hi; ++c) {
            const auto cu = static_cast<std::size_t>(c), bu = static_cast<std::size_t>(best);
            if (free[cu] < free[bu] || (free[cu] == free[bu] && on_core[cu] < on_core[bu])) best = c;
        }
        return best;
    };
    const auto place = [&](std::size_t t) {
        double ready = 0;
        for (int p : preds[t]) ready = std::max(ready, out[static_cast<std::size_t>(p)].est_end);
        auto& free = tasks[t].core == CoreType::cube ? cube_free : vector_free;
        const auto [glo, ghi] = group(tasks[t], tasks[t].core);
        int best = -1;
        for (auto c = static_cast<std::size_t>(glo); c < static_cast<std::size_t>(ghi); ++c)
            if (on_core[c] < cap && (best < 0 || free[c] < free[static_cast<std::size_t>(best)])) best = static_cast<int>(c);
        if (best < 0) best = glo;
        double best_start = std::max(ready, free[static_cast<std::size_t>(best)]);
        if (tasks[t].paired >= 0) {
            // In place: the tile sits in the paired core's UB / its L2 slice.
            const int near = out[static_cast<std::size_t>(tasks[t].paired)].core;
            // A Cube tile paired with a Vector one (attention's p·v after its
            // softmax) goes back to the Cube core that core sits beside.
            best = beside(tasks[t], tasks[static_cast<std::size_t>(tasks[t].paired)], near);
            best_start = std::max(ready, free[static_cast<std::size_t>(best)]);
        } else if (tasks[t].core == CoreType::vector && chip.layout == CoreLayout::coupled) {
            // Coupled: prefer the vector unit beside the Cube producer if it
            // costs little (its output is still near, in L1/UB and L2).
            for (int p : preds[t]) {
                if (tasks[static_cast<std::size_t>(p)].core != CoreType::cube) continue;
                const int c = out[static_cast<std::size_t>(p)].core;
                if (c >= glo && c < ghi && on_core[static_cast<std::size_t>(c)] < cap) {
                    // By load, not start: when all wait on the producer,
                    // every start ties and the near core would take them all.
                    const double s = std::max(ready, free[static_cast<std::size_t>(c)]);
                    if (free[static_cast<std::size_t>(c)] <= free[static_cast<std::size_t>(best)] + 0.1 * tasks[t].est_cycles) {
                        best = c;
                        best_start = s;
                    }
                }
                break;
            }
        }
        if (tasks[t].pinned >= 0 && glo + tasks[t].pinned < ghi) {
            best = glo + tasks[t].pinned;  // a program's block, a collective's step: its own core
            best_start = std::max(ready, free[static_cast<std::size_t>(best)]);
        }
        out[t].core = best;
        out[t].est_start = best_start;
        out[t].est_end = best_start + tasks[t].est_cycles;
        free[static_cast<std::size_t>(best)] = out[t].est_end;
        ++on_core[static_cast<std::size_t>(best)];
    };
    // Kernel by kernel (the tiler emits a kernel's tiles together), longest
    // estimate first, each tile to the core that frees first given the
    // kernels before it: the earliest start too, since a tile starts at
    // max(ready, free). Ties (all cores idle when a tile's inputs arrive) go
    // to the lowest index, but a core just given a tile is no longer free, so
    // a kernel whose tiles all wait on the same producer still spreads.
    std::vector<std::size_t> order;
    for (std::size_t lo = 0; lo < n;) {
        std::size_t hi = lo + 1;
        // (A fused attention kernel has Cube and Vector tiles: each run of one core type apart.)
        while (hi < n && tasks[hi].kernel == tasks[lo].kernel && tasks[hi].core == tasks[lo].core) ++hi;
        order.resize(hi - lo);
        const auto cores = static_cast<std::size_t>(tasks[lo].core == CoreType::cube ? cube_free.size() : vector_free.size());
        const auto [glo, ghi] = group(tasks[lo], tasks[lo].core);
        const auto tiles = static_cast<int>(hi - lo);
        const int spread = std::min(tiles, ghi - glo);
        cap = (tiles + spread - 1) / spread;
        on_core.assign(cores, 0);
        for (std::size_t i = lo; i < hi; ++i) order[i - lo] = i;
        // Tiles of one kernel that read each other keep their order.
        bool independent = true;
        for (std::size_t i = lo; i < hi && independent; ++i)
            for (int p : preds[i]) independent = independent && static_cast<std::size_t>(p) < lo;
        if (independent)
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t a, std::size_t b) { return tasks[a].est_cycles > tasks[b].est_cycles; });
        const auto cube_before = cube_free, vector_before = vector_free;
        for (const std::size_t t : order) place(t);
        // The run issues each core's tiles in stream (file) order, not in
        // the order they were placed: replay the kernel so, on the cores
        // chosen, each tile starts when its inputs and its core allow.
        // (Placed longest first, a short first tile of a row-ordered kernel
        // would look late, and so would every consumer tile reading it.)
        if (!std::is_sorted(order.begin(), order.end())) {
            cube_free = cube_before;
            vector_free = vector_before;
            for (std::size_t t = lo; t < hi; ++t) {
                double ready = 0;
                for (int p : preds[t]) ready = std::max(ready, out[static_cast<std::size_t>(p)].est_end);
                double& at = (tasks[t].core == CoreType::cube ? cube_free : vector_free)[static_cast<std::size_t>(out[t].core)];
                out[t].est_start = std::max(ready, at);
                out[t].est_end = at = out[t].est_start + tasks[t].est_cycles;
            }
        }
        lo = hi;
    }
    // Priority: the estimated work still ahead of a task (bottom level).
    std::vector<double> bottom(n, 0.0);
    std::vector<std::vector<int>> succ(n);
    for (std::size_t t = 0; t < n; ++t)
        for (int p : preds[t]) succ[static_cast<std::size_t>(p)].push_back(static_cast<int>(t));
    double top = 0;
    for (std::size_t i = n; i-- > 0;) {
        double m = 0;
        for (int s : succ[i]) m = std::max(m, bottom[static_cast<std::size_t>(s)]);
        bottom[i] = tasks[i].est_cycles + m;
        top = std::max(top, bottom[i]);
    }
    // In millionths of the longest (the stream's priority range): the order
    // of the bottom levels, not rounded to a coarse unit whose boundaries
    // would sort tiles of one kernel by an estimate's last digits.
    for (std::size_t i = 0; i < n; ++i)
        out[i].priority = top > 0 ? static_cast<int>(std::floor(bottom[i] / top * 1e6)) : 0;
    return out;
}

double schedule_end(const std::vector<TileTask>& tasks, const std::vector<std::vector<int>>& preds,
                    const std::vector<Placement>& where, const ChipParams& chip) {
    std::vector<DispatchSlot> slots(static_cast<std::size_t>(std::max(1, chip.scalar.count)));
    const auto dispatch = static_cast<double>(std::max(0, chip.scalar.dispatch_cycles));
    // Per core, the ends of its tasks so far: a core's queue holds
    // queue_depth tasks beside the one it runs, so a slot can dispatch a
    // core's next task once the one queue_depth + 1 before it has ended.
    const auto room = static_cast<std::size_t>(std::max(0, chip.scalar.queue_depth)) + 1;
    std::vector<std::vector<double>> cube_ends(static_cast<std::size_t>(std::max(1, chip.cube.count)));
    std::vector<std::vector<double>> vector_ends(static_cast<std::size_t>(std::max(1, chip.vector.count)));
    std::vector<double> end(tasks.size(), 0.0);
    double last = 0;
    for (std::size_t t = 0; t < tasks.size(); ++t) {
        double ready = 0;
        for (int p : preds[t]) ready = std::max(ready, end[static_cast<std::size_t>(p)]);
        auto& ends = (tasks[t].core == CoreType::cube ? cube_ends : vector_ends)[static_cast<std::size_t>(where[t].core)];
        const double at = ends.empty() ? 0.0 : ends.back();
        // A slot dispatches a tile once it is ready and its core's queue
        // has room.
        const double want = std::max(ready, ends.size() >= room ? ends[ends.size() - room] : 0.0);
        std::size_t slot = 0;
        double d0 = slots[0].first_free(want, dispatch);
        for (std::size_t s = 1; s < slots.size(); ++s)
            if (const double ds = slots[s].first_free(want, dispatch); ds < d0) d0 = ds, slot = s;
        slots[slot].take(d0, dispatch);
        end[t] = std::max(d0 + dispatch, at) + tasks[t].est_cycles;
        ends.push_back(end[t]);
        last = std::max(last, end[t]);
    }
    return last;
}

}  // namespace npusim::compiler
