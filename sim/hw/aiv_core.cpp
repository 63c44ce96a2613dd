#include "hw/aiv_core.hpp"
#include "common/arith.hpp"

#include <algorithm>
#include <cmath>

#include "chip/timing.hpp"
#include "engine/wake_scheduler.hpp"
#include "hw/program_runtime.hpp"
#include "hw/sim_context.hpp"
#include "hw/vector_core.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {
// Cross-core flag workspaces, one per program of the stream, above every
// buffer a program or the compiler places.
constexpr Addr kCrossCoreBase = 0x7F0000000000ULL;
constexpr Addr kCrossCoreProgramStride = 0x100000000ULL;  // 4 GB per program
}  // namespace

AivCore::AivCore(VectorCore& core, SimContext& ctx, ProgramRuntime& rt)
    : core_(core),
      ctx_(ctx),
      rt_(rt),
      ranks_(std::max(1, ctx.chip.interconnect.ranks)),
      gm_cap_(ctx.bytes_per_ps(ctx.chip.vector.gm_bytes_per_cycle)),
      l2_read_cap_(ctx.bytes_per_ps(timing::l2_port_bytes_per_cycle(ctx.chip, CoreType::vector, false, 1))),
      l2_write_cap_(ctx.bytes_per_ps(timing::l2_port_bytes_per_cycle(ctx.chip, CoreType::vector, true, 1))),
      descriptor_ps_(ns_to_ps(ctx.chip.kernel.descriptor_issue_ns)),
      completion_ps_(ns_to_ps(ctx.chip.kernel.completion_ns)),
      handshake_ps_(ns_to_ps(ctx.chip.kernel.flag_handshake_ns)),
      poll_ps_(ns_to_ps(ctx.chip.kernel.flag_poll_ns)),
      issue_ps_(ctx.cycles_to_ps(ctx.chip.kernel.issue_cycles)) {}

int AivCore::rank() const { return ctx_.place.rank; }
const ChipParams& AivCore::chip() const { return ctx_.chip; }
std::uint32_t AivCore::block_bytes() const { return ctx_.place.fabric->block_bytes(); }
std::uint64_t AivCore::now() const { return now_ps() + local_ps_; }

void AivCore::begin(std::uint32_t task, std::uint32_t program, std::uint32_t block, std::uint32_t blocks) {
    task_ = task;
    program_ = program;
    block_ = block;
    blocks_ = blocks;
    local_ps_ = 0;
    xfers_.clear();
    port_q_.clear();
    port_busy_ = false;
    port_free_ = 0;
    for (int p = 0; p < kPipes; ++p) pipe_free_[p] = pipe_done_[p] = 0;
    ready_ = {};
    last_land_ps_ = 0;
    remote_since_fence_ = false;
    last_stamp_ps_ = now_ps();
    mesh_wait_ps_ = sync_wait_ps_ = memory_wait_ps_ = 0;
    ++rt_.instances;
    rt_.profile().start(0, core_.index(), now_ps());
}

void AivCore::main() {
    rt_.program(program_).run(*this);
    pipe_barrier();
    sync();
}

void AivCore::count_op() {
    ++rt_.ops;
    count_event(EventKind::kernel_call);
}

void AivCore::advance_to(std::uint64_t t) {
    if (t > now()) local_ps_ = t - now_ps();
}

void AivCore::suspend(std::uint64_t t_ps) {
    ++gen_;
    if (t_ps != kNever) core_.program_at(t_ps, kResume | (gen_ & 0xFFFFFFFFu));
    ++rt_.waits;
    core_.suspend_program();
}

void AivCore::on_wake(std::uint64_t action) {
    if (action & kSubmit) {
        submit_front();
        return;
    }
    if ((action & 0xFFFFFFFFu) == (gen_ & 0xFFFFFFFFu)) core_.resume_program();
}

