#include "compiler/memory_plan.hpp"
#include "common/arith.hpp"

#include "compiler/comm_ops.hpp"
#include "compiler/slice_view.hpp"

#include "common/errors.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace npusim::compiler {
namespace {

constexpr std::uint64_t kAlign = 512;
constexpr std::uint64_t kWeightsBase = 0x100000000ULL;  // consts apart from activations
constexpr std::uint64_t kNoRows = ~0ULL;                // pitch_ of a view read only through its runs

struct Dims {
    std::int64_t b = 1, rows = 1, cols = 1, w = 1;  // w: inner extent of a 4-D row
};

// (N, C columns, H rows, W) for a 4-D tensor in an image layout (NCHW,
// NC1HWC0); otherwise (or as a matrix operand) the matrices it holds: the
// product of the leading dims, then rows and columns. FRACTAL_NZ and ND are
// matrix layouts whatever the rank.
Dims dims_of(const Tensor& t, bool matrix = false) {
    Dims d;
    const Shape& s = t.shape;
    const bool image = t.layout == Layout::NCHW || t.layout == Layout::NC1HWC0;
    if (s.size() == 4 && image && !matrix) {
        d.b = s[0];
        d.cols = s[1];
        d.rows = s[2];
        d.w = s[3];
    } else if (s.size() >= 2) {
        for (std::size_t i = 0; i + 2 < s.size(); ++i) d.b *= s[i];
        d.rows = s[s.size() - 2];
        d.cols = s.back();
    } else if (s.size() == 1) {
        d.cols = s[0];
    }
    return d;
}

void push_merged(std::vector<Region>& out, std::uint64_t addr, std::uint64_t bytes) {
    if (bytes == 0) return;
    if (!out.empty() && out.back().rows == 1 && out.back().addr + out.back().bytes == addr) {
        out.back().bytes += bytes;
        return;
    }
    out.push_back(Region{Space::hbm, addr, bytes});
}

// `rows` rows of `bytes`, `stride` apart: one strided region (or one range
// when they touch).
void push_strided(std::vector<Region>& out, std::uint64_t addr, std::uint64_t bytes, std::uint64_t stride, std::int64_t rows) {
    if (bytes == 0 || rows <= 0) return;
    if (rows == 1 || stride == bytes) {
        push_merged(out, addr, bytes * static_cast<std::uint64_t>(rows));
        return;
    }
    out.push_back(Region{Space::hbm, addr, bytes, stride, static_cast<std::uint32_t>(rows)});
}

}  // namespace

std::int64_t c0_of(const Tensor& t) { return t.dtype == DType::int8 ? 32 : 16; }

Block full_block(const Tensor& t, bool matrix) {
    const Dims d = dims_of(t, matrix);
    return Block{0, d.b, 0, d.rows, 0, d.cols};
}

std::uint64_t padded_bytes(const Tensor& t) {
    const Dims d = dims_of(t);
    const auto e = static_cast<std::int64_t>(dtype_bytes(t.dtype));
    const std::int64_t c0 = c0_of(t);
    switch (t.layout) {
        case Layout::NC1HWC0: return static_cast<std::uint64_t>(d.b * ceil_div(d.cols, c0) * d.rows * d.w * c0 * e);
        case Layout::FRACTAL_NZ:
            return static_cast<std::uint64_t>(d.b * ceil_div(d.cols, 16) * ceil_div(d.rows, 16) * 256 * e);
        default: return t.bytes();
    }
}

