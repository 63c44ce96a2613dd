#include "compiler/dispatcher.hpp"

#include <algorithm>
#include <cmath>

namespace npusim::compiler {

namespace {

// Places tasks kernel by kernel on the cores (place_tasks).
class Placer {
public:
    Placer(const std::vector<TileTask>& tasks, const std::vector<std::vector<int>>& preds, const ChipParams& chip)
        : tasks_(tasks),
          preds_(preds),
          chip_(chip),
          out_(tasks.size()),
          cube_free_(static_cast<std::size_t>(std::max(1, chip.cube.count)), 0.0),
          vector_free_(static_cast<std::size_t>(std::max(1, chip.vector.count)), 0.0),
          cubes_(static_cast<int>(cube_free_.size())),
          vectors_(static_cast<int>(vector_free_.size())) {}
    std::vector<Placement> run();

private:
    std::pair<int, int> group(const TileTask& t, CoreType core) const;
    int beside(const TileTask& t, const TileTask& partner, int near) const;
    double ready(std::size_t t) const;
    void near_producer(std::size_t t, double ready, int glo, int ghi, int& best, double& best_start) const;
    void place(std::size_t t);
    void place_kernel(std::size_t lo, std::size_t hi, std::vector<std::size_t>& order);
    void replay(std::size_t lo, std::size_t hi);

    const std::vector<TileTask>& tasks_;
    const std::vector<std::vector<int>>& preds_;
    const ChipParams& chip_;
    std::vector<Placement> out_;
    std::vector<double> cube_free_, vector_free_;
    int cubes_, vectors_;
    // Tiles of the kernel being placed, per core, and the most one core may
    // take: a kernel of N tiles spreads over min(N, cores) cores, a whole
    // wave on every core as a launch over all of them does, even when the
    // estimate (serial, coarse) would stack two on a core it thinks frees
    // first: the estimate drifts from the run, and a stacked tile doubles
    // its kernel's span.
    std::vector<int> on_core_;
    int cap_ = 0;
};

// The cores a task may take: its core group's, or every core of its type.
std::pair<int, int> Placer::group(const TileTask& t, CoreType core) const {
    const int all = core == CoreType::cube ? cubes_ : vectors_;
    const int lo = std::min(t.core_hi > 0 ? t.core_lo : 0, all - 1);
    return std::make_pair(lo, t.core_hi > 0 ? std::min(t.core_hi, all) : all);
}

// The core beside a paired tile's partner: of the vector cores
// beside a Cube core (or the Cube cores beside a vector core when there
// are fewer vector cores), the one free first, then the one with fewer
// of this kernel's tiles, so a kernel's tiles alternate between them.
// Spread in proportion when the counts do not divide: a clamp to the
// last core would stack every tile of the higher cores on it.
int Placer::beside(const TileTask& t, const TileTask& partner, int near) const {
    const CoreType core = t.core;
    const auto& free = core == CoreType::cube ? cube_free_ : vector_free_;
    const auto [ml, mh] = group(t, core);
    const auto [ol, oh] = group(partner, partner.core);
    const int mine = mh - ml, other = oh - ol;
    near = std::clamp(near - ol, 0, other - 1);
    const int lo = ml + near * mine / other, hi = std::max(lo + 1, ml + (near + 1) * mine / other);
    int best = lo;  // near < other, so lo < hi <= mine
    for (int c = lo + 1; c < hi; ++c) {
        const auto cu = static_cast<std::size_t>(c), bu = static_cast<std::size_t>(best);
        if (free[cu] < free[bu] || (free[cu] == free[bu] && on_core_[cu] < on_core_[bu])) best = c;
    }
    return best;
}

// When a task's inputs are all estimated to have ended.
double Placer::ready(std::size_t t) const {
    double ready = 0;
    for (int p : preds_[t]) ready = std::max(ready, out_[static_cast<std::size_t>(p)].est_end);
    return ready;
}

// Coupled: prefer the vector unit beside the Cube producer if it
// costs little (its output is still near, in L1/UB and L2).
void Placer::near_producer(std::size_t t, double ready, int glo, int ghi, int& best, double& best_start) const {
    const auto& free = tasks_[t].core == CoreType::cube ? cube_free_ : vector_free_;
    for (int p : preds_[t]) {
        if (tasks_[static_cast<std::size_t>(p)].core != CoreType::cube) continue;
        const int c = out_[static_cast<std::size_t>(p)].core;
        if (c >= glo && c < ghi && on_core_[static_cast<std::size_t>(c)] < cap_) {
            // By load, not start: when all wait on the producer,
            // every start ties and the near core would take them all.
            const double s = std::max(ready, free[static_cast<std::size_t>(c)]);
            if (free[static_cast<std::size_t>(c)] <=
                free[static_cast<std::size_t>(best)] + 0.1 * tasks_[t].est_cycles) {
                best = c;
                best_start = s;
            }
        }
        break;
    }
}

void Placer::place(std::size_t t) {
    const double ready = this->ready(t);
    auto& free = tasks_[t].core == CoreType::cube ? cube_free_ : vector_free_;
    const auto [glo, ghi] = group(tasks_[t], tasks_[t].core);
    int best = -1;
    for (auto c = static_cast<std::size_t>(glo); c < static_cast<std::size_t>(ghi); ++c)
        if (on_core_[c] < cap_ && (best < 0 || free[c] < free[static_cast<std::size_t>(best)]))
            best = static_cast<int>(c);
    if (best < 0) best = glo;
    double best_start = std::max(ready, free[static_cast<std::size_t>(best)]);
    if (tasks_[t].paired >= 0) {
        // In place: the tile sits in the paired core's UB / its L2 slice.
        const int near = out_[static_cast<std::size_t>(tasks_[t].paired)].core;
        // A Cube tile paired with a Vector one (attention's p·v after its
        // softmax) goes back to the Cube core that core sits beside.
        best = beside(tasks_[t], tasks_[static_cast<std::size_t>(tasks_[t].paired)], near);
        best_start = std::max(ready, free[static_cast<std::size_t>(best)]);
    } else if (tasks_[t].core == CoreType::vector && chip_.layout == CoreLayout::coupled) {
        near_producer(t, ready, glo, ghi, best, best_start);
    }
    if (tasks_[t].pinned >= 0 && glo + tasks_[t].pinned < ghi) {
        best = glo + tasks_[t].pinned;  // a program's block, a collective's step: its own core
        best_start = std::max(ready, free[static_cast<std::size_t>(best)]);
    }
    out_[t].core = best;
    out_[t].est_start = best_start;
    out_[t].est_end = best_start + tasks_[t].est_cycles;
    free[static_cast<std::size_t>(best)] = out_[t].est_end;
    ++on_core_[static_cast<std::size_t>(best)];
}

// One run of a kernel's tiles of one core type, [lo, hi).
void Placer::place_kernel(std::size_t lo, std::size_t hi, std::vector<std::size_t>& order) {
    order.resize(hi - lo);
    const auto cores =
        static_cast<std::size_t>(tasks_[lo].core == CoreType::cube ? cube_free_.size() : vector_free_.size());
    const auto [glo, ghi] = group(tasks_[lo], tasks_[lo].core);
    const auto tiles = static_cast<int>(hi - lo);
    const int spread = std::min(tiles, ghi - glo);
    cap_ = (tiles + spread - 1) / spread;
    on_core_.assign(cores, 0);
    for (std::size_t i = lo; i < hi; ++i) order[i - lo] = i;
    // Tiles of one kernel that read each other keep their order.
    bool independent = true;
    for (std::size_t i = lo; i < hi && independent; ++i)
        for (int p : preds_[i]) independent = independent && static_cast<std::size_t>(p) < lo;
    if (independent)
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return tasks_[a].est_cycles > tasks_[b].est_cycles; });
    const auto cube_before = cube_free_, vector_before = vector_free_;
    for (const std::size_t t : order) place(t);
    // The run issues each core's tiles in stream (file) order, not in
    // the order they were placed: replay the kernel so, on the cores
    // chosen, each tile starts when its inputs and its core allow.
    // (Placed longest first, a short first tile of a row-ordered kernel
    // would look late, and so would every consumer tile reading it.)
    if (!std::is_sorted(order.begin(), order.end())) {
        cube_free_ = cube_before;
        vector_free_ = vector_before;
        replay(lo, hi);
    }
}

