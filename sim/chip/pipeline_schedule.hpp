// The time one task takes on one core when every pipe stage's duration is
// known up front: the same double-buffered schedule the hardware runs
// (chip/tile_pipeline.hpp), stepped through in plain C++. The compiler's
// cost model uses it, so its estimate of a task follows the hardware's pipe
// overlap, fill and drain instead of a max-of-pipes rule of its own.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "chip/tile_pipeline.hpp"

namespace npusim::timing {

struct StageCost {
    bool none = false;     // the stage has no work on this tile (done at once)
    double cycles = 0;     // the engine is busy this long
    double latency = 0;    // then the data arrives this much later (transfers)
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
// std::function per stage and tile showed in the profile).
template <class Cost>
class Stepper : public TilePipeline::Host {
public:
    explicit Stepper(const Cost& cost) : cost_(cost) { due_.reserve(16); }

    double run(int stages, std::uint64_t tiles, int depth, std::uint32_t port_mask) {
        pipe_.reset(stages, tiles, depth, port_mask);
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
        }
        return end;
    }

    bool has_work(int stage, std::uint64_t tile) override { return !cost_(stage, tile).none; }

    bool begin_stage(int stage, std::uint64_t tile) override {
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
    // A few events are pending at once (each stage's end, or a transfer's
    // drain and arrivals): a vector kept latest first, the next due at the
    // back, costs less here than a heap.
    void post(double t, int stage, Step s) {
        const Due d{t, seq_++, stage, s};
        auto it = due_.end();
        while (it != due_.begin() && d > *(it - 1)) --it;
        due_.insert(it, d);
    }

    const Cost& cost_;
    TilePipeline pipe_;
    std::vector<Due> due_;  // latest first
    double now_ = 0;
    std::uint64_t seq_ = 0;
};

}  // namespace detail

// Cycles from the first stage starting until the last stage of the last tile
// has finished and every transfer has arrived. Tasks of more than
// `exact_tiles` tiles are stepped for that many and extrapolated at the rate
// of the second half of them (steady state). Stages in `port_mask` share
// one port (chip/tile_pipeline.hpp). `cost(stage, tile)` gives a StageCost.
template <class Cost>
double pipelined_cycles(int stages, std::uint64_t tiles, int depth, const Cost& cost, std::uint64_t exact_tiles = 4096,
                        std::uint32_t port_mask = 0) {
    if (tiles == 0) return 0;
    if (tiles <= exact_tiles || exact_tiles < 2) return detail::Stepper<Cost>(cost).run(stages, tiles, depth, port_mask);
    const std::uint64_t half = exact_tiles / 2;
    const double t_half = detail::Stepper<Cost>(cost).run(stages, half, depth, port_mask);
    const double t_full = detail::Stepper<Cost>(cost).run(stages, exact_tiles, depth, port_mask);
    const double per_tile = (t_full - t_half) / static_cast<double>(exact_tiles - half);
    return t_full + per_tile * static_cast<double>(tiles - exact_tiles);
}

}  // namespace npusim::timing
