#include "kernel_api/aiv_core.hpp"

#include <algorithm>
#include <cmath>

#include "chip/timing.hpp"
#include "engine/wake_scheduler.hpp"
#include "kernel_api/kernel_runtime.hpp"
#include "mesh/mesh.hpp"
#include "trace/trace_writer.hpp"

namespace npusim {

namespace {
std::uint64_t ns_to_ps(double ns) { return static_cast<std::uint64_t>(std::llround(ns * 1000.0)); }
}  // namespace

AivCore::AivCore(KernelRuntime& rt, int rank, int core)
    : rt_(rt), rank_(rank), core_(core), id_(static_cast<std::uint32_t>(rank * rt.cores() + core)) {}

int AivCore::ranks() const { return rt_.ranks(); }
int AivCore::cores() const { return rt_.cores(); }
const ChipParams& AivCore::chip() const { return rt_.chip(); }
std::uint32_t AivCore::block_bytes() const { return rt_.memory().block_bytes(); }
std::uint64_t AivCore::now_ps_sc() { return now_ps(); }
std::uint64_t AivCore::now() const { return now_ps() + local_ps_; }

void AivCore::count_op() {
    ++rt_.ops_;
    ++sim_events_total();
}

void AivCore::sync() {
    if (local_ps_ == 0) return;
    const std::uint64_t d = local_ps_;
    local_ps_ = 0;
    ++rt_.waits_;
    sc_core::wait(sc_core::sc_time::from_value(d));
}

// Reading shared state at scalar time needs no sync while the scalar is less
// than the lookahead ahead of SystemC time: nothing posted from SystemC time
// on can land before SystemC time + lookahead, so what the core sees is final.
void AivCore::sync_for_read() {
    if (local_ps_ >= rt_.lookahead_ps_) sync();
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
        if (t != GlobalMemory::kNever) ev_.notify(sc_core::sc_time::from_value(t - now));
        ++rt_.waits_;
        sc_core::wait(ev_);
        waiting_ = false;
        wait_what_ = nullptr;
    }
}

std::uint64_t AivCore::resolve(PipeTime t) {
    if (!(t & kPending)) return t;
    const std::size_t idx = static_cast<std::size_t>((t & ~kPending) >> 1);
    const bool drain = (t & 1) != 0;
    const std::uint64_t completion = ns_to_ps(chip().kernel.completion_ns);
    auto when = [this, idx, drain, completion] {
        const Xfer& x = xfers_[idx];
        if (drain) return x.drained;
        return x.done == kUnknown ? kUnknown : x.done + completion;
    };
    awaited_ = t & ~kPending;
    await(when, "a DataCopy", 0, memory_wait_ps_);
    awaited_ = ~0ULL;
    return when();
}

std::uint64_t AivCore::issue(Pipe pipe, PipeTime after) {
    count_op();
    advance_ps(static_cast<std::uint64_t>(std::llround(chip().kernel.issue_cycles * chip().ps_per_cycle())));
    std::uint64_t t = resolve(pipe_free_[pipe]);
    if (after) t = std::max(t, resolve(after) + ns_to_ps(chip().kernel.flag_handshake_ns));  // SetFlag -> WaitFlag
    return std::max(t, now());
}

PipeTime AivCore::later_of(PipeTime a, PipeTime b) { return std::max(resolve(a), resolve(b)); }

// The transfer enters the die's memory system at its first byte, in SystemC
// time order: the die's scheduler hands it over then (KernelRuntime::wake),
// so the scalar need not wait for it. The port is serial: transfers queue
// for it in issue order and each starts when the one before has drained.
PipeTime AivCore::transfer(Pipe pipe, PortJob& job) {
    const auto idx = static_cast<std::uint32_t>(xfers_.size());
    xfers_.push_back(Xfer{});
    job.idx = idx;
    job.req.cap_bytes_per_ps = rt_.gm_cap_;
    job.req.l2_cap_bytes_per_ps = job.req.write ? rt_.l2_write_cap_ : rt_.l2_read_cap_;
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
    rt_.submit_at(*this, j.start + ns_to_ps(chip().kernel.descriptor_issue_ns));
}

// --- scalar --------------------------------------------------------------------

void AivCore::scalar(double cycles) {
    count_op();
    advance_ps(static_cast<std::uint64_t>(std::llround(cycles * chip().ps_per_cycle())));
}

void AivCore::scalar_loop(std::uint64_t iterations) {
    scalar(static_cast<double>(iterations) * chip().kernel.scalar_loop_cycles);
}

void AivCore::wait(PipeTime t) {
    if (t) advance_to(resolve(t) + ns_to_ps(chip().kernel.flag_handshake_ns));  // WaitFlag on the scalar
}

