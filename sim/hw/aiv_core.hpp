// The kernel API of one AIV core (Ascend-C-like; docs/supernode.md): what a
// kernel program can say, and what each call costs. A program (hw/program)
// runs as one task of kernel `program` on a die's vector core, on a stack of
// its own (engine/fiber) that suspends where the core would wait; the
// vector core's own pipes, GM port, pipe statistics and trace track are
// what it uses, as a compiled vector task does.
//
// Pipes. The scalar unit issues instructions into the queues of the pipes —
// MTE2 (GM -> UB), V (vector), MTE3 (UB -> GM, local or remote) — which run
// concurrently, each in order. A pipe call returns a PipeTime: when that
// instruction completes. Passing it as `after` to another call makes that
// instruction wait for it (SetFlag/WaitFlag between pipes); wait(t) makes the
// scalar wait (WaitFlag on S); pipe_barrier() waits for every pipe. So
// double buffering is: issue the copy_in of token i+1, then the write of
// token i after its pack.
//
// Time. The scalar runs on a core-local clock; purely local calls (scalar,
// vector, timestamps) do not suspend the program. A call that touches shared
// state — a remote write, a read of GM that others write, a flag, a barrier
// — first suspends until the instruction starts, so shared actions happen in
// simulated-time order and a core costs one wake-up per shared action, not
// per call.
//
// Memory. copy_in, read, read_strided and copy_out are transfers through
// the core's one GM port into the die's MemorySystem (L2 hit model, HBM
// bandwidth share, a latency that grows with load), submitted at their start
// time, like a vector task's MTE2/MTE3 stages. Their completion is known only
// when the memory system delivers, so such a call returns a pending
// PipeTime; passing it as `after`, to wait() or to pipe_barrier() resolves
// it (the scalar waits for the delivery if it has not happened yet). Treat a
// PipeTime as a handle: do not add to it or compare it; later_of() combines two.
//
// Costs (ChipParams; docs/supernode.md "What a DataCopy costs"):
//   every MTE or vector call  kernel.issue_cycles on the scalar
//   scalar(c), scalar_loop(n) c cycles, n x kernel.scalar_loop_cycles (scalar)
//   vector(bytes, cpr)        V: the vector task's formula (timing::vector_v_cycles)
//   copy_in, read, read_strided (MTE2), copy_out (MTE3, own GM)
//                             kernel.descriptor_issue_ns, then the die's memory system moves
//                             the bytes (port caps, L2 / HBM share, tier latency), then
//                             kernel.completion_ns; MTE2 and MTE3 share the core's one GM port
//   write, write_data_as_flag, set_flag (MTE3)
//                             kernel.descriptor_issue_ns, then VectorCore::send (the same
//                             remote write a copy task makes): the bytes through the port and
//                             off the die's planes; then kernel.completion_ns
//   `after` from another pipe, wait(t)
//                             kernel.flag_handshake_ns after that instruction completes
//   scalar_set_flag           kernel.issue_cycles on the scalar; leaves at once, not after MTE3
//   fence()                   all pipes drained, every write landed, + the slowest tier's latency
//   wait_flag, wait_blocks, next_ready
//                             until the block(s) land with the value, + kernel.flag_poll_ns
//   poll_ready()              kernel.flag_poll_ns
//   sync_all()                pipes drained; until every block of the program on this die
//                             arrives, + kernel.sync_all_ns
#pragma once
#include <cstdint>
#include <deque>
#include <queue>
#include <vector>

#include "chip/chip_params.hpp"
#include "hw/fabric.hpp"
#include "hw/memory_system.hpp"

namespace npusim {

class VectorCore;
class ProgramRuntime;
struct SimContext;

// Completion of an instruction on a pipe: a time (ps), or a handle of a
// transfer the memory system has not delivered yet; 0 = no dependency.
using PipeTime = std::uint64_t;

class AivCore {
public:
    AivCore(VectorCore& core, SimContext& ctx, ProgramRuntime& rt);
    AivCore(const AivCore&) = delete;
    AivCore& operator=(const AivCore&) = delete;

    // --- who and when ------------------------------------------------------
    int rank() const;
    int ranks() const { return ranks_; }
    int core() const { return static_cast<int>(block_); }    // this block (GetBlockIdx)
    int cores() const { return static_cast<int>(blocks_); }  // blocks of the program on this die
    const ChipParams& chip() const;
    std::uint32_t block_bytes() const;
    std::uint64_t now() const;  // scalar time (ps), including local work not yet synchronised

    // --- scalar -------------------------------------------------------------
    void scalar(double cycles);
    void scalar_loop(std::uint64_t iterations);
    void wait(PipeTime t);  // the scalar waits for an instruction to complete
    void pipe_barrier();    // ... for every pipe
    // The later of two completions (resolving pending transfers): an `after` for both.
    PipeTime later_of(PipeTime a, PipeTime b);

