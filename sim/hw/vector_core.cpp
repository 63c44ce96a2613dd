#include "hw/vector_core.hpp"

#include <algorithm>

#include "mesh/mesh.hpp"
#include "stats/stats.hpp"

namespace npusim {

VectorCore::VectorCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener)
    : AiCore(name, CoreType::vector, index, ctx, listener, {"mte2", "v", "mte3"}),
      gm_cap_(ctx.bytes_per_ps(ctx.chip.vector.gm_bytes_per_cycle)) {}

timing::VectorShape VectorCore::shape_of(const Task& t) {
    const KernelParams& p = t.params;
    timing::VectorShape s;
    s.bytes = p.bytes;
    s.out_bytes = p.out_bytes;
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
        adopted_ = chunk_ && timing::adopt_vector_chunk(s, chunk_, ctx_.chip, plan_);
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
            if (t.remote.dst_rank >= 0 && t.remote.dst_rank != ctx_.link.rank) return remote_write(t, c);
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
    // MTE3 reads the chunk out of UB at its engine rate, and is held until
    // the last byte has left this rank's planes (the receiver pushes back).
    std::uint64_t done = now + static_cast<std::uint64_t>(static_cast<double>(c.out_bytes) / gm_cap_ + 0.5);
    if (b1 > b0) {
        WriteRequest req;
        req.src_rank = ctx_.link.rank;
        req.dst_rank = t.remote.dst_rank;
        req.addr = t.remote.addr + b0 * block;
        req.bytes = std::min(b1 * payload, total) - b0 * payload;
        req.kind = t.remote.has_flag ? WriteKind::data_as_flag : WriteKind::data;
        req.flag = t.remote.flag;
        done = std::max(done, ctx_.link.mesh->post(req, now).left_ps);
    }
    StageWork w;
    w.kind = StageWork::Kind::link;
    w.bytes = c.out_bytes;
    w.cycles = static_cast<double>(done - now) / ctx_.chip.ps_per_cycle();
    return w;
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
