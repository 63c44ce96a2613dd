#include "chip/pipeline_schedule.hpp"

#include <queue>
#include <vector>

#include "chip/tile_pipeline.hpp"

namespace npusim::timing {

namespace {

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

class Stepper : public TilePipeline::Host {
public:
    explicit Stepper(const std::function<StageCost(int, std::uint64_t)>& cost) : cost_(cost) {}

    double run(int stages, std::uint64_t tiles, int depth, std::uint32_t port_mask) {
        pipe_.reset(stages, tiles, depth, port_mask);
        pipe_.kick(*this);
        double end = 0;
        while (!due_.empty()) {
            const Due d = due_.top();
            due_.pop();
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
    void post(double t, int stage, Step s) { due_.push(Due{t, seq_++, stage, s}); }

    const std::function<StageCost(int, std::uint64_t)>& cost_;
    TilePipeline pipe_;
    std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
    double now_ = 0;
    std::uint64_t seq_ = 0;
};

}  // namespace

double pipelined_cycles(int stages, std::uint64_t tiles, int depth,
                        const std::function<StageCost(int, std::uint64_t)>& cost, std::uint64_t exact_tiles,
                        std::uint32_t port_mask) {
    if (tiles == 0) return 0;
    if (tiles <= exact_tiles || exact_tiles < 2) return Stepper(cost).run(stages, tiles, depth, port_mask);
    const std::uint64_t half = exact_tiles / 2;
    const double t_half = Stepper(cost).run(stages, half, depth, port_mask);
    const double t_full = Stepper(cost).run(stages, exact_tiles, depth, port_mask);
    const double per_tile = (t_full - t_half) / static_cast<double>(exact_tiles - half);
    return t_full + per_tile * static_cast<double>(tiles - exact_tiles);
}

}  // namespace npusim::timing