void AivCore::pipe_barrier() {
    for (const PipeTime t : pipe_done_) advance_to(resolve(t));
}

// --- vector and local copies -------------------------------------------------------

PipeTime AivCore::vector(std::uint64_t bytes, double cycles_per_repeat, PipeTime after) {
    const ChipParams& c = chip();
    const std::uint64_t start = issue(vec, after);
    // The vector task's formula: whole repeats of lanes, issue cost per instruction.
    timing::VectorShape shape;
    shape.bytes = bytes;
    shape.cycles_per_repeat = cycles_per_repeat;
    const double cycles = timing::vector_v_cycles(shape, c, bytes);
    pipe_free_[vec] = start + static_cast<std::uint64_t>(std::llround(cycles * c.ps_per_cycle()));
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

PipeTime AivCore::post(int dst_rank, Addr addr, std::uint64_t bytes, int kind, std::uint64_t flag, PipeTime after) {
    const std::uint64_t start = std::max(issue(mte3, after), resolve(port_free_));
    // Writes enter the mesh in simulated-time order: the scalar waits until
    // this one starts and SystemC time catches up.
    advance_to(start);
    sync();
    WriteRequest w;
    w.src_rank = rank_;
    w.dst_rank = dst_rank;
    w.addr = addr;
    w.bytes = bytes;
    w.kind = static_cast<WriteKind>(kind);
    w.flag = flag;
    const std::uint64_t t0 = start + ns_to_ps(chip().kernel.descriptor_issue_ns);
    pipe_free_[mte3] = send(w, t0);
    // The bytes leave UB through the core's port.
    port_free_ = t0 + static_cast<std::uint64_t>(std::ceil(static_cast<double>(write_wire_bytes(w, block_bytes())) *
                                                          chip().ps_per_cycle() / chip().vector.gm_bytes_per_cycle));
    return pipe_done_[mte3] = pipe_free_[mte3] + ns_to_ps(chip().kernel.completion_ns);
}

std::uint64_t AivCore::send(const WriteRequest& w, std::uint64_t t0) {
    const ChipParams& c = chip();
    const std::uint64_t wire = write_wire_bytes(w, block_bytes());
    const auto port = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(wire) * c.ps_per_cycle() / c.vector.gm_bytes_per_cycle));
    if (w.dst_rank == rank_) {
        // Into the own GM: the write-back L2 takes it (a flag or the odd token;
        // not given a share of L2 bandwidth).
        const std::uint64_t land = t0 + port + static_cast<std::uint64_t>(std::llround(
                                                   timing::gm_write_latency_cycles(c) * c.ps_per_cycle()));
        rt_.mesh().post_local(w, land);
        rt_.memory_system(rank_).landed_write(w.addr, static_cast<std::uint64_t>(write_blocks(w, block_bytes())) * block_bytes());
        last_land_ps_ = std::max(last_land_ps_, land);
        return land;
    }
    const PostedWrite pw = rt_.mesh().post(w, t0);
    // Its blocks land in the receiver's GM through that die's L2.
    rt_.memory_system(w.dst_rank).landed_write(w.addr, static_cast<std::uint64_t>(write_blocks(w, block_bytes())) * block_bytes());
    last_land_ps_ = std::max(last_land_ps_, pw.land_ps);
    remote_since_fence_ = true;
    return std::max(t0 + port, pw.left_ps);
}

void AivCore::scalar_set_flag(int dst_rank, Addr addr, std::uint64_t value) {
    count_op();
    advance_ps(static_cast<std::uint64_t>(std::llround(chip().kernel.issue_cycles * chip().ps_per_cycle())));
    sync();
    WriteRequest w;
    w.src_rank = rank_;
    w.dst_rank = dst_rank;
    w.addr = addr;
    w.bytes = 8;
    w.kind = WriteKind::flag;
    w.flag = value;
    send(w, now_ps());
}

PipeTime AivCore::write(int dst_rank, Addr addr, std::uint64_t bytes, PipeTime after) {
    return post(dst_rank, addr, bytes, static_cast<int>(WriteKind::data), 0, after);
}

PipeTime AivCore::write_data_as_flag(int dst_rank, Addr addr, std::uint64_t payload_bytes, std::uint64_t flag,
                                     PipeTime after) {
    return post(dst_rank, addr, payload_bytes, static_cast<int>(WriteKind::data_as_flag), flag, after);
}

PipeTime AivCore::set_flag(int dst_rank, Addr addr, std::uint64_t value, std::uint64_t bytes, PipeTime after) {
    return post(dst_rank, addr, bytes, static_cast<int>(WriteKind::flag), value, after);
}

