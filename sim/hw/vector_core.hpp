// Vector core (AIV): pipes MTE2 (GM->UB), V (repeats of repeat_bytes of
// lanes, rows padded to whole repeats, times the op's cycles per repeat, plus
// an issue cost per instruction) and MTE3 (UB->GM), double-buffered through
// UB in chunks. The chunk plan and each pipe's work per chunk are the chip
// layer's formulas (chip/timing.hpp). A copy with a dst_rank leaves through
// the fabric instead: its MTE3 chunks go out as DataBlocks (send).
//
// The same core runs kernel programs (hw/program, hw/aiv_core): a task of
// kernel `program` runs its program on a stack of its own, issuing into
// these pipes and this GM port; one model of the core for both.
#pragma once
#include <memory>

#include "chip/timing.hpp"
#include "engine/fiber.hpp"
#include "hw/ai_core.hpp"
#include "hw/aiv_core.hpp"
#include "hw/fabric.hpp"

namespace npusim {

class VectorCore : public AiCore {
public:
    enum Pipe { mte2, v, mte3 };
    VectorCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener);
    ~VectorCore() override;
    // The traffic through the vector cores' UB, over all of `vectors`:
    // memory.ub.in_bytes (MTE2) and memory.ub.out_bytes (MTE3); zero for no
    // cores. And units.vector.replanned_tasks: tasks whose carried chunk did not fit.
    static void report_buffers(Stats& s, const std::vector<const AiCore*>& vectors);

    // A write leaving this core's UB for w.dst_rank's GM (the own rank's
    // too), its first byte at t0: its wire bytes go through the core's GM
    // port, and to another rank also off the die's planes, which a full
    // receiver holds back. One cost for a copy task's MTE3 and a program's.
    struct Sent {
        std::uint64_t port_ps = 0;  // the port is free again
        std::uint64_t free_ps = 0;  // MTE3 is free again
        std::uint64_t land_ps = 0;  // the last block has landed
    };
    Sent send(const WriteRequest& w, std::uint64_t t0);

    // --- the running program's side (hw/aiv_core) -----------------------------
    void program_at(std::uint64_t t_ps, std::uint64_t action);  // a wake of the program at t_ps
    void suspend_program();                                     // from the program's stack
    void resume_program();
    void add_pipe_busy(int pipe, std::uint64_t ps, std::uint64_t bytes);
    void program_watch_fired(std::uint64_t tag, std::uint64_t fire_ps);
    // The program task still running at the end, and what it waits for ("" if none).
    std::string program_wait() const;
    Addr program_wait_addr() const { return aiv_ ? aiv_->waiting_at() : 0; }

    void transfer_drained(std::uint64_t tag) override;
    void transfer_done(std::uint64_t tag) override;

private:
    std::uint64_t plan(const Task& t) override;
    StageWork work(const Task& t, int stage, std::uint64_t tile) override;
    int task_start_cycles() const override { return timing::task_start_cycles(CoreType::vector, ctx_.chip); }
    void start_program(const Task& t) override;
    void program_wake(std::uint64_t action) override;

    // The task being run, as the timing layer sees it, and its chunk plan.
    timing::VectorShape shape_of(const Task& t) const;
    // A copy's MTE3 chunk to another rank's GM, over the fabric.
    StageWork remote_write(const Task& t, const timing::VectorTile& c);
    timing::VectorShape shape_;
    timing::VectorPlan plan_;
    bool planned_ = false;  // plan_ is for shape_'s sizes
    std::uint64_t chunk_ = 0;      // ... and the chunk the task carried
    bool adopted_ = false;         // plan_ is that chunk's
    std::uint64_t replanned_ = 0;  // tasks whose carried chunk did not fit this chip
    double gm_cap_;         // MTE2/MTE3 GM rate, bytes/ps (a division, kept)
    std::unique_ptr<AivCore> aiv_;   // the kernel API, made at the first program task
    std::unique_ptr<Fiber> fiber_;   // the running program's stack
};

}  // namespace npusim
