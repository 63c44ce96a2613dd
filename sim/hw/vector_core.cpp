#include "hw/vector_core.hpp"

#include <algorithm>
#include <cmath>

#include "engine/wake_scheduler.hpp"
#include "hw/program_runtime.hpp"
#include "trace/trace_writer.hpp"
#include "stats/stats.hpp"

namespace npusim {

VectorCore::VectorCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener)
    : AiCore(name, CoreType::vector, index, ctx, listener, {"mte2", "v", "mte3"}),
      gm_cap_(ctx.bytes_per_ps(ctx.chip.vector.gm_bytes_per_cycle)) {}

VectorCore::~VectorCore() = default;

timing::VectorShape VectorCore::shape_of(const Task& t) const {
    const KernelParams& p = t.params;
    timing::VectorShape s;
    s.bytes = p.bytes;
    s.out_bytes = p.out_bytes;
    if (p.rows_table) {
        // Rows known at run time: the share that holds data on this rank.
        const double share = valid_row_share(p, ctx_.stream.row_tables, ctx_.place.rank);
        const auto elt = static_cast<std::uint64_t>(dtype_bytes(p.dtype));
        const auto scaled = [&](std::uint64_t b) {
            return static_cast<std::uint64_t>(std::llround(static_cast<double>(b / elt) * share)) * elt;
        };
        s.bytes = scaled(s.bytes);
        s.out_bytes = scaled(s.out_bytes);
    }
    s.dtype = p.dtype;
    s.row_bytes = p.row_bytes;
    s.cycles_per_repeat = p.cycles_per_repeat;
    s.copy = t.kernel == Kernel::copy;
    s.src = p.src;
    s.dst = p.dst;
    return s;
}

std::uint64_t VectorCore::plan(const Task& t) {
    // Consecutive tasks on a core are often the same shape (tiles of one
    // op): their plan is the last one's.
    const timing::VectorShape s = shape_of(t);
    if (t.params.rows_table && s.bytes == 0) return 0;  // no rows hold data on this rank
    const bool same = planned_ && s.bytes == shape_.bytes && s.out_bytes == shape_.out_bytes &&
                      s.row_bytes == shape_.row_bytes && s.dtype == shape_.dtype &&
                      s.cycles_per_repeat == shape_.cycles_per_repeat && s.copy == shape_.copy &&
                      s.src == shape_.src && s.dst == shape_.dst &&
                      t.params.ub_chunk == chunk_;
    shape_ = s;
    if (!same) {
        planned_ = true;
        chunk_ = t.params.ub_chunk;
        // The chunks the task carries (compiled for some chip) if they fit
        // this chip's UB; else the core's own plan for this chip.
        // A kernel with a runtime row table covers fewer rows with the
        // chunks it was compiled with, at most the largest chunk of what
        // holds data.
        const std::uint64_t chunk =
            t.params.rows_table ? std::min<std::uint64_t>(chunk_, timing::vector_chunk_bytes(s, ctx_.chip)) : chunk_;
        adopted_ = chunk && timing::adopt_vector_chunk(s, chunk, ctx_.chip, plan_);
        if (!adopted_) plan_ = timing::plan_vector(s, ctx_.chip);
    }
    if (chunk_ && !adopted_) ++replanned_;
    return plan_.tiles;
}

StageWork VectorCore::work(const Task& t, int stage, std::uint64_t tile) {
    const KernelParams& p = t.params;
    const timing::VectorTile c = timing::vector_tile(plan_, shape_, ctx_.chip, tile);
    StageWork w;
    switch (stage) {
        case mte2:
            if (p.src == Space::ub) return w;  // already resident
            w.bytes = c.in_bytes;
            if (is_global(p.src)) {
                w.kind = StageWork::Kind::transfer;
                w.transfer.space = p.src;
                w.transfer.bytes = c.in_bytes;
                in_map_.map(c.in_offset, c.in_bytes, w.transfer);
                w.transfer.cap_bytes_per_ps = gm_cap_;
            } else {  // L1 -> UB on a coupled core
                w.kind = StageWork::Kind::compute;
                w.cycles = timing::ub_move_cycles(ctx_.chip, c.in_bytes);
            }
            return w;
        case v:
            if (t.kernel == Kernel::copy) return w;
            w.kind = StageWork::Kind::compute;
            w.cycles = c.v_cycles;
            return w;
        case mte3:
            if (p.dst == Space::ub || c.out_bytes == 0) return w;
            if (t.remote.dst_rank >= 0 && t.remote.dst_rank != ctx_.place.rank) return remote_write(t, c);
            w.bytes = c.out_bytes;
            if (is_global(p.dst)) {
                w.kind = StageWork::Kind::transfer;
                w.transfer.write = true;
                w.transfer.space = p.dst;
                w.transfer.bytes = c.out_bytes;
                out_map_.map(c.out_offset, c.out_bytes, w.transfer);
                w.transfer.cap_bytes_per_ps = gm_cap_;
            } else {
                w.kind = StageWork::Kind::compute;
                w.cycles = timing::ub_move_cycles(ctx_.chip, c.out_bytes);
            }
            return w;
    }
    return w;
}