    // --- vector pipe ----------------------------------------------------------
    PipeTime vector(std::uint64_t bytes, double cycles_per_repeat = 1, PipeTime after = 0);

    // --- own GM <-> UB ----------------------------------------------------------
    PipeTime copy_in(std::uint64_t bytes, PipeTime after = 0);   // MTE2, private data
    PipeTime copy_out(std::uint64_t bytes, PipeTime after = 0);  // MTE3, private data
    // MTE2 from / MTE3 to [addr, addr + bytes) of a tensor in this rank's GM:
    // the L2 sees the addresses (reuse between programs and tasks).
    PipeTime load(Addr addr, std::uint64_t bytes, PipeTime after = 0);
    PipeTime store(Addr addr, std::uint64_t bytes, PipeTime after = 0);
    // MTE2 read of what other ranks write over the fabric (a window, a
    // status), checked by the functional memory when it starts: a block that
    // has not landed by then is a stale read (memory_model.stale_reads).
    PipeTime read(Addr addr, std::uint64_t bytes, PipeTime after = 0);
    // One strided DataCopy: `items` pieces of item_bytes, `stride` apart.
    PipeTime read_strided(Addr addr, std::uint64_t item_bytes, std::uint32_t items, std::uint64_t stride,
                          PipeTime after = 0);

    // --- memory-semantic writes (MTE3 from UB to any rank's GM) -----------
    PipeTime write(int dst_rank, Addr addr, std::uint64_t bytes, PipeTime after = 0);
    // Data-as-Flag: every block holds block-8 B of payload and the 8 B flag.
    PipeTime write_data_as_flag(int dst_rank, Addr addr, std::uint64_t payload_bytes, std::uint64_t flag,
                                PipeTime after = 0);
    // One block carrying `value` (e.g. a 32 B {flag, count} status).
    PipeTime set_flag(int dst_rank, Addr addr, std::uint64_t value, std::uint64_t bytes = 32, PipeTime after = 0);
    // A flag stored by the scalar unit (GlobalTensor SetValue + cache flush):
    // one 8 B write at scalar time, not ordered with the MTE pipes. Without a
    // pipe_barrier()/fence() before it, it can overtake data still in MTE3.
    void scalar_set_flag(int dst_rank, Addr addr, std::uint64_t value);
    // Waits until every write this core issued has landed and been acknowledged.
    void fence();

    // --- waiting on this rank's GM (event-driven: no poll loop is simulated)
    void wait_flag(Addr addr, std::uint64_t value);
    void wait_blocks(Addr addr, std::uint32_t blocks, std::uint64_t value);
    // Out-of-order consumption: register watches, then take them in the order
    // they become true. `tag` comes back from poll_ready / next_ready.
    void watch_flag(Addr addr, std::uint64_t value, std::uint64_t tag);
    void watch_blocks(Addr addr, std::uint32_t blocks, std::uint64_t value, std::uint64_t tag);
    bool poll_ready(std::uint64_t& tag);  // one poll; true if a watch had come true
    std::uint64_t next_ready();           // blocks until a watch comes true

    // --- synchronisation among the blocks of this program on this die -------
    void sync_all();
    // Cross-core flags through GM: this block sets its flag `id`; wait_all
    // waits for every block's flag `id` to carry `value`.
    void cross_core_set(int id, std::uint64_t value, PipeTime after = 0);
    void cross_core_wait_all(int id, std::uint64_t value);

    // --- profiling ----------------------------------------------------------
    void timestamp(const char* phase);  // end of a phase at scalar time (GetSystemCycle)

    // --- the vector core's side ---------------------------------------------
    // A program task starts on the core: block `block` of `blocks` of the
    // stream's program `program`.
    void begin(std::uint32_t task, std::uint32_t program, std::uint32_t block, std::uint32_t blocks);
    void main();  // on the program's own stack: runs it to its end, pipes drained
    void resume_at(std::uint64_t t);  // a released barrier wakes this core then
    void on_wake(std::uint64_t action);
    void on_drained(std::uint32_t idx);
    void on_done(std::uint32_t idx);
    void watch_fired(std::uint64_t tag, std::uint64_t fire_ps);
    std::uint32_t task() const { return task_; }
    const char* waiting_for() const { return wait_what_; }
    Addr waiting_at() const { return wait_addr_; }
    // Actions of the vector core's scheduler entries for this program.
    static constexpr std::uint64_t kResume = std::uint64_t{1} << 40;  // | generation
    static constexpr std::uint64_t kSubmit = std::uint64_t{1} << 41;
    static constexpr std::uint64_t kTransferTag = std::uint64_t{1} << 40;  // | transfer index

private:
    static constexpr std::uint64_t kWaitTag = ~0ULL;
    static constexpr std::uint64_t kUnknown = ~0ULL;
    static constexpr std::uint64_t kNever = ~0ULL;
    // A pending PipeTime: kPending | transfer index << 1 | (1 = drained, 0 = done).
    static constexpr PipeTime kPending = 1ULL << 63;
    enum Pipe { mte2 = 0, vec = 1, mte3 = 2, kPipes = 3 };

