#include "hw/cube_core.hpp"

#include <cmath>

#include "stats/stats.hpp"
#include "tasks/tiling_data.hpp"

namespace npusim {

CubeCore::CubeCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener)
    : AiCore(name, CoreType::cube, index, ctx, listener, {"mte2", "mte1", "m", "fixpipe"}),
      gm_cap_(ctx.bytes_per_ps(ctx.chip.cube.gm_bytes_per_cycle)) {}

std::uint64_t CubeCore::plan(const Task& t) {
    // Consecutive tasks on a core are often the same shape (tiles of one
    // op): their plan is the last one's.
    const KernelParams& p = t.params;
    const CubeBlocking& b = p.blocking;
    // Rows known at run time: the rows that hold data on this rank.
    std::uint64_t m = p.m;
    if (p.rows_table) {
        m = static_cast<std::uint64_t>(std::llround(static_cast<double>(p.m) *
                                                    valid_row_share(p, ctx_.stream.row_tables, ctx_.place.rank)));
        if (m == 0) return 0;
    }
    const timing::MatmulShape shape{m, p.n, p.k, p.dtype, p.a_bytes, p.src, p.dst};
    if (!planned_ || !(shape == shape_) || !(b == blocking_)) {
        planned_ = true;
        shape_ = shape;
        blocking_ = b;
        // The plan the task carries (compiled for some chip) if it fits this
        // chip's buffers; else the core's own plan for this chip.
        tiling_ = matmul_tiling(b);
        if (p.rows_table) timing::fit_rows(tiling_, shape_, ctx_.chip);
        adopted_ = b.set() && timing::adopt_matmul_tiling(shape_, tiling_, ctx_.chip);
        if (!adopted_) tiling_ = timing::plan_matmul(shape_, ctx_.chip);
        a_total_ = static_cast<std::uint64_t>(std::llround(
            static_cast<double>(m * p.k * static_cast<std::uint64_t>(tiling_.elt)) * tiling_.a_gm_ratio));
    }
    if (b.set() && !adopted_) ++replanned_;
    steps_.clear();
    return tiling_.tiles();
}

StageWork CubeCore::work(const Task& t, int stage, std::uint64_t tile) {
    const KernelParams& p = t.params;
    const timing::MatmulTiling& g = tiling_;
    const timing::CubeTile& c = steps_.at(shape_, tiling_, ctx_.chip, tile);
    const std::uint64_t elt = static_cast<std::uint64_t>(g.elt);
    StageWork w;
    switch (stage) {
        case mte2: {
            if (!is_global(p.src)) return w;  // operands resident in L1
            const std::uint64_t bytes = c.a_gm_bytes + c.b_bytes;
            if (bytes == 0) return w;
            w.kind = StageWork::Kind::transfer;
            w.bytes = bytes;
            w.transfer.space = p.src;
            w.transfer.bytes = bytes;
            w.transfer.cap_bytes_per_ps = gm_cap_;
            // The input stream holds A (a_total_ bytes in all) then B, each
            // cut into its L1 blocks band by band: A's row band mi is tm x k,
            // B's K band ki is tk x n. Edge blocks are shorter, so a block's
            // offset counts the bytes before it exactly (whole bands at the
            // full block size, then this band's blocks at its extent): a
            // block never reaches past its operand into the next one.
            const std::uint64_t a_off = static_cast<std::uint64_t>(std::llround(
                static_cast<double>((c.mi * g.m1 * shape_.k + c.tm * c.ki * g.k1) * elt) * g.a_gm_ratio));
            const std::uint64_t b_off = a_total_ + (c.ki * g.k1 * shape_.n + c.tk * c.ni * g.n1) * elt;
            if (c.a_gm_bytes) in_map_.map(a_off, c.a_gm_bytes, w.transfer);
            if (c.b_bytes) in_map_.map(b_off, c.b_bytes, w.transfer);
            return w;
        }
        case mte1:
            w.kind = StageWork::Kind::compute;
            w.bytes = c.l0_bytes;
            w.cycles = c.mte1_cycles;
            return w;
        case m:
            w.kind = StageWork::Kind::compute;
            w.cycles = c.m_cycles;
            w.flops = 2.0 * static_cast<double>(c.tm) * static_cast<double>(c.tn) * static_cast<double>(c.tk);
            return w;
        case fixpipe: {
            if (c.out_bytes == 0) return w;  // accumulating in L0C
            w.bytes = c.out_bytes;
            if (is_global(p.dst)) {
                w.kind = StageWork::Kind::transfer;
                w.transfer.write = true;
                w.transfer.space = p.dst;
                w.transfer.bytes = c.out_bytes;
                w.transfer.cap_bytes_per_ps = gm_cap_;
                out_map_.map((c.mi * g.nb + c.ni) * g.m1 * g.n1 * timing::kOutBytes, c.out_bytes, w.transfer);
            } else {
                w.kind = StageWork::Kind::compute;
                w.cycles = timing::fixpipe_local_cycles(ctx_.chip, c.out_bytes);
            }
            return w;
        }
    }
    return w;
}

void CubeCore::report_buffers(Stats& s, const std::vector<const AiCore*>& cubes) {
    s.set("memory.l1.in_bytes", pipe_bytes(cubes, mte2));
    s.set("memory.l0.in_bytes", pipe_bytes(cubes, mte1));
    s.set("memory.l0c.out_bytes", pipe_bytes(cubes, fixpipe));
    if (cubes.empty()) return;
    std::uint64_t replanned = 0;
    for (const AiCore* c : cubes) replanned += static_cast<const CubeCore*>(c)->replanned_;  // the die's cube cores
    s.set("units.cube.replanned_tasks", replanned);
}

}  // namespace npusim