void AivCore::resume_at(std::uint64_t t) { core_.program_at(t, kResume | (gen_ & 0xFFFFFFFFu)); }

void AivCore::notify(std::uint64_t t_ps) {
    if (waiting_) resume_at(std::max(t_ps, now_ps()));
}

void AivCore::sync() {
    if (local_ps_ == 0) return;
    const std::uint64_t t = now_ps() + local_ps_;
    local_ps_ = 0;
    suspend(t);
}

// Reading shared state at scalar time needs no sync while the scalar is less
// than the lookahead ahead of the program's time: nothing posted from then on
// can land before it + the shortest landing time, so what the core sees is final.
void AivCore::sync_for_read() {
    if (local_ps_ >= ctx_.place.fabric->min_landing_ps() + descriptor_ps_) sync();
}

template <class When>
void AivCore::await(When when, const char* what, Addr addr, std::uint64_t& bucket) {
    if (when() <= now()) return;  // known and past at scalar time (landing times are final)
    const std::uint64_t from = now();
    sync();
    for (;;) {
        const std::uint64_t t = when(), now = now_ps();
        if (t <= now) {
            bucket += now - from;
            return;
        }
        waiting_ = true;
        wait_what_ = what;
        wait_addr_ = addr;
        suspend(t);  // kNever (unknown): until a notify
        waiting_ = false;
        wait_what_ = nullptr;
    }
}

std::uint64_t AivCore::resolve(PipeTime t) {
    if (!(t & kPending)) return t;
    const std::size_t idx = static_cast<std::size_t>((t & ~kPending) >> 1);
    const bool drain = (t & 1) != 0;
    auto when = [this, idx, drain] {
        const Xfer& x = xfers_[idx];
        if (drain) return x.drained;
        return x.done == kUnknown ? kUnknown : x.done + completion_ps_;
    };
    awaited_ = t & ~kPending;
    await(when, "a DataCopy", 0, memory_wait_ps_);
    awaited_ = ~0ULL;
    return when();
}

std::uint64_t AivCore::issue(Pipe pipe, PipeTime after) {
    count_op();
    advance_ps(issue_ps_);
    std::uint64_t t = resolve(pipe_free_[pipe]);
    if (after) t = std::max(t, resolve(after) + handshake_ps_);  // SetFlag -> WaitFlag
    return std::max(t, now());
}

PipeTime AivCore::later_of(PipeTime a, PipeTime b) { return std::max(resolve(a), resolve(b)); }

// The transfer enters the die's memory system at its first byte, in time
// order: the die's scheduler hands it over then (submit_front), so the
// scalar need not wait for it. The port is serial: transfers queue for it in
// issue order and each starts when the one before has drained.
PipeTime AivCore::transfer(Pipe pipe, PortJob& job) {
    const auto idx = static_cast<std::uint32_t>(xfers_.size());
    Xfer x;
    x.pipe = pipe;
    x.bytes = job.req.bytes;
    xfers_.push_back(x);
    job.idx = idx;
    job.req.cap_bytes_per_ps = gm_cap_;
    job.req.l2_cap_bytes_per_ps = job.req.write ? l2_write_cap_ : l2_read_cap_;
    if (!(port_free_ & kPending)) job.not_before = std::max(job.not_before, port_free_);  // after a write's bytes
    port_q_.push_back(job);
    if (!port_busy_) start_port(0);
    const PipeTime ticket = kPending | (static_cast<PipeTime>(idx) << 1);
    port_free_ = ticket | 1;  // drained
    return pipe_done_[pipe] = ticket;
}

void AivCore::start_port(std::uint64_t now) {
    PortJob& j = port_q_.front();
    port_busy_ = true;
    j.start = std::max(j.not_before, now);
    core_.program_at(j.start + descriptor_ps_, kSubmit);
}