void AivCore::fence() {
    count_op();
    pipe_barrier();
    // Landing times are known when a write is posted; the acknowledgement
    // of a remote write takes one more link latency back (the slowest tier
    // the system has: the core does not track which tier it wrote over).
    std::uint64_t done = last_land_ps_;
    if (remote_since_fence_) done += ns_to_ps(chip().interconnect.max_latency_ns());
    remote_since_fence_ = false;
    advance_to(done);
}

// --- waiting ---------------------------------------------------------------------

void AivCore::wait_flag(Addr addr, std::uint64_t value) { wait_blocks(addr, 1, value); }

void AivCore::wait_blocks(Addr addr, std::uint32_t blocks, std::uint64_t value) {
    count_op();
    std::uint64_t t = GlobalMemory::kNever;
    single_ps_ = GlobalMemory::kNever;
    if (rt_.memory().watch(rank_, rt_.memory().block_of(addr), blocks, true, value, id_, kWaitTag, t)) single_ps_ = t;
    await([this] { return single_ps_; }, "a flag in GM", addr, mesh_wait_ps_);
    advance_ps(ns_to_ps(chip().kernel.flag_poll_ns));
}

void AivCore::watch_flag(Addr addr, std::uint64_t value, std::uint64_t tag) { watch_blocks(addr, 1, value, tag); }

void AivCore::watch_blocks(Addr addr, std::uint32_t blocks, std::uint64_t value, std::uint64_t tag) {
    std::uint64_t t = 0;
    if (rt_.memory().watch(rank_, rt_.memory().block_of(addr), blocks, true, value, id_, tag, t))
        ready_.push(Ready{t, ready_seq_++, tag});
}

bool AivCore::poll_ready(std::uint64_t& tag) {
    count_op();
    sync_for_read();
    const bool got = !ready_.empty() && ready_.top().t <= now();
    if (got) {
        tag = ready_.top().tag;
        ready_.pop();
    }
    advance_ps(ns_to_ps(chip().kernel.flag_poll_ns));
    return got;
}

std::uint64_t AivCore::next_ready() {
    count_op();
    await([this] { return ready_.empty() ? GlobalMemory::kNever : ready_.top().t; }, "any watched block", 0,
          mesh_wait_ps_);
    const std::uint64_t tag = ready_.top().tag;
    ready_.pop();
    advance_ps(ns_to_ps(chip().kernel.flag_poll_ns));
    return tag;
}

// --- die synchronisation -------------------------------------------------------------

void AivCore::sync_all() {
    count_op();
    pipe_barrier();
    const std::uint64_t from = now();
    sync();
    KernelRuntime::Barrier& b = *rt_.barriers_[static_cast<std::size_t>(rank_)];
    const sc_core::sc_time cost = sc_core::sc_time::from_value(ns_to_ps(chip().kernel.sync_all_ns));
    const std::uint64_t gen = b.generation;
    if (++b.arrived == rt_.cores()) {
        b.arrived = 0;
        ++b.generation;
        ++rt_.sync_alls_;
        b.ev.notify(cost);
        ++rt_.waits_;
        sc_core::wait(cost);
        sync_wait_ps_ += now_ps() - from;
        return;
    }
    waiting_ = true;
    wait_what_ = "SyncAll";
    while (b.generation == gen) {
        ++rt_.waits_;
        sc_core::wait(b.ev);
    }
    waiting_ = false;
    wait_what_ = nullptr;
    sync_wait_ps_ += now_ps() - from;
}

void AivCore::cross_core_set(int id, std::uint64_t value, PipeTime after) {
    set_flag(rank_, rt_.cross_core_addr(id, core_), value, 32, after);
}

void AivCore::cross_core_wait_all(int id, std::uint64_t value) {
    wait_blocks(rt_.cross_core_addr(id, 0), static_cast<std::uint32_t>(rt_.cores()), value);
}

// --- profiling ----------------------------------------------------------------------

void AivCore::timestamp(const char* phase) {
    const std::uint64_t t = now();
    const int id = rt_.profile_.phase_id(phase);
    rt_.profile_.stamp(rank_, core_, id, t);
    phase_waits_.push_back(PhaseWaits{id, t, mesh_wait_ps_, sync_wait_ps_, memory_wait_ps_});
    mesh_wait_ps_ = sync_wait_ps_ = memory_wait_ps_ = 0;
    if (rt_.trace_ && rank_ < rt_.traced_ranks_)
        rt_.trace_->complete(rank_ + 1, rt_.system_.die(rank_).vector_core(core_).trace_tid(), phase, "phase",
                             last_stamp_ps_, t - last_stamp_ps_);
    last_stamp_ps_ = t;
}

}  // namespace npusim
