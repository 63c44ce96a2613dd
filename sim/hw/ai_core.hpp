// What Cube and Vector cores share: a task runs on the core through a
// double-buffered TilePipeline of pipes; compute stages end by an action
// on the die's WakeScheduler, transfer stages when the memory system
// delivers. Busy time is kept per core and per pipe for utilisation and
// overlap.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "hw/address_map.hpp"
#include "hw/memory_system.hpp"
#include "hw/sim_context.hpp"
#include "chip/tile_pipeline.hpp"
#include "engine/wake_scheduler.hpp"

namespace npusim {

class Stats;
struct RunSpan;

struct CoreListener {
    virtual void task_finished(CoreType type, int core, std::uint32_t task) = 0;
    virtual ~CoreListener() = default;
};

// One stage's work for one tile.
struct StageWork {
    // link: a write leaving the die over the mesh, timed like compute (its
    // end is known when it is posted) but counted as data movement.
    enum class Kind : std::uint8_t { none, compute, transfer, link } kind = Kind::none;
    double cycles = 0;         // compute, link
    TransferRequest transfer;  // transfer
    std::uint64_t bytes = 0;   // bytes this stage moves (for per-tier traffic)
    double flops = 0;          // compute: multiply-adds x 2 (the Cube's M stage), for the trace
};

struct PipeStats {
    std::uint64_t busy_ps = 0;
    std::uint64_t bytes = 0;
};

class AiCore : public sc_core::sc_module, public TransferClient, private TilePipeline::Host, private Wakeable {
public:
    AiCore(sc_core::sc_module_name name, CoreType type, int index, SimContext& ctx, CoreListener& listener,
           std::vector<std::string> pipe_names);

    void start(std::uint32_t task);
    bool idle() const { return !running_; }
    CoreType type() const { return type_; }
    int index() const { return index_; }

    std::uint64_t busy_ps() const { return busy_ps_; }
    std::uint64_t tasks_run() const { return tasks_run_; }
    const std::vector<std::string>& pipe_names() const { return pipe_names_; }
    const PipeStats& pipe(int i) const { return pipes_[i]; }
    int trace_tid() const { return tid_; }
    std::uint32_t running_task() const { return task_; }

    // cores.<type><index>.{busy_cycles,utilization,tasks,pipes.<pipe>.busy_cycles}.
    void report(Stats& s, const RunSpan& span) const;
    // The unit totals of the cores of one type: units.<type> and
    // units.<type>_<pipe>.{count,busy_cycles,utilization} (+ .bytes per
    // pipe), summed in core order. Nothing for no cores.
    static void report_units(Stats& s, const RunSpan& span, const std::vector<const AiCore*>& cores);
    // Bytes moved by pipe `pipe` of every core in `cores`.
    static std::uint64_t pipe_bytes(const std::vector<const AiCore*>& cores, int pipe);

    void transfer_drained(std::uint64_t stage) override;
    void transfer_done(std::uint64_t stage) override;

protected:
    // Scheduler actions of a running kernel program (VectorCore): kProgramAction | its own code.
    static constexpr std::uint64_t kProgramAction = std::uint64_t{1} << 48;
    // A task of kernel `program` starts (after its start cycles); the core
    // calls end_program_task() when the program has run to its end.
    virtual void start_program(const Task& t);
    virtual void program_wake(std::uint64_t action);
    void end_program_task() { finish_task(); }
    void program_post(std::uint64_t t_ps, std::uint64_t action) { ctx_.scheduler->at(t_ps, *this, kProgramAction | action); }
    // A program's instruction kept pipe `pipe` busy for ps and moved bytes
    // (through the GM port or the fabric when `transfer`).
    void record_busy(int pipe, std::uint64_t ps, std::uint64_t bytes, bool transfer);

    // Called at task start: how many tiles the task has.
    virtual std::uint64_t plan(const Task& t) = 0;
    virtual StageWork work(const Task& t, int stage, std::uint64_t tile) = 0;
    virtual int task_start_cycles() const = 0;