void Placer::replay(std::size_t lo, std::size_t hi) {
    for (std::size_t t = lo; t < hi; ++t) {
        const double ready = this->ready(t);
        double& at =
            (tasks_[t].core == CoreType::cube ? cube_free_ : vector_free_)[static_cast<std::size_t>(out_[t].core)];
        out_[t].est_start = std::max(ready, at);
        out_[t].est_end = at = out_[t].est_start + tasks_[t].est_cycles;
    }
}

// Kernel by kernel (the tiler emits a kernel's tiles together), longest
// estimate first, each tile to the core that frees first given the
// kernels before it: the earliest start too, since a tile starts at
// max(ready, free). Ties (all cores idle when a tile's inputs arrive) go
// to the lowest index, but a core just given a tile is no longer free, so
// a kernel whose tiles all wait on the same producer still spreads.
std::vector<Placement> Placer::run() {
    const std::size_t n = tasks_.size();
    std::vector<std::size_t> order;
    for (std::size_t lo = 0; lo < n;) {
        std::size_t hi = lo + 1;
        // (A fused attention kernel has Cube and Vector tiles: each run of one core type apart.)
        while (hi < n && tasks_[hi].kernel == tasks_[lo].kernel && tasks_[hi].core == tasks_[lo].core) ++hi;
        place_kernel(lo, hi, order);
        lo = hi;
    }
    return std::move(out_);
}

// Priority: the estimated work still ahead of a task (bottom level).
void assign_priorities(const std::vector<TileTask>& tasks, const std::vector<std::vector<int>>& preds,
                       std::vector<Placement>& out) {
    const std::size_t n = tasks.size();
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
}

}  // namespace

std::vector<Placement> place_tasks(const std::vector<TileTask>& tasks, const std::vector<std::vector<int>>& preds,
                                   const ChipParams& chip) {
    std::vector<Placement> out = Placer(tasks, preds, chip).run();
    assign_priorities(tasks, preds, out);
    return out;
}

}  // namespace npusim::compiler