void AivCore::submit_front() {
    const PortJob& j = port_q_.front();
    // A read sees what has landed by its start (landing times are final by then).
    for (std::uint32_t i = 0; i < j.items; ++i)
        ctx_.place.fabric->check_read(rank(), j.read_addr + i * j.stride, j.item_bytes, core_.index(), j.start);
    xfers_[j.idx].start = now_ps();
    ctx_.memory->transfer(j.req, &core_, kTransferTag | j.idx);
    port_q_.pop_front();
}

void AivCore::on_drained(std::uint32_t idx) {
    Xfer& x = xfers_[idx];
    x.drained = now_ps();
    core_.add_pipe_busy(x.pipe == mte2 ? VectorCore::mte2 : VectorCore::mte3, x.drained - x.start, x.bytes);
    port_busy_ = false;
    if (!port_q_.empty()) start_port(now_ps());
    if (waiting_ && awaited_ == (static_cast<std::uint64_t>(idx) << 1 | 1)) notify(now_ps());
}

void AivCore::on_done(std::uint32_t idx) {
    xfers_[idx].done = now_ps();
    // Woken when the completion is reported, not before.
    if (waiting_ && awaited_ == (static_cast<std::uint64_t>(idx) << 1)) notify(now_ps() + completion_ps_);
}

// --- scalar --------------------------------------------------------------------

void AivCore::scalar(double cycles) {
    count_op();
    advance_ps(ctx_.cycles_to_ps(cycles));
}

void AivCore::scalar_loop(std::uint64_t iterations) {
    scalar(static_cast<double>(iterations) * chip().kernel.scalar_loop_cycles);
}

void AivCore::wait(PipeTime t) {
    if (t) advance_to(resolve(t) + handshake_ps_);  // WaitFlag on the scalar
}

void AivCore::pipe_barrier() {
    for (const PipeTime t : pipe_done_) advance_to(resolve(t));
}

// --- vector and local copies -------------------------------------------------------

PipeTime AivCore::vector(std::uint64_t bytes, double cycles_per_repeat, PipeTime after) {
    const std::uint64_t start = issue(vec, after);
    // The vector task's formula: whole repeats of lanes, issue cost per instruction.
    timing::VectorShape shape;
    shape.bytes = bytes;
    shape.cycles_per_repeat = cycles_per_repeat;
    const std::uint64_t ps = ctx_.cycles_to_ps(timing::vector_v_cycles(shape, chip(), bytes));
    core_.add_pipe_busy(VectorCore::v, ps, 0);
    pipe_free_[vec] = start + ps;
    return pipe_done_[vec] = pipe_free_[vec];
}

// Private data (no address): a stream the L2 does not keep, as for a task
// without addresses.
PipeTime AivCore::copy_in(std::uint64_t bytes, PipeTime after) {
    PortJob job;
    job.req.bytes = bytes;
    job.not_before = issue(mte2, after);
    return transfer(mte2, job);
}

PipeTime AivCore::copy_out(std::uint64_t bytes, PipeTime after) {
    PortJob job;
    job.req.write = true;
    job.req.bytes = bytes;
    job.not_before = issue(mte3, after);
    return transfer(mte3, job);
}

PipeTime AivCore::store(Addr addr, std::uint64_t bytes, PipeTime after) {
    PortJob job;
    job.req.write = true;
    job.req.bytes = bytes;
    job.req.add_range(addr, bytes);
    job.not_before = issue(mte3, after);
    return transfer(mte3, job);
}

PipeTime AivCore::load(Addr addr, std::uint64_t bytes, PipeTime after) {
    PortJob job;
    job.req.bytes = bytes;
    job.req.add_range(addr, bytes);
    job.not_before = issue(mte2, after);
    return transfer(mte2, job);
}

PipeTime AivCore::read(Addr addr, std::uint64_t bytes, PipeTime after) {
    return read_strided(addr, bytes, 1, bytes, after);
}

