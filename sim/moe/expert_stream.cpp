#include "moe/expert_stream.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

namespace npusim {

namespace {
// Where the rank's HBM holds the expert activations (addresses for the L2
// model's reuse; the OutputBuffer rows of an expert are contiguous).
constexpr std::uint64_t kOutputBufferBase = 16ULL << 30;  // the Dispatch's dense OutputBuffer
constexpr std::uint64_t kIntermediateBase = 24ULL << 30;  // gate_up results, then down inputs
constexpr std::uint64_t kExpertOutBase = 32ULL << 30;     // down results: the Combine's rows

DType dtype_of(MoeWorkload::ExpertDType d) {
    switch (d) {
        case MoeWorkload::ExpertDType::fp16: return DType::fp16;
        case MoeWorkload::ExpertDType::bf16: return DType::bf16;
        case MoeWorkload::ExpertDType::int8: return DType::int8;
    }
    return DType::int8;
}
}  // namespace

ExpertGrid expert_grid(std::uint64_t m, std::uint64_t n, int cube_cores) {
    const auto cores = static_cast<std::uint64_t>(std::max(1, cube_cores));
    // a row blocks x b column blocks with a x b ~ cores and m / a ~ n / b.
    const double ideal = std::sqrt(static_cast<double>(cores) * static_cast<double>(m) / static_cast<double>(n));
    const std::uint64_t a = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::llround(ideal)), 1, std::min(cores, m));
    const std::uint64_t b = std::max<std::uint64_t>(1, cores / a);
    ExpertGrid g;
    for (std::uint64_t i = 0; i < a; ++i) g.rows.push_back((i + 1) * m / a - i * m / a);
    const std::uint64_t width = std::max<std::uint64_t>(16, (n + b * 16 - 1) / (b * 16) * 16);
    for (std::uint64_t at = 0; at < n; at += width) g.cols.push_back(std::min(width, n - at));
    return g;
}

TaskStream expert_stream(const LayerContext& ctx, const ChipParams& chip, int rank) {
    const MoeParams& p = ctx.dispatch.params;
    const LayerLayout& L = ctx.layout;
    const auto H = static_cast<std::uint64_t>(p.hidden), F = static_cast<std::uint64_t>(p.expert_ffn);
    const DType dt = dtype_of(p.expert_dtype);
    const auto elt = static_cast<std::uint64_t>(dtype_bytes(dt));
    const bool optimized = p.variant == MoeParams::Variant::optimized;

    TaskStream ts;
    ts.cross_rank = true;
    ts.file = fmt::format("<moe layer: rank {} experts>", rank);
    const auto flag_stream = static_cast<std::uint32_t>(std::max(1, chip.cube.count));
    for (std::uint32_t i = 0; i < flag_stream; ++i) ts.streams.push_back(fmt::format("cube{}", i));
    ts.streams.push_back("done");
    const EventIndex all_done = 0;
    ts.events.push_back(EventDecl{"experts_done", 0, 0});

    // One matmul's grid of tiles, each on the next Cube stream; returns how many.
    std::uint32_t next_stream = 0;
    auto matmul = [&](const std::string& name, NameIndex op, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                      std::uint64_t a_addr, std::uint64_t out_addr, std::uint64_t out_elt, const Task& proto) {
        const ExpertGrid g = expert_grid(m, n, chip.cube.count);
        std::uint64_t row = 0;
        for (std::size_t i = 0; i < g.rows.size(); ++i) {
            std::uint64_t col = 0;
            for (std::size_t j = 0; j < g.cols.size(); ++j) {
                Task t = proto;
                t.id = fmt::format("{}.m{}n{}", name, i, j);
                t.rank = rank;
                t.core_type = CoreType::cube;
                t.kernel = Kernel::matmul;
                t.stream = next_stream++ % flag_stream;
                t.op = op;
                t.tile = ts.intern(fmt::format("m{}n{}", i, j));
                t.params.m = g.rows[i];
                t.params.n = g.cols[j];
                t.params.k = k;
                t.params.dtype = dt;
                t.params.has_addr = t.params.has_out_addr = true;
                t.params.addr = a_addr + row * k * elt;
                t.params.out_addr = out_addr + (row * n + col) * out_elt;
                ts.tasks.push_back(std::move(t));
                col += g.cols[j];
            }
            row += g.rows[i];
        }
        return static_cast<std::uint32_t>(g.rows.size() * g.cols.size());
    };

    std::uint32_t down_count = 0;
    for (int le = 0; le < p.experts_per_rank; ++le) {
        const auto [first, last] = ctx.expert_rows(rank, le);
        const auto m = static_cast<std::uint64_t>(last - first);
        if (m == 0) continue;  // no token routed here: nothing to compute
        const auto gu_done = static_cast<EventIndex>(ts.events.size());
        ts.events.push_back(EventDecl{fmt::format("e{}_gate_up", le), 0, 0});
        // The expert's ready flags: each core whose reorder share touched its
        // rows (optimized), or the one flag after the whole Dispatch (baseline).
        MemoryWait ready;
        ready.value = LayerLayout::kReadyFlag;
        if (optimized) {
            const auto [c0, c1] = ctx.ready_cores(rank, le);
            ready.addr = L.ready(le, c0);
            ready.blocks = static_cast<std::uint32_t>(c1 - c0);
        } else {
            ready.addr = L.ready(le, 0);
            ready.blocks = 1;
        }
        const std::uint64_t a_addr = kOutputBufferBase + static_cast<std::uint64_t>(first) * H * elt;
        const std::uint64_t mid_addr = kIntermediateBase + static_cast<std::uint64_t>(first) * 2 * F * elt;
        const std::uint64_t out_addr = kExpertOutBase + static_cast<std::uint64_t>(first) * L.row_bytes;
        Task gate_up;
        gate_up.wait_memory.push_back(ready);
        gate_up.signal = {gu_done};
        ts.events[gu_done].count = matmul(fmt::format("e{}_gate_up", le), ts.intern(fmt::format("expert{}.gate_up", le)), m,
                                          2 * F, H, a_addr, mid_addr, elt, gate_up);
        // down reads the activated half (m x ffn) of gate_up's output.
        Task down;
        down.wait = {gu_done};
        down.signal = {all_done};
        down_count += matmul(fmt::format("e{}_down", le), ts.intern(fmt::format("expert{}.down", le)), m, H, F, mid_addr,
                             out_addr, LayerLayout::kRowElementBytes, down);
    }
    ts.events[all_done].count = down_count;

    // The end of the rank's experts: one flag block into its own GM.
    Task done;
    done.id = "experts_done";
    done.rank = rank;
    done.core_type = CoreType::vector;
    done.kernel = Kernel::copy;
    done.stream = flag_stream;
    done.op = ts.intern("experts_done");
    if (down_count > 0) done.wait = {all_done};
    done.params.bytes = 8;
    done.remote.dst_rank = rank;
    done.remote.addr = L.done();
    done.remote.has_flag = true;
    done.remote.flag = LayerLayout::kDoneFlag;
    ts.tasks.push_back(std::move(done));
    if (down_count == 0) ts.events.erase(ts.events.begin());  // no expert had tokens: no event to wait for
    return ts;
}

}  // namespace npusim
