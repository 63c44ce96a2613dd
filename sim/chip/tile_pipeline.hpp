// The double-buffered pipe schedule inside one core (docs/design.md §2): S stages
// (e.g. MTE2 -> MTE1 -> M -> FixPipe) over N tiles. A stage works on one
// tile at a time, in tile order; a tile enters stage s when stage s-1 has
// finished it and a buffer between s and s+1 is free (depth 2 = double
// buffering). So a tile costs the max of its stages in steady state plus
// fill and drain. Stages in `port_mask` are transfers through the core's one
// GM port: at most one of them moves bytes at a time (loads first), so a
// core copying in and out at once gets the port's rate in total.
// Plain C++: the core supplies time and work.
#pragma once
#include <array>
#include <cstdint>

namespace npusim {

// What a pipe schedule asks of the core that runs it.
struct TilePipelineHost {
    // Start `stage` on `tile`. Return false if it has no work (it then
    // completes at once); otherwise call stage_done(stage) when it ends.
    virtual bool begin_stage(int stage, std::uint64_t tile) = 0;
    // Whether `stage` has work on `tile`, asked only of a port stage the
    // port holds up: one with none (FixPipe while L0C accumulates) passes
    // at once and neither waits for the port nor takes it.
    virtual bool has_work(int stage, std::uint64_t tile) = 0;
    virtual ~TilePipelineHost() = default;
};

// The schedule over a host type: the hardware's cores through the virtual
// TilePipelineHost, the compiler's stepped schedules (pipeline_schedule.hpp)
// through their own type, so its calls inline.
template <class Host>
class BasicTilePipeline {
public:
    static constexpr int kMaxStages = 4;

    void reset(int stages, std::uint64_t tiles, int depth, std::uint32_t port_mask = 0) {
        stages_ = stages;
        port_mask_ = port_mask;
        tiles_ = tiles;
        depth_ = depth;
        next_.fill(0);
        done_.fill(0);
        busy_.fill(false);
    }
    // Starts whatever can start now. Call after reset and after stage_done.
    void kick(Host& host);
    // The stage's engine is free for the next tile and its data has arrived.
    void stage_done(Host& host, int stage) {
        busy_[stage] = false;
        ++done_[stage];
        kick(host);
    }
    // A transfer stage's engine has moved its bytes and may start the next
    // tile; the data arrives later (stage_arrived), after the tier latency,
    // so latency overlaps the next transfer as in a real MTE queue.
    void stage_drained(Host& host, int stage) {
        busy_[stage] = false;
        kick(host);
    }
    void stage_arrived(Host& host, int stage) {
        ++done_[stage];
        kick(host);
    }

    bool finished() const { return done_[stages_ - 1] == tiles_; }
    std::uint64_t tiles() const { return tiles_; }

    // What a schedule's fast-forward compares and moves (pipeline_schedule.hpp).
    struct State {
        std::array<std::uint64_t, kMaxStages> next{}, done{};
        std::array<bool, kMaxStages> busy{};
    };
    State state() const { return State{next_, done_, busy_}; }
    std::uint64_t next(int stage) const { return next_[stage]; }
    // Every stage `tiles` further on, as if it had run them.
    void advance(std::uint64_t tiles) {
        for (int s = 0; s < stages_; ++s) next_[s] += tiles, done_[s] += tiles;
    }

private:
    bool ready(int s) const;      // input produced and a buffer free
    bool can_start(int s, Host& host) const;  // ... and its port free (or it has no work)
    bool holds_up(int s) const;   // the stage before s waits only for a buffer s frees

    int stages_ = 0;
    int depth_ = 2;
    std::uint32_t port_mask_ = 0;
    std::uint64_t tiles_ = 0;
    std::array<std::uint64_t, kMaxStages> next_{};  // next tile to start, per stage
    std::array<std::uint64_t, kMaxStages> done_{};  // tiles finished, per stage
    std::array<bool, kMaxStages> busy_{};
};

class TilePipeline : public BasicTilePipeline<TilePipelineHost> {
public:
    using Host = TilePipelineHost;
};

template <class Host>
bool BasicTilePipeline<Host>::ready(int s) const {
    const std::uint64_t t = next_[s];
    if (busy_[s] || t >= tiles_) return false;
    if (s > 0 && done_[s - 1] <= t) return false;                  // input not produced yet
    if (s + 1 < stages_ && t - done_[s + 1] >= static_cast<std::uint64_t>(depth_)) return false;  // no free buffer
    return true;
}

template <class Host>
bool BasicTilePipeline<Host>::holds_up(int s) const {
    // Stage s - 1 has its input and is idle only for want of the buffer
    // stage s frees.
    const int p = s - 1;
    if (p < 0 || busy_[p] || next_[p] >= tiles_) return false;
    if (p > 0 && done_[p - 1] <= next_[p]) return false;
    return next_[p] - done_[s] >= static_cast<std::uint64_t>(depth_);
}

template <class Host>
bool BasicTilePipeline<Host>::can_start(int s, Host& host) const {
    if (!ready(s)) return false;
    if (!(port_mask_ >> s & 1u)) return true;
    // The port moves one stage's bytes at a time: loads (earlier stages)
    // first, so the next tile's data is on its way while stores wait,
    // unless the stage before a store waits for the buffer that store
    // frees: then the store goes first, whatever order simultaneous events
    // arrive in (else a load that runs ahead keeps a finished accumulator's
    // store waiting, L0C stays full and the Cube stalls). A stage with no
    // work on this tile neither waits for the port nor takes it.
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

template <class Host>
void BasicTilePipeline<Host>::kick(Host& host) {
    // Later stages first, so a freed buffer is reused before earlier stages
    // look for one; repeat while a stage completed at once (no work) before
    // the last: that produced the input of a stage already looked at. The
    // last stage's own completion frees only a buffer of the stages looked
    // at after it.
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
                progress |= s + 1 < stages_;
            }
        }
    }
}

extern template class BasicTilePipeline<TilePipelineHost>;

}  // namespace npusim