PipeTime AivCore::read_strided(Addr addr, std::uint64_t item_bytes, std::uint32_t items, std::uint64_t stride,
                               PipeTime after) {
    PortJob job;
    job.req.bytes = item_bytes * items;
    for (std::uint32_t i = 0; i < items; ++i) job.req.add_range(addr + i * stride, item_bytes);
    job.read_addr = addr;
    job.item_bytes = item_bytes;
    job.items = items;
    job.stride = stride;
    job.not_before = issue(mte2, after);
    return transfer(mte2, job);
}

// --- remote writes -------------------------------------------------------------

PipeTime AivCore::post(int dst_rank, Addr addr, std::uint64_t bytes, WriteKind kind, std::uint64_t flag, PipeTime after) {
    const std::uint64_t start = std::max(issue(mte3, after), resolve(port_free_));
    // Writes enter the mesh in simulated-time order: the scalar waits until
    // this one starts and the program's time catches up.
    advance_to(start);
    sync();
    WriteRequest w;
    w.src_rank = rank();
    w.dst_rank = dst_rank;
    w.addr = addr;
    w.bytes = bytes;
    w.kind = kind;
    w.flag = flag;
    w.task = task_;
    const std::uint64_t t0 = start + descriptor_ps_;
    const VectorCore::Sent sent = core_.send(w, t0);
    pipe_free_[mte3] = sent.free_ps;
    port_free_ = sent.port_ps;
    last_land_ps_ = std::max(last_land_ps_, sent.land_ps);
    if (dst_rank != rank()) remote_since_fence_ = true;
    core_.add_pipe_busy(VectorCore::mte3, sent.free_ps - start, bytes);
    return pipe_done_[mte3] = pipe_free_[mte3] + completion_ps_;
}

void AivCore::scalar_set_flag(int dst_rank, Addr addr, std::uint64_t value) {
    count_op();
    advance_ps(issue_ps_);
    sync();
    WriteRequest w;
    w.src_rank = rank();
    w.dst_rank = dst_rank;
    w.addr = addr;
    w.bytes = 8;
    w.kind = WriteKind::flag;
    w.flag = value;
    w.task = task_;
    const VectorCore::Sent sent = core_.send(w, now_ps());
    last_land_ps_ = std::max(last_land_ps_, sent.land_ps);
}

PipeTime AivCore::write(int dst_rank, Addr addr, std::uint64_t bytes, PipeTime after) {
    return post(dst_rank, addr, bytes, WriteKind::data, 0, after);
}

PipeTime AivCore::write_data_as_flag(int dst_rank, Addr addr, std::uint64_t payload_bytes, std::uint64_t flag,
                                     PipeTime after) {
    return post(dst_rank, addr, payload_bytes, WriteKind::data_as_flag, flag, after);
}

PipeTime AivCore::set_flag(int dst_rank, Addr addr, std::uint64_t value, std::uint64_t bytes, PipeTime after) {
    return post(dst_rank, addr, bytes, WriteKind::flag, value, after);
}

void AivCore::fence() {
    count_op();
    pipe_barrier();
    // Landing times are known when a write is posted; the acknowledgement
    // of a remote write takes one more link latency back (the slowest tier
    // the system has: the core does not track which tier it wrote over).
    std::uint64_t done = last_land_ps_;
    if (remote_since_fence_) done += ctx_.place.fabric->max_latency_ps();
    remote_since_fence_ = false;
    advance_to(done);
}

// --- waiting ---------------------------------------------------------------------

void AivCore::wait_flag(Addr addr, std::uint64_t value) { wait_blocks(addr, 1, value); }

void AivCore::wait_blocks(Addr addr, std::uint32_t blocks, std::uint64_t value) {
    count_op();
    std::uint64_t t = kNever;
    single_ps_ = kNever;
    if (ctx_.place.fabric->watch(rank(), 1 + core_.index(), addr, blocks, value, kWaitTag, t)) single_ps_ = t;
    await([this] { return single_ps_; }, "a flag in GM", addr, mesh_wait_ps_);
    advance_ps(poll_ps_);
}