MemoryPlan::MemoryPlan(const Graph& g)
    : g_(g), addr_(g.tensors.size(), 0), bytes_(g.tensors.size(), 0), pitch_(g.tensors.size(), 0) {
    std::uint64_t weights = kWeightsBase;
    std::vector<bool> placed(g.tensors.size(), false), in_weights(g.tensors.size(), false);
    auto place = [&](std::size_t i) {
        const Tensor& t = g.tensors[i];
        bytes_[i] = padded_bytes(t);
        std::uint64_t& cursor = t.is_const ? weights : next_;
        addr_[i] = cursor;
        cursor += (bytes_[i] + kAlign - 1) / kAlign * kAlign;
        placed[i] = true;
        in_weights[i] = t.is_const;
    };
    // Inputs and consts first, then every node's outputs in order.
    for (std::size_t i = 0; i < g.tensors.size(); ++i)
        if (g.tensors[i].is_input || g.tensors[i].is_const) place(i);
    for (const Node& n : g.nodes) {
        for (int o : n.outputs) {
            const auto oi = static_cast<std::size_t>(o);
            if (placed[oi]) continue;
            const Tensor& in = g.tensors[static_cast<std::size_t>(n.inputs[0])];
            if (n.op == OpType::Reshape && placed[static_cast<std::size_t>(n.inputs[0])] &&
                (in.layout == Layout::NCHW || in.layout == Layout::ND)) {
                addr_[oi] = addr_[static_cast<std::size_t>(n.inputs[0])];  // a view, no copy
                bytes_[oi] = g.tensors[oi].bytes();
                pitch_[oi] = pitch_[static_cast<std::size_t>(n.inputs[0])];  // a Reshape of a Slice read in place
                placed[oi] = true;
                in_weights[oi] = in_weights[static_cast<std::size_t>(n.inputs[0])];
                continue;
            }
            // A Slice read in place: its bytes are the input's runs, from
            // the first (nothing is written here).
            if (n.op == OpType::Slice && placed[static_cast<std::size_t>(n.inputs[0])] && is_slice_view(g, n)) {
                const SliceRuns r = *slice_kept_runs(n, in);
                addr_[oi] = addr_[static_cast<std::size_t>(n.inputs[0])] + r.first;
                bytes_[oi] = g.tensors[oi].bytes();
                // Its rows are its input's (a cut of another axis is read
                // only through its runs: no rows).
                pitch_[oi] = r.last_axis ? r.pitch : kNoRows;
                placed[oi] = true;
                in_weights[oi] = in_weights[static_cast<std::size_t>(n.inputs[0])];
                continue;
            }
            // An AllReduce or AllToAll works in place on its input's chunks; a
            // ReduceScatter leaves its result in this rank's chunk of them.
            if ((n.op == OpType::AllReduce || n.op == OpType::AllToAll || n.op == OpType::ReduceScatter) &&
                placed[static_cast<std::size_t>(n.inputs[0])]) {
                const std::uint64_t chunk = g.tensors[oi].bytes();
                const std::uint64_t at = n.op == OpType::ReduceScatter ? static_cast<std::uint64_t>(comm_group(g, n).index) * chunk : 0;
                addr_[oi] = addr_[static_cast<std::size_t>(n.inputs[0])] + at;
                bytes_[oi] = chunk;
                placed[oi] = true;
                in_weights[oi] = in_weights[static_cast<std::size_t>(n.inputs[0])];
                continue;
            }
            place(oi);
        }
    }
    for (std::size_t i = 0; i < g.tensors.size(); ++i)
        if (!placed[i]) place(i);
    // Activations past the weights' base (a long prefill): the weights move
    // up to the next multiple of it above them, so no two tensors share an
    // address (the L2 model and the sync pass see addresses, not tensors).
    if (next_ > kWeightsBase) {
        const std::uint64_t shift = (next_ + kWeightsBase - 1) / kWeightsBase * kWeightsBase - kWeightsBase;
        for (std::size_t i = 0; i < g.tensors.size(); ++i)
            if (in_weights[i]) addr_[i] += shift;
    }
}

Region MemoryPlan::physical(int t, std::uint64_t lo, std::uint64_t hi) const {
    if (pitch_[static_cast<std::size_t>(t)] != 0)
        throw std::logic_error(
            fmt::format("compiler: tensor '{}' is a Slice read in place: its bytes are not contiguous",
                        g_.tensors[static_cast<std::size_t>(t)].name));
    return Region{Space::hbm, addr(t) + lo, hi - lo};
}

std::uint64_t MemoryPlan::row_pitch(int t) const {
    const std::uint64_t p = pitch_[static_cast<std::size_t>(t)];
    if (p == kNoRows)
        throw std::logic_error(
            fmt::format("compiler: tensor '{}' is a Slice read in place through its runs, not as rows",
                        g_.tensors[static_cast<std::size_t>(t)].name));
    if (p != 0) return p;
    const Tensor& x = g_.tensors[static_cast<std::size_t>(t)];
    return (x.shape.empty() ? 1 : static_cast<std::uint64_t>(x.shape.back())) * dtype_bytes(x.dtype);
}

void MemoryPlan::regions(int ti, const Block& b, std::vector<Region>& out) const { regions(ti, b, false, out); }

void MemoryPlan::matrix_regions(int ti, const Block& b, std::vector<Region>& out) const {
    const Layout l = g_.tensors[static_cast<std::size_t>(ti)].layout;
    regions(ti, b, l == Layout::NCHW, out);
}

void MemoryPlan::count_regions(const Tensor& t, const Block& b) const {
    // Counted before the loops: one strided region per outer index.
    count_regions(t, static_cast<std::uint64_t>(std::max<std::int64_t>(0, b.b1 - b.b0)));
}

void MemoryPlan::count_regions(const Tensor& t, std::uint64_t n) const {
    // Every task of a compiled graph together names at most kMaxRegions
    // regions (a scattered block of a huge tensor is one region per row or
    // channel).
    constexpr std::uint64_t kMaxRegions = 16'000'000;
    if (n > kMaxRegions - std::min(regions_made_, kMaxRegions))
        throw InputError(g_.file + ": tensor '" + t.name + "': the compiled tasks would name more than " +
                         std::to_string(kMaxRegions) +
                         " memory regions of it and the other tensors; use a smaller batch or smaller shapes");
    regions_made_ += n;
}

