#include "hw/vector_core.hpp"

#include <algorithm>
#include <cmath>

#include "stats/stats.hpp"

namespace npusim {

std::uint64_t vector_chunk_bytes(const KernelParams& p, const ChipParams& chip) {
    const std::uint64_t ub = static_cast<std::uint64_t>(chip.buffers.ub_kb) * 1024;
    const std::uint64_t tile = static_cast<std::uint64_t>(chip.vector.tile_kb) * 1024;
    const double out_per_in = p.bytes ? static_cast<double>(p.out_bytes) / static_cast<double>(p.bytes) : 1.0;
    // Two buffers, each holding an input chunk and its output chunk.
    const auto fit = static_cast<std::uint64_t>(static_cast<double>(ub) / (2.0 * (1.0 + out_per_in)));
    const std::uint64_t repeat = static_cast<std::uint64_t>(chip.vector.repeat_bytes);
    std::uint64_t chunk = std::min({tile, fit, p.bytes});
    if (chunk > repeat) chunk = chunk / repeat * repeat;  // whole repeats
    return std::max<std::uint64_t>(1, chunk);
}

VectorCore::VectorCore(sc_core::sc_module_name name, int index, SimContext& ctx, CoreListener& listener)
    : AiCore(name, CoreType::vector, index, ctx, listener, {"mte2", "v", "mte3"}),
      gm_cap_(ctx.bytes_per_ps(ctx.chip.vector.gm_bytes_per_cycle)) {}

std::uint64_t VectorCore::plan(const Task& t) {
    // Consecutive tasks on a core are often the same shape (tiles of one
    // op): their plan is the last one's.
    if (planned_ && t.params.bytes == planned_bytes_ && t.params.out_bytes == planned_out_bytes_) return tiles_;
    planned_ = true;
    planned_bytes_ = t.params.bytes;
    planned_out_bytes_ = t.params.out_bytes;
    chunk_ = vector_chunk_bytes(t.params, ctx_.chip);
    tiles_ = (t.params.bytes + chunk_ - 1) / chunk_;
    // Output chunks split out_bytes in proportion, the last one takes the rest.
    out_per_chunk_ = t.params.bytes ? t.params.out_bytes * chunk_ / t.params.bytes : 0;
    return tiles_;
}

StageWork VectorCore::work(const Task& t, int stage, std::uint64_t tile) {
    const KernelParams& p = t.params;
    const std::uint64_t in = std::min(chunk_, p.bytes - tile * chunk_);
    const std::uint64_t out_per_chunk = out_per_chunk_;
    const std::uint64_t out = tile + 1 == tiles_ ? p.out_bytes - out_per_chunk * (tiles_ - 1) : out_per_chunk;
    StageWork w;
    switch (stage) {
        case mte2:
            if (p.src == Space::ub) return w;  // already resident
            w.bytes = in;
            if (is_global(p.src)) {
                w.kind = StageWork::Kind::transfer;
                w.transfer.space = p.src;
                w.transfer.bytes = in;
                in_map_.map(tile * chunk_, in, w.transfer);
                w.transfer.cap_bytes_per_ps = gm_cap_;
            } else {  // L1 -> UB on a coupled core
                w.kind = StageWork::Kind::compute;
                w.cycles = static_cast<double>(in) / ctx_.chip.vector.ub_bytes_per_cycle;
            }
            return w;
        case v: {
            if (t.kernel == Kernel::copy) return w;
            const double repeats = std::ceil(static_cast<double>(in) / ctx_.chip.vector.repeat_bytes);
            w.kind = StageWork::Kind::compute;
            w.cycles = repeats * p.cycles_per_repeat;
            return w;
        }
        case mte3:
            if (p.dst == Space::ub || out == 0) return w;
            w.bytes = out;
            if (is_global(p.dst)) {
                w.kind = StageWork::Kind::transfer;
                w.transfer.write = true;
                w.transfer.space = p.dst;
                w.transfer.bytes = out;
                out_map_.map(tile * out_per_chunk, out, w.transfer);
                w.transfer.cap_bytes_per_ps = gm_cap_;
            } else {
                w.kind = StageWork::Kind::compute;
                w.cycles = static_cast<double>(out) / ctx_.chip.vector.ub_bytes_per_cycle;
            }
            return w;
    }
    return w;
}

void VectorCore::report_buffers(Stats& s, const std::vector<const AiCore*>& vectors) {
    s.set("memory.ub.in_bytes", pipe_bytes(vectors, mte2));
    s.set("memory.ub.out_bytes", pipe_bytes(vectors, mte3));
}

}  // namespace npusim