StageWork VectorCore::remote_write(const Task& t, const timing::VectorTile& c) {
    // Payload bytes per block: Data-as-Flag keeps 8 B of each for the flag.
    const std::uint64_t block = static_cast<std::uint64_t>(ctx_.chip.interconnect.datablock_bytes);
    const std::uint64_t payload = t.remote.has_flag ? block - 8 : block;
    const std::uint64_t total = t.params.bytes;
    // Each block goes out with the chunk that holds its last byte, so a
    // block is posted once, whole, whatever the chunk size.
    auto blocks_done = [&](std::uint64_t end) { return end >= total ? (total + payload - 1) / payload : end / payload; };
    const std::uint64_t b0 = blocks_done(c.out_offset), b1 = blocks_done(c.out_offset + c.out_bytes);
    const std::uint64_t now = now_ps();
    // MTE3 reads the chunk out of UB through the port; the blocks it
    // completes leave over the fabric (send), which may hold it longer.
    std::uint64_t done = now + static_cast<std::uint64_t>(static_cast<double>(c.out_bytes) / gm_cap_ + 0.5);
    if (b1 > b0) {
        WriteRequest req;
        req.src_rank = ctx_.place.rank;
        req.dst_rank = t.remote.dst_rank;
        req.addr = t.remote.addr + b0 * block;
        req.bytes = std::min(b1 * payload, total) - b0 * payload;
        req.kind = t.remote.has_flag ? WriteKind::data_as_flag : WriteKind::data;
        req.flag = t.remote.flag;
        req.task = static_cast<std::uint32_t>(&t - ctx_.stream.tasks.data());
        done = send(req, now).free_ps;
    }
    StageWork w;
    w.kind = StageWork::Kind::link;
    w.bytes = c.out_bytes;
    w.cycles = static_cast<double>(done - now) / ctx_.chip.ps_per_cycle();
    return w;
}

VectorCore::Sent VectorCore::send(const WriteRequest& w, std::uint64_t t0) {
    const ChipParams& c = ctx_.chip;
    Fabric& fabric = *ctx_.place.fabric;
    const std::uint32_t block = fabric.block_bytes();
    const auto port = static_cast<std::uint64_t>(std::ceil(static_cast<double>(write_wire_bytes(w, block)) / gm_cap_));
    Sent s;
    s.port_ps = t0 + port;
    if (w.dst_rank == ctx_.place.rank) {
        // Into the own GM: the write-back L2 takes it (a flag or the odd
        // token; not given a share of L2 bandwidth).
        s.land_ps = s.port_ps + ctx_.cycles_to_ps(timing::gm_write_latency_cycles(c));
        fabric.post_local(w, s.land_ps);
        ctx_.memory->landed_write(w.addr, static_cast<std::uint64_t>(write_blocks(w, block)) * block);
        s.free_ps = s.land_ps;
        return s;
    }
    const PostedWrite pw = fabric.post(w, t0);
    s.land_ps = pw.land_ps;
    s.free_ps = std::max(s.port_ps, pw.left_ps);
    return s;
}

// --- kernel programs ------------------------------------------------------------------

void VectorCore::start_program(const Task& t) {
    ProgramRuntime& rt = *ctx_.programs;
    if (!aiv_) aiv_ = std::make_unique<AivCore>(*this, ctx_, rt);
    const auto task = static_cast<std::uint32_t>(&t - ctx_.stream.tasks.data());
    aiv_->begin(task, t.params.program, t.params.block, rt.blocks(t.params.program));
    fiber_ = std::make_unique<Fiber>([this] { aiv_->main(); });
    resume_program();
}

void VectorCore::program_at(std::uint64_t t_ps, std::uint64_t action) {
    program_post(t_ps, action);
}

void VectorCore::program_wake(std::uint64_t action) { aiv_->on_wake(action); }

void VectorCore::suspend_program() { fiber_->suspend(); }

void VectorCore::resume_program() {
    fiber_->resume();
    if (!fiber_->finished()) return;
    fiber_.reset();
    end_program_task();
}

void VectorCore::add_pipe_busy(int pipe, std::uint64_t ps, std::uint64_t bytes) { record_busy(pipe, ps, bytes, pipe != v); }

void VectorCore::program_watch_fired(std::uint64_t tag, std::uint64_t fire_ps) {
    if (aiv_) aiv_->watch_fired(tag, fire_ps);
}

std::string VectorCore::program_wait() const {
    if (!fiber_ || !aiv_) return {};
    const char* what = aiv_->waiting_for();
    return what ? what : "something";
}

void VectorCore::transfer_drained(std::uint64_t tag) {
    if (tag & AivCore::kTransferTag) aiv_->on_drained(static_cast<std::uint32_t>(tag & 0xFFFFFFFFu));
    else AiCore::transfer_drained(tag);
}

void VectorCore::transfer_done(std::uint64_t tag) {
    if (tag & AivCore::kTransferTag) aiv_->on_done(static_cast<std::uint32_t>(tag & 0xFFFFFFFFu));
    else AiCore::transfer_done(tag);
}

void VectorCore::report_buffers(Stats& s, const std::vector<const AiCore*>& vectors) {
    s.set("memory.ub.in_bytes", pipe_bytes(vectors, mte2));
    s.set("memory.ub.out_bytes", pipe_bytes(vectors, mte3));
    if (vectors.empty()) return;
    std::uint64_t replanned = 0;
    for (const AiCore* c : vectors) replanned += static_cast<const VectorCore*>(c)->replanned_;  // the die's vector cores
    s.set("units.vector.replanned_tasks", replanned);
}

}  // namespace npusim