void MemoryPlan::seq_major_regions(int ti, const Block& b, std::vector<Region>& out) const {
    const Tensor& t = g_.tensors[static_cast<std::size_t>(ti)];
    const Shape& s = t.shape;
    if (s.size() < 3 || !(t.layout == Layout::ND || t.layout == Layout::NCHW) || b.b1 < b.b0 || b.r1 < b.r0 ||
        b.c1 < b.c0)
        throw std::logic_error(
            fmt::format("compiler: tensor '{}' {}: not a plain sequence-major operand or a bad block", t.name,
                        to_string(t.layout)));
    const std::int64_t S = s[s.size() - 3], N = s[s.size() - 2];
    const auto e = static_cast<std::uint64_t>(dtype_bytes(t.dtype));
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    const std::uint64_t pitch = row_pitch(ti);  // between rows of D
    count_regions(t, b);
    for (std::int64_t m = b.b0; m < b.b1; ++m)
        push_strided(out, addr(ti) + u(((m / N) * S + b.r0) * N + m % N) * pitch + u(b.c0) * e, u(b.c1 - b.c0) * e,
                     u(N) * pitch, b.r1 - b.r0);
}

void MemoryPlan::regions(int ti, const Block& b, bool matrix, std::vector<Region>& out) const {
    const Tensor& t = g_.tensors[static_cast<std::size_t>(ti)];
    // A block of negative extent is a tiling bug, never the user's input:
    // it would become a region of ~2^64 bytes.
    if (b.b1 < b.b0 || b.r1 < b.r0 || b.c1 < b.c0)
        throw std::logic_error(fmt::format("compiler: tensor '{}': a task's block [{}, {}) x [{}, {}) x [{}, {}) has a negative "
                                           "extent", t.name, b.b0, b.b1, b.r0, b.r1, b.c0, b.c1));
    const Dims d = dims_of(t, matrix);
    const auto e = static_cast<std::uint64_t>(dtype_bytes(t.dtype));
    const std::uint64_t base = addr(ti);
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    count_regions(t, b);
    switch (t.layout) {
        case Layout::NC1HWC0: {
            // Per image: a run of rows of each C1 block, the blocks a plane apart.
            const std::int64_t c0 = c0_of(t), c1n = ceil_div(d.cols, c0), first = b.c0 / c0;
            for (std::int64_t n = b.b0; n < b.b1; ++n)
                push_strided(out, base + u(((n * c1n + first) * d.rows + b.r0) * d.w * c0) * e, u((b.r1 - b.r0) * d.w * c0) * e,
                             u(d.rows * d.w * c0) * e, ceil_div(b.c1, c0) - first);
            return;
        }
        case Layout::FRACTAL_NZ: {
            // Per matrix: a run of rows of each 16-column block, the blocks a column of fractals apart.
            const std::int64_t m1 = ceil_div(d.rows, 16), n1n = ceil_div(d.cols, 16), first = b.c0 / 16;
            for (std::int64_t bb = b.b0; bb < b.b1; ++bb)
                push_strided(out, base + u(((bb * n1n + first) * m1 * 16 + b.r0) * 16) * e, u((b.r1 - b.r0) * 16) * e,
                             u(m1 * 16 * 16) * e, ceil_div(b.c1, 16) - first);
            return;
        }
        case Layout::NCHW:
            if (t.shape.size() == 4 && !matrix) {
                // Per image: a run of rows of each channel, the channels a
                // plane apart. (Only attentions read a view's rows, as
                // matrices: slice_view.hpp.)
                if (pitch_[static_cast<std::size_t>(ti)] != 0)
                    throw std::logic_error(
                        fmt::format("compiler: tensor '{}', a Slice read in place, read as images", t.name));
                for (std::int64_t n = b.b0; n < b.b1; ++n)
                    push_strided(out, base + u(((n * d.cols + b.c0) * d.rows + b.r0) * d.w) * e,
                                 u((b.r1 - b.r0) * d.w) * e, u(d.rows * d.w) * e, b.c1 - b.c0);
                return;
            }
            [[fallthrough]];
        case Layout::ND: {
            // Per matrix: the block's columns of each of its rows, a row
            // (its pitch, for a Slice read in place) apart.
            const std::uint64_t pitch = row_pitch(ti);
            for (std::int64_t bb = b.b0; bb < b.b1; ++bb)
                push_strided(out, base + u(bb * d.rows + b.r0) * pitch + u(b.c0) * e, u(b.c1 - b.c0) * e, pitch,
                             b.r1 - b.r0);
            return;
        }
    }
}

}  // namespace npusim::compiler
