// The time one task takes on one core when every pipe stage's duration is
// known up front: the same double-buffered schedule the hardware runs
// (chip/tile_pipeline.hpp), stepped through in plain C++. The compiler's
// cost model uses it, so its estimate of a task follows the hardware's pipe
// overlap, fill and drain instead of a max-of-pipes rule of its own.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "chip/tile_pipeline.hpp"

namespace npusim::timing {

struct StageCost {
    bool none = false;     // the stage has no work on this tile (done at once)
    double cycles = 0;     // the engine is busy this long
    double latency = 0;    // then the data arrives this much later (transfers)
    bool operator==(const StageCost& o) const { return none == o.none && cycles == o.cycles && latency == o.latency; }
};

namespace detail {

enum class Step : std::uint8_t { done, drained, arrived };

struct Due {
    double t;
    std::uint64_t seq;  // post order breaks ties, as the die's scheduler does
    int stage;
    Step step;
    // At equal times compute stages end before transfers: the die's
    // bandwidth model rounds a transfer's end up to the next picosecond.
    bool operator>(const Due& o) const {
        if (t != o.t) return t > o.t;
        const bool xfer = step != Step::done, o_xfer = o.step != Step::done;
        return xfer != o_xfer ? xfer : seq > o.seq;
    }
};

// Steps a TilePipeline with known stage costs (a template over the cost
// function: the planners rank many schedules, and a call through
// std::function per stage and tile showed in the profile). Its buffers are
// the thread's, kept from run to run: one Stepper of a kind runs at a time.
template <class Cost>
class Stepper {
public:
    explicit Stepper(const Cost& cost) : cost_(cost), due_(scratch().due), ring_(scratch().ring) { due_.clear(); }

    // `period`: tiles after which the costs repeat (0: none known). When the
    // schedule's state one period ago equals today's shifted by a period
    // (every stage a period further, the same work pending at the same
    // offsets), and the costs ahead repeat, it goes on periodically: the
    // run jumps whole periods at once. The same answer as stepping them.
    double run(int stages, std::uint64_t tiles, int depth, std::uint32_t port_mask, std::uint64_t period = 0) {
        pipe_.reset(stages, tiles, depth, port_mask);
        stages_ = stages;
        tiles_ = tiles;
        period_ = period;
        ring_set_ = false;
        pipe_.kick(*this);
        double end = 0;
        while (!due_.empty()) {
            const Due d = due_.back();
            due_.pop_back();
            now_ = d.t;
            end = now_;
            switch (d.step) {
                case Step::done: pipe_.stage_done(*this, d.stage); break;
                case Step::drained: pipe_.stage_drained(*this, d.stage); break;
                case Step::arrived: pipe_.stage_arrived(*this, d.stage); break;
            }
            if (period_ > 0 && pipe_.next(0) != seen_) {
                seen_ = pipe_.next(0);
                fast_forward();
            }
        }
        return end;
    }

    bool has_work(int stage, std::uint64_t tile) { return !cost_(stage, tile).none; }

    bool begin_stage(int stage, std::uint64_t tile) {
        const StageCost c = cost_(stage, tile);
        if (c.none) return false;
        if (c.latency > 0) {
            post(now_ + c.cycles, stage, Step::drained);
            post(now_ + c.cycles + c.latency, stage, Step::arrived);
        } else {
            post(now_ + c.cycles, stage, Step::done);
        }
        return true;
    }

private:
    static constexpr std::size_t kMaxDue = 16;
    static constexpr std::uint64_t kMinLagTiles = 8;
    struct Snapshot {
        std::uint64_t tile = ~0ULL;  // stage 0's next tile when it was taken
        double t = 0;
        typename BasicTilePipeline<Stepper>::State state;
        std::array<Due, kMaxDue> due;
        std::size_t n_due = 0;
    };

    // Whether the costs of the `lag` tiles each stage starts after its next
    // `skip` are those of the `lag` tiles before them.
    bool period_repeats(std::uint64_t skip, std::uint64_t lag) const {
        for (int s = 0; s < stages_; ++s)
            for (std::uint64_t x = pipe_.next(s) + skip; x < pipe_.next(s) + skip + lag; ++x)
                if (x >= tiles_ || !(cost_(s, x) == cost_(s, x - lag))) return false;
        return true;
    }

    bool matches(const Snapshot& old, std::uint64_t lag) const {
        const auto now = pipe_.state();
        for (int s = 0; s < stages_; ++s)
            if (now.next[s] != old.state.next[s] + lag || now.done[s] != old.state.done[s] + lag ||
                now.busy[s] != old.state.busy[s])
                return false;
        if (due_.size() != old.n_due) return false;
        for (std::size_t i = 0; i < due_.size(); ++i) {
            const Due& a = due_[i];
            const Due& b = old.due[i];
            if (a.stage != b.stage || a.step != b.step) return false;
            const double da = a.t - now_, db = b.t - old.t;
            if (std::abs(da - db) > 1e-9 * (1.0 + std::abs(da))) return false;
        }
        return true;
    }

