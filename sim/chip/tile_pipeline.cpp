#include "chip/tile_pipeline.hpp"

namespace npusim {

void TilePipeline::reset(int stages, std::uint64_t tiles, int depth, std::uint32_t port_mask) {
    stages_ = stages;
    port_mask_ = port_mask;
    tiles_ = tiles;
    depth_ = depth;
    next_.fill(0);
    done_.fill(0);
    busy_.fill(false);
}

bool TilePipeline::ready(int s) const {
    const std::uint64_t t = next_[s];
    if (busy_[s] || t >= tiles_) return false;
    if (s > 0 && done_[s - 1] <= t) return false;                  // input not produced yet
    if (s + 1 < stages_ && t - done_[s + 1] >= static_cast<std::uint64_t>(depth_)) return false;  // no free buffer
    return true;
}

bool TilePipeline::holds_up(int s) const {
    // Stage s - 1 has its input and is idle only for want of the buffer
    // stage s frees.
    const int p = s - 1;
    if (p < 0 || busy_[p] || next_[p] >= tiles_) return false;
    if (p > 0 && done_[p - 1] <= next_[p]) return false;
    return next_[p] - done_[s] >= static_cast<std::uint64_t>(depth_);
}

bool TilePipeline::can_start(int s, Host& host) const {
    if (!ready(s)) return false;
    if (!(port_mask_ >> s & 1u)) return true;
    // The port moves one stage's bytes at a time: loads (earlier stages)
    // first, so the next tile's data is on its way while stores wait,
    // unless the stage before a store waits for the buffer that store
    // frees: then the store goes first, whatever order simultaneous events
    // arrive in. Until 2026-12-03 loads always went first: a load that
    // could run ahead (a lower HBM latency freed its buffer sooner) kept a
    // finished accumulator's store waiting, L0C stayed full and the Cube
    // stalled (a 128 x 384 x 384 tile on ax300 took 13% longer at 150 ns
    // than at 200 ns). A stage with no work on this tile neither waits for
    // the port nor takes it.
    for (int o = 0; o < stages_; ++o) {
        if (!(port_mask_ >> o & 1u) || o == s) continue;
        if (busy_[o]) return !host.has_work(s, next_[s]);
        if (!ready(o)) continue;
        const bool urgent = holds_up(s);
        const bool first = holds_up(o) ? (!urgent || o < s) : (!urgent && o < s);
        if (first) return !host.has_work(s, next_[s]);
    }
    return true;
}

void TilePipeline::kick(Host& host) {
    // Later stages first, so a freed buffer is reused before earlier stages
    // look for one; repeat while a stage completed at once (no work).
    bool progress = true;
    while (progress) {
        progress = false;
        for (int s = stages_ - 1; s >= 0; --s) {
            while (can_start(s, host)) {
                const std::uint64_t t = next_[s]++;
                busy_[s] = true;
                if (host.begin_stage(s, t)) break;
                busy_[s] = false;
                ++done_[s];
                progress = true;
            }
        }
    }
}

void TilePipeline::stage_done(Host& host, int stage) {
    busy_[stage] = false;
    ++done_[stage];
    kick(host);
}

void TilePipeline::stage_drained(Host& host, int stage) {
    busy_[stage] = false;
    kick(host);
}

void TilePipeline::stage_arrived(Host& host, int stage) {
    ++done_[stage];
    kick(host);
}

}  // namespace npusim
