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

class TilePipeline {
public:
    static constexpr int kMaxStages = 4;

    struct Host {
        // Start `stage` on `tile`. Return false if it has no work (it then
        // completes at once); otherwise call stage_done(stage) when it ends.
        virtual bool begin_stage(int stage, std::uint64_t tile) = 0;
        // Whether `stage` has work on `tile`, asked only of a port stage the
        // port holds up: one with none (FixPipe while L0C accumulates) passes
        // at once and neither waits for the port nor takes it.
        virtual bool has_work(int stage, std::uint64_t tile) = 0;
        virtual ~Host() = default;
    };

    void reset(int stages, std::uint64_t tiles, int depth, std::uint32_t port_mask = 0);
    // Starts whatever can start now. Call after reset and after stage_done.
    void kick(Host& host);
    // The stage's engine is free for the next tile and its data has arrived.
    void stage_done(Host& host, int stage);
    // A transfer stage's engine has moved its bytes and may start the next
    // tile; the data arrives later (stage_arrived), after the tier latency,
    // so latency overlaps the next transfer as in a real MTE queue.
    void stage_drained(Host& host, int stage);
    void stage_arrived(Host& host, int stage);

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

}  // namespace npusim