    // Called when stage 0 has just started a new tile. The schedule may
    // repeat over a multiple of the costs' period (double buffering and a
    // shared port can alternate between two tiles' phases), so lags of a few
    // periods are tried, up to kMinLagTiles tiles.
    void fast_forward() {
        if (due_.size() > kMaxDue) return;
        if (!ring_set_) {
            max_lag_ = period_ * std::max<std::uint64_t>(1, kMinLagTiles / period_);
            // Any size above the longest lag keeps each lag's snapshot; a
            // power of two is indexed by a mask.
            std::size_t size = 1;
            while (size <= max_lag_) size *= 2;
            ring_.resize(size);
            for (Snapshot& s : ring_) s.tile = ~0ULL;
            ring_set_ = true;
        }
        const std::uint64_t mask = ring_.size() - 1;
        for (std::uint64_t lag = period_; lag <= max_lag_ && lag <= seen_; lag += period_) {
            const Snapshot& then = ring_[(seen_ - lag) & mask];
            if (then.tile != seen_ - lag || !matches(then, lag)) continue;
            const double shift = now_ - then.t;
            // Whole lags while the costs ahead repeat, the last ones stepped
            // (the drain).
            std::uint64_t times = 0;
            while (pipe_.next(0) + (times + 2) * lag <= tiles_ && period_repeats(times * lag, lag)) ++times;
            if (times > 0) {
                pipe_.advance(times * lag);
                const double by = shift * static_cast<double>(times);
                for (Due& d : due_) d.t += by;
                now_ += by;
                seen_ = pipe_.next(0);
            }
            break;
        }
        Snapshot& mine = ring_[seen_ & mask];
        mine.tile = seen_;
        mine.t = now_;
        mine.state = pipe_.state();
        mine.n_due = due_.size();
        std::copy(due_.begin(), due_.end(), mine.due.begin());
    }

    // A few events are pending at once (each stage's end, or a transfer's
    // drain and arrivals): a vector kept latest first, the next due at the
    // back, costs less here than a heap.
    void post(double t, int stage, Step s) {
        const Due d{t, seq_++, stage, s};
        due_.push_back(d);
        std::size_t i = due_.size() - 1;
        for (; i > 0 && d > due_[i - 1]; --i) due_[i] = due_[i - 1];
        due_[i] = d;
    }

    struct Scratch {
        std::vector<Due> due;
        std::vector<Snapshot> ring;
    };
    static Scratch& scratch() {
        thread_local Scratch s;
        return s;
    }

    const Cost& cost_;
    BasicTilePipeline<Stepper> pipe_;
    std::vector<Due>& due_;  // latest first
    double now_ = 0;
    std::uint64_t seq_ = 0;
    int stages_ = 0;
    std::uint64_t tiles_ = 0, period_ = 0, seen_ = 0, max_lag_ = 0;
    std::vector<Snapshot>& ring_;  // by stage 0's next tile, one period back at most
    bool ring_set_ = false;
};

}  // namespace detail

// Cycles of `tiles` tiles from `run(n)`, the cycles of the first n of them
// stepped: tasks of more than `exact_tiles` tiles are stepped for that many
// and extrapolated at the rate of the second half of them (steady state).
template <class Run>
double extrapolated_cycles(std::uint64_t tiles, std::uint64_t exact_tiles, const Run& run) {
    if (tiles == 0) return 0;
    if (tiles <= exact_tiles || exact_tiles < 2) return run(tiles);
    const std::uint64_t half = exact_tiles / 2;
    const double t_half = run(half);
    const double t_full = run(exact_tiles);
    const double per_tile = (t_full - t_half) / static_cast<double>(exact_tiles - half);
    return t_full + per_tile * static_cast<double>(tiles - exact_tiles);
}

// Cycles from the first stage starting until the last stage of the last tile
// has finished and every transfer has arrived, extrapolated past
// `exact_tiles` tiles (extrapolated_cycles). Stages in `port_mask` share
// one port (chip/tile_pipeline.hpp). `cost(stage, tile)` gives a StageCost.
template <class Cost>
double pipelined_cycles(int stages, std::uint64_t tiles, int depth, const Cost& cost, std::uint64_t exact_tiles = 4096,
                        std::uint32_t port_mask = 0, std::uint64_t period = 0) {
    return extrapolated_cycles(tiles, exact_tiles, [&](std::uint64_t n) {
        return detail::Stepper<Cost>(cost).run(stages, n, depth, port_mask, period);
    });
}

}  // namespace npusim::timing