void AivCore::watch_flag(Addr addr, std::uint64_t value, std::uint64_t tag) { watch_blocks(addr, 1, value, tag); }

void AivCore::watch_blocks(Addr addr, std::uint32_t blocks, std::uint64_t value, std::uint64_t tag) {
    std::uint64_t t = 0;
    if (ctx_.place.fabric->watch(rank(), 1 + core_.index(), addr, blocks, value, tag, t))
        ready_.push(Ready{t, ready_seq_++, tag});
}

void AivCore::watch_fired(std::uint64_t tag, std::uint64_t fire_ps) {
    if (tag == kWaitTag) single_ps_ = fire_ps;
    else ready_.push(Ready{fire_ps, ready_seq_++, tag});
    notify(fire_ps);
}

bool AivCore::poll_ready(std::uint64_t& tag) {
    count_op();
    sync_for_read();
    const bool got = !ready_.empty() && ready_.top().t <= now();
    if (got) {
        tag = ready_.top().tag;
        ready_.pop();
    }
    advance_ps(poll_ps_);
    return got;
}

std::uint64_t AivCore::next_ready() {
    count_op();
    await([this] { return ready_.empty() ? kNever : ready_.top().t; }, "any watched block", 0, mesh_wait_ps_);
    const std::uint64_t tag = ready_.top().tag;
    ready_.pop();
    advance_ps(poll_ps_);
    return tag;
}

// --- die synchronisation -------------------------------------------------------------

void AivCore::sync_all() {
    count_op();
    pipe_barrier();
    const std::uint64_t from = now();
    sync();
    ProgramRuntime::Barrier& b = rt_.barrier(program_);
    const std::uint64_t release = now_ps() + ns_to_ps(chip().kernel.sync_all_ns);
    const std::uint64_t gen = b.generation;
    if (++b.arrived == blocks_) {
        b.arrived = 0;
        ++b.generation;
        ++rt_.sync_alls;
        for (AivCore* w : b.waiting) w->resume_at(release);
        b.waiting.clear();
        suspend(release);
        sync_wait_ps_ += now_ps() - from;
        return;
    }
    b.waiting.push_back(this);
    wait_what_ = "SyncAll";
    while (b.generation == gen) suspend(kNever);
    wait_what_ = nullptr;
    sync_wait_ps_ += now_ps() - from;
}

Addr AivCore::cross_core_addr(int id, int block) const {
    return kCrossCoreBase + program_ * kCrossCoreProgramStride +
           (static_cast<Addr>(id) * blocks_ + static_cast<Addr>(block)) * block_bytes();
}

void AivCore::cross_core_set(int id, std::uint64_t value, PipeTime after) {
    set_flag(rank(), cross_core_addr(id, core()), value, 32, after);
}

void AivCore::cross_core_wait_all(int id, std::uint64_t value) {
    wait_blocks(cross_core_addr(id, 0), blocks_, value);
}

// --- profiling ----------------------------------------------------------------------

void AivCore::timestamp(const char* phase) {
    const std::uint64_t t = now();
    const int id = rt_.profile().phase_id(phase);
    rt_.profile().stamp(0, core_.index(), id, t);
    rt_.spans().push_back(PhaseSpan{task_, id, t, mesh_wait_ps_, sync_wait_ps_, memory_wait_ps_});
    mesh_wait_ps_ = sync_wait_ps_ = memory_wait_ps_ = 0;
    if (ctx_.tracing)
        ctx_.trace->complete(ctx_.trace_pid, core_.trace_tid(), phase, "phase", last_stamp_ps_, t - last_stamp_ps_, {},
                             ctx_.stream.label(ctx_.stream.tasks[task_]));
    last_stamp_ps_ = t;
}

}  // namespace npusim