    void advance_ps(std::uint64_t ps) { local_ps_ += ps; }
    void advance_to(std::uint64_t t);
    void sync();  // the program's time catches up with the scalar's
    void sync_for_read();
    // Suspends the program until a resume at t_ps (kNever: until a notify).
    void suspend(std::uint64_t t_ps);
    void notify(std::uint64_t t_ps);  // a waiting program checks again at t_ps
    // The time of t; a pending transfer's is waited for (on the scalar).
    std::uint64_t resolve(PipeTime t);
    // Issues an instruction on `pipe`: returns its start time.
    std::uint64_t issue(Pipe pipe, PipeTime after);
    template <class When>
    void await(When when, const char* what, Addr addr, std::uint64_t& bucket);
    // A GM <-> UB transfer through this core's port: it may start at
    // job.not_before (its pipe and dependencies), and does when the port is free.
    struct PortJob;
    PipeTime transfer(Pipe pipe, PortJob& job);
    void start_port(std::uint64_t now);  // schedules the front job
    void submit_front();                 // hands the front job to the memory system
    PipeTime post(int dst_rank, Addr addr, std::uint64_t bytes, WriteKind kind, std::uint64_t flag, PipeTime after);
    void count_op();
    Addr cross_core_addr(int id, int block) const;

    VectorCore& core_;
    SimContext& ctx_;
    ProgramRuntime& rt_;
    int ranks_ = 1;
    double gm_cap_ = 0, l2_read_cap_ = 0, l2_write_cap_ = 0;  // the port's rates, bytes/ps
    std::uint64_t descriptor_ps_ = 0, completion_ps_ = 0, handshake_ps_ = 0, poll_ps_ = 0, issue_ps_ = 0;

    // The running program task.
    std::uint32_t task_ = 0, program_ = 0, block_ = 0, blocks_ = 1;
    std::uint64_t gen_ = 0;  // resumes posted for an older suspension are ignored

    // One GM <-> UB transfer: when its bytes left the port and when its data arrived.
    struct Xfer {
        std::uint64_t start = 0, drained = kUnknown, done = kUnknown;
        Pipe pipe = mte2;
        std::uint64_t bytes = 0;
    };
    std::vector<Xfer> xfers_;
    struct PortJob {
        TransferRequest req;
        std::uint32_t idx = 0;
        std::uint64_t not_before = 0, start = 0;
        // A read is checked against the functional memory when it starts.
        Addr read_addr = 0;
        std::uint64_t item_bytes = 0, stride = 0;
        std::uint32_t items = 0;
    };
    // Transfers waiting for the port, in issue order; the front one is
    // scheduled or moving while port_busy_ (until its bytes have drained).
    std::deque<PortJob> port_q_;
    bool port_busy_ = false;
    std::uint64_t awaited_ = ~0ULL;  // the pending PipeTime (index << 1 | drained) resolve() waits for
    // A write may use the port then: a time, or the last queued transfer's drain.
    PipeTime port_free_ = 0;
    std::uint64_t local_ps_ = 0;
    PipeTime pipe_free_[kPipes] = {0, 0, 0};  // each pipe takes its next instruction
    PipeTime pipe_done_[kPipes] = {0, 0, 0};  // each pipe's last instruction completes
    struct Ready {
        std::uint64_t t, seq, tag;
        bool operator>(const Ready& o) const { return t != o.t ? t > o.t : seq > o.seq; }
    };
    std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready_;  // watches by completion time
    std::uint64_t ready_seq_ = 0;
    std::uint64_t single_ps_ = ~0ULL;   // completion of the current wait_flag / wait_blocks
    std::uint64_t last_land_ps_ = 0;    // latest landing of this core's writes
    bool remote_since_fence_ = false;
    bool waiting_ = false;
    const char* wait_what_ = nullptr;
    Addr wait_addr_ = 0;
    std::uint64_t last_stamp_ps_ = 0;
    // Time blocked since the last stamp, on the mesh (flags, landings), in
    // SyncAll and on DataCopies; per stamp, for the critical path.
    std::uint64_t mesh_wait_ps_ = 0, sync_wait_ps_ = 0, memory_wait_ps_ = 0;
};

}  // namespace npusim