    SimContext& ctx_;
    AddressMap in_map_;   // the running task's input bytes in GM
    AddressMap out_map_;  // and its output bytes

private:
    // Scheduler actions: the task's start-up is over, or compute stage s ended.
    static constexpr std::uint64_t kStarted = ~std::uint64_t{0};
    static constexpr std::uint64_t kDrained = std::uint64_t{1} << 32;  // | stage
    static constexpr std::uint64_t kArrived = std::uint64_t{1} << 33;
    // A closed-form run's parts: its loads, its stores, its compute (bit 44:
    // a kernel program on the core tags its transfers with bit 40).
    static constexpr std::uint64_t kMacroRead = std::uint64_t{1} << 44, kMacroWrite = kMacroRead + 1,
                                   kMacroCompute = kMacroRead + 2;
    // A task of at least this many tiles runs in closed form
    // (docs/architecture.md, "Long tasks in closed form").
    static constexpr std::uint64_t kMacroMinTiles = 64;
    // Tiles of one closed-form step: the L2 model sees a chunk's addresses
    // at once, so a chunk runs no further ahead than the stepped pipeline.
    static constexpr std::uint64_t kMacroChunk = 4;
    void on_drained(std::uint64_t stage);
    void on_arrived(std::uint64_t stage);

    bool begin_stage(int stage, std::uint64_t tile) override;
    bool has_work(int stage, std::uint64_t tile) override;
    void wake(std::uint64_t action) override;
    void end_stage(int stage);          // compute stage finished
    void run_macro();
    void run_macro_chunk();
    void macro_part_done(std::uint64_t part);
    static bool macro_allowed();
    void record_stage(int stage);       // busy time and trace slice up to now
    void finish_task();
    void check_gm_reads(const Task& t);
    std::string task_label(const Task& t) const;
    // What held the task that ends now (hw/bound_by.hpp), `task_ps` long.
    BoundBy bound_by(std::uint64_t task_ps) const;
    // The task's bytes at their ports' rates: L2 read hits, L2 write hits, misses.
    double task_hit_port_ps_ = 0, task_hit_write_port_ps_ = 0, task_miss_port_ps_ = 0;
    int task_link_stage_ = -1;  // the stage that sends over the mesh, if any
    // Traced: bytes of each tile's input buffer in use (a tile's slot by its
    // index; double buffering keeps at most a few in flight).
    void take_in_buffer(std::uint64_t tile, std::uint64_t bytes);
    void give_in_buffer(std::uint64_t tile);
    std::array<std::uint64_t, 16> in_buffer_bytes_{};
    std::uint64_t in_buffer_total_ = 0;
    std::string in_buffer_counter_;
    std::uint64_t hbm_saturated_at_start_ = 0, l2_saturated_at_start_ = 0;

    CoreType type_;
    int index_;
    CoreListener& listener_;
    std::vector<std::string> pipe_names_;
    TilePipeline pipeline_;

    bool running_ = false;
    std::uint32_t task_ = 0;
    std::uint64_t tiles_ = 0;
    std::uint32_t port_ = 0;
    struct Macro {
        std::uint64_t end = 0;  // 0: the task runs tile by tile
        bool ran = false;       // every chunk has moved its bytes
        std::uint64_t next = 0;  // the next chunk's first tile
        int pending = 0;         // parts of the chunk running
        int arriving = 0;        // transfers moved whose data has not arrived
        std::uint64_t start_ps = 0;
        double pace_ps = 0, read_ps = 0, write_ps = 0;
        int read_stage = -1, write_stage = -1;
    } macro_;
    std::uint64_t macro_runs_ = 0, macro_tiles_ = 0;
    std::array<std::uint64_t, TilePipeline::kMaxStages> stage_start_{};
    std::array<std::uint64_t, TilePipeline::kMaxStages> stage_tile_{};
    // What a traced pipe slice says it did: bytes, FLOPs, L2 hits and misses.
    struct StageDid {
        std::uint64_t bytes = 0, l2_hit = 0, l2_miss = 0;
        double flops = 0;
        bool read = false;
    };
    std::array<StageDid, TilePipeline::kMaxStages> stage_did_{};
    // This task's busy time per stage and which stages move bytes through
    // the GM port: what bound it (TaskTiming::compute_ps / transfer_ps).
    std::array<std::uint64_t, TilePipeline::kMaxStages> task_stage_ps_{};
    std::array<bool, TilePipeline::kMaxStages> stage_transfer_{};
    std::uint64_t task_bytes_ = 0;
    std::uint32_t last_task_ = UINT32_MAX;
    std::vector<PipeStats> pipes_;
    int transfers_in_flight_ = 0;  // drained but not yet arrived
    std::uint64_t busy_ps_ = 0;
    std::uint64_t tasks_run_ = 0;
    int tid_ = 0;
    std::vector<int> pipe_tids_;
    double l2_read_cap_, l2_write_cap_;  // the port's rate for L2 hits, bytes/ps
};

}  // namespace npusim
