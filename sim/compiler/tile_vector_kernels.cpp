// Vector kernels cut into tiles: element-wise chains and transposes in
// equal slices, Vector tiles fused behind Cube tiles, row-wise ops in row
// blocks, Concat copies, and grouped convolutions run on the lanes.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "common/arith.hpp"
#include "compiler/op_traits.hpp"
#include "compiler/shape_inference.hpp"
#include "compiler/slice_view.hpp"
#include "compiler/tiler_impl.hpp"

namespace npusim::compiler {

// A grouped convolution the cost model put on the lanes.
// Row blocks of each image, all channels: its input rows (with the
// window's halo) in, kh·kw multiply-adds per output (and any fused
// element-wise ops), its output rows out.
void Tiler::vector_conv(int ki, TilingChoice& choice, const ConvInRows& in_rows) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const int x = k.inputs[0];
    const Shape& xs = T(x).shape;
    const Shape& os = T(k.output).shape;
    const i64 N = os[0], Ho = os[2];
    const i64 tiles = vector_tiles(k, mem_.bytes(k.output));
    const i64 per = std::max<i64>(1, std::min<i64>(Ho, ceil_div(tiles, N)));
    int count = 0;
    for (i64 b = 0; b < N; ++b)
        for (const auto& [h0, h1] : split_ranges(Ho, per)) {
            TileTask t = vector_task(ki, fmt::format("n{}/h{}-{}", b, h0, h1));
            const auto [r0, r1] = in_rows(h0, h1);
            mem_.regions(x, Block{b, b + 1, r0, r1, 0, xs[1]}, t.reads);
            const std::uint64_t in_bytes = sum_bytes(t.reads);
            add_consts(k, 1, t.reads);
            for (std::size_t i = 1; i < k.inputs.size(); ++i)  // a computed weight: all of it
                if (!T(k.inputs[i]).is_const) whole_input(k.inputs[i], t.reads);
            mem_.regions(k.output, Block{b, b + 1, h0, h1, 0, os[1]}, t.writes);
            t.params.bytes = in_bytes;
            t.params.out_bytes = sum_bytes(t.writes);
            t.params.dtype = T(x).dtype;
            finish_vector(t, k.cycles_per_repeat);
            ++count;
        }
    choice.shape = fmt::format("on Vector (grouped: cheaper than the Cube's padded fractals): {} row blocks", count);
}

// Bytes of one independent row of a row op over trailing axes (Softmax,
// LayerNorm, a ReduceSum of the last axes): each row starts a new V
// repeat, so short rows waste lanes. 0 = contiguous work (other axes,
// element-wise, pools, conversions).
std::uint64_t Tiler::row_bytes(const Node& n, const Tensor& in) const {
    const Shape& s = in.shape;
    const i64 rank = static_cast<i64>(s.size());
    if (rank == 0) return 0;
    const auto from_axis = [&](i64 a) { return a < 0 ? a + rank : a; };
    i64 first = rank;  // rows span axes [first, rank)
    switch (n.op) {
        case OpType::Softmax:
        case OpType::TopK:
        case OpType::ArgMax:
            if (from_axis(n.attr_int("axis", -1)) == rank - 1) first = rank - 1;
            break;
        case OpType::LayerNorm:
            first = from_axis(n.attr_int("axis", -1));
            break;
        case OpType::ReduceSum: {
            const auto axes = n.attr_ints("axes", {});
            std::vector<bool> reduced(s.size(), axes.empty());
            for (const auto a : axes) reduced[static_cast<std::size_t>(from_axis(a))] = true;
            while (first > 0 && reduced[static_cast<std::size_t>(first - 1)]) --first;
            for (std::size_t d = 0; d < static_cast<std::size_t>(first); ++d)
                if (reduced[d]) return 0;  // not a suffix: reduces across rows
            break;
        }
        default:
            return 0;
    }
    if (first >= rank) return 0;
    // A fractal (NZ) tensor pads its last axis to 16 columns.
    i64 elts = in.layout == Layout::FRACTAL_NZ ? ceil_div(s.back(), 16) * 16 : s.back();
    for (i64 d = first; d < rank - 1; ++d) elts *= s[static_cast<std::size_t>(d)];
    return static_cast<std::uint64_t>(elts) * static_cast<std::uint64_t>(dtype_bytes(in.dtype));
}

bool Tiler::slice_runs(const Node& n, const Tensor& in, InputRuns& s) const {
    const std::optional<SliceRuns> r = slice_kept_runs(n, in);
    if (!r) return false;
    s = InputRuns{r->first, r->run, {r->rows}, {r->pitch}};
    return true;
}

bool Tiler::transpose_runs(const Node& n, const Tensor& in, InputRuns& s) const {
    if (n.op != OpType::Transpose || !is_plain(in.layout) || in.shape.empty()) return false;
    const auto perm = n.attr_ints("perm", {});
    const std::size_t rank = in.shape.size();
    if (perm.size() != rank || perm.back() != static_cast<i64>(rank) - 1) return false;  // the last axis moves
    // Output axis j is input axis perm[j].
    const std::vector<std::uint64_t> stride = byte_strides(in);
    s = InputRuns{0, static_cast<std::uint64_t>(in.shape.back()) * stride.back(), {}, {}};
    for (std::size_t j = 0; j + 1 < rank; ++j) {
        const auto d = static_cast<std::size_t>(perm[j]);
        s.dims.push_back(static_cast<std::uint64_t>(in.shape[d]));
        s.strides.push_back(stride[d]);
    }
    return s.run > 0;
}

bool Tiler::input_runs(const Node& n, const Tensor& in, InputRuns& s) const {
    return slice_runs(n, in, s) || transpose_runs(n, in, s);
}

std::uint64_t Tiler::InputRuns::rows() const {
    std::uint64_t r = 1;
    for (const std::uint64_t d : dims) r *= d;
    return r;
}

void Tiler::run_reads(int in, const InputRuns& s, std::uint64_t lo, std::uint64_t hi, std::vector<Region>& out) const {
    if (lo >= hi) return;
    // Output row o0's digits, then counted up row by row.
    const std::uint64_t o0 = lo / s.run, o1 = (hi - 1) / s.run;
    std::vector<std::uint64_t> digit(s.dims.size());
    for (std::size_t j = s.dims.size(), rest = o0; j-- > 0;) {
        digit[j] = rest % s.dims[j];
        rest /= s.dims[j];
    }
    std::uint64_t at = s.first;
    for (std::size_t j = 0; j < digit.size(); ++j) at += digit[j] * s.strides[j];
    const std::size_t before = out.size();
    std::size_t whole = SIZE_MAX;  // the strided region in `out` whole runs are gathering in
    std::uint64_t whole_last = 0;  // its last run's input offset
    for (std::uint64_t o = o0; o <= o1; ++o) {
        const std::uint64_t from = o == o0 ? lo - o * s.run : 0, to = o == o1 ? hi - o * s.run : s.run;
        Region* r = whole == SIZE_MAX ? nullptr : &out[whole];
        if (from != 0 || to != s.run) {
            out.push_back(mem_.physical(in, at + from, at + to));
            whole = SIZE_MAX;
        } else if (r && at > whole_last && (r->rows == 1 || at - whole_last == r->stride) && r->rows < UINT32_MAX) {
            if (r->rows == 1) r->stride = at - whole_last;
            ++r->rows;
            whole_last = at;
        } else {
            out.push_back(mem_.physical(in, at, at + s.run));
            whole = out.size() - 1;
            whole_last = at;
        }
        // The next row: the fastest digit counts up, carrying into slower ones.
        for (std::size_t j = digit.size(); j-- > 0;) {
            at += s.strides[j];
            if (++digit[j] < s.dims[j]) break;
            at -= s.strides[j] * s.dims[j];
            digit[j] = 0;
        }
    }
    mem_.count_regions(T(in), out.size() - before);
}

// Element-wise chains and copies: equal slices of the output storage;
// each input read as input_reads says.
void Tiler::elementwise(int ki, TilingChoice& choice) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const int out = k.output;
    const std::uint64_t P = mem_.bytes(out);
    InputRuns runs;
    const bool copied = k.nodes.size() == 1 && input_runs(node(k), T(k.inputs[0]), runs);
    const i64 tiles = vector_tiles(k, P);
    choice.forced = forced(k) != nullptr;
    choice.shape = fmt::format("{} slices of {} KB", tiles, ceil_div(static_cast<i64>(P), tiles * 1024));
    const std::uint64_t chunk = (P / static_cast<std::uint64_t>(tiles) + 511) / 512 * 512;
    int i = 0;
    for (std::uint64_t lo = 0; lo < P; lo += chunk, ++i) {
        const std::uint64_t hi = std::min(P, lo + chunk);
        TileTask t = vector_task(ki, fmt::format("s{}", i));
        std::uint64_t in_bytes = 0;
        for (int in : k.inputs) {
            if (copied && in == k.inputs[0]) {
                run_reads(in, runs, lo, std::min(hi, runs.run * runs.rows()), t.reads);
                in_bytes += hi - lo;
            } else {
                in_bytes += input_reads(k, in, lo, hi, t.reads);
            }
        }
        t.writes.push_back(mem_.physical(out, lo, hi));
        t.params.bytes = in_bytes;
        t.params.out_bytes = hi - lo;
        t.params.dtype = T(k.inputs[0]).dtype;  // contiguous: lanes by the input's elements
        finish_vector(t, k.cycles_per_repeat);
    }
}

// Input `in` of element-wise kernel k behind output bytes [lo, hi): an
// input of the output's shape its same elements (a Slice read in place:
// its input's runs behind them); a Transpose or a Pad the boxes of input
// elements behind them; anything else all of it. Returns the bytes streamed.
std::uint64_t Tiler::input_reads(const Kernel& k, int in, std::uint64_t lo, std::uint64_t hi,
                                 std::vector<Region>& reads) const {
    const Tensor& it = T(in);
    const std::uint64_t P = mem_.bytes(k.output);
    const Node* view = view_slice(in);
    // The same elements at the same place in the other's storage: the same
    // layout and element size, or element sizes that differ (a Quantize or
    // Dequantize in the chain) in a layout whose order does not depend on
    // them (NC1HWC0's C0 does: 32 for int8, 16 otherwise).
    const std::uint64_t per = dtype_bytes(T(k.output).dtype), e = dtype_bytes(it.dtype);
    if (k.kind == KernelKind::elementwise && it.shape == T(k.output).shape && it.layout == T(k.output).layout &&
        (per == e || it.layout != Layout::NC1HWC0)) {
        const std::uint64_t in_lo = lo / per * e, in_hi = hi / per * e;
        if (view) view_reads(*view, in_lo, in_hi, reads);
        else reads.push_back(mem_.physical(in, in_lo, in_hi));
        return in_hi - in_lo;
    }
    if (view) {  // broadcast: all of it, a share streamed
        whole_input(in, reads);
        return it.bytes() * (hi - lo) / P;
    }
    if (const std::size_t at = reads.size();
        k.nodes.size() == 1 && in == k.inputs[0] && box_reads(node(k), in, lo, hi, reads)) {
        // A transpose moves each element once; a Pad its share of the
        // input, no more than its boxes hold (none in the pads).
        std::uint64_t boxed = 0;
        for (std::size_t r = at; r < reads.size(); ++r) boxed += reads[r].total();
        return node(k).op == OpType::Transpose ? hi - lo : std::min(boxed, mem_.bytes(in) * (hi - lo) / P);
    }
    // Broadcast operands and other copies (Gather, ScatterND) read
    // scattered data: name all of it (safe for sync), stream a share of it.
    whole_input(in, reads);
    return it.is_const ? std::min<std::uint64_t>(mem_.bytes(in), hi - lo) : mem_.bytes(in) * (hi - lo) / P;
}

// All of tensor `in`: its storage, or a Slice read in place's runs.
void Tiler::whole_input(int in, std::vector<Region>& reads) const {
    if (const Node* view = view_slice(in)) view_reads(*view, 0, T(in).bytes(), reads);
    else reads.push_back(mem_.physical(in, 0, mem_.bytes(in)));
}

const Node* Tiler::view_slice(int t) const {
    const int p = T(t).producer;
    return p >= 0 && views_[static_cast<std::size_t>(p)] ? &g_.nodes[static_cast<std::size_t>(p)] : nullptr;
}

// Bytes [lo, hi) of a Slice read in place: the runs of its input behind them.
void Tiler::view_reads(const Node& slice, std::uint64_t lo, std::uint64_t hi, std::vector<Region>& reads) const {
    const int src = slice.inputs[0];
    InputRuns runs;
    if (!slice_runs(slice, T(src), runs)) throw std::logic_error("Tiler: Slice '" + slice.name + "' is no view");
    run_reads(src, runs, lo, std::min(hi, runs.run * runs.rows()), reads);
}

// A Vector kernel fused behind a Cube kernel: one tile per Cube tile,
// reading it in place (UB / L2) and writing the same block.
void Tiler::fused_vector(int ki, TilingChoice& choice) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const int c = k.fused_with;
    const int first = first_tile_[static_cast<std::size_t>(c)], n = tile_count_[static_cast<std::size_t>(c)];
    const Space in_space = n > 0 ? tasks_[static_cast<std::size_t>(first)].params.dst : Space::l2;
    choice.shape = fmt::format("{} tiles, one per Cube tile of {} (fused, in {})", n,
                               plan_.kernels[static_cast<std::size_t>(c)].name, to_string(in_space));
    const double out_per_in =
        static_cast<double>(mem_.bytes(k.output)) /
        static_cast<double>(std::max<std::uint64_t>(1, mem_.bytes(plan_.kernels[static_cast<std::size_t>(c)].output)));
    for (int i = 0; i < n; ++i) {
        const TileTask& ct = tasks_[static_cast<std::size_t>(first + i)];
        TileTask t = vector_task(ki, ct.label);
        t.paired = first + i;
        t.reads = ct.writes;
        add_consts(k, 1, t.reads);
        for (const Region& r : ct.writes) {
            // The same place in the output, scaled by its element size (row by row).
            const auto scaled = [&](std::uint64_t v) {
                return static_cast<std::uint64_t>(static_cast<double>(v) * out_per_in);
            };
            const auto off = r.addr - mem_.addr(plan_.kernels[static_cast<std::size_t>(c)].output);
            Region o = mem_.physical(k.output, scaled(off), scaled(off) + scaled(r.bytes));
            o.stride = scaled(r.stride);
            o.rows = r.rows;
            t.writes.push_back(o);
        }
        t.params.src = ct.params.dst;
        t.params.bytes = sum_bytes(ct.writes);
        t.params.out_bytes = sum_bytes(t.writes);
        t.params.dtype = T(plan_.kernels[static_cast<std::size_t>(c)].output).dtype;
        finish_vector(t, k.cycles_per_repeat);
    }
}

// Row blocks with all columns: FormatConvert, row-wise reductions
// (Softmax, LayerNorm, ReduceSum over the last axis), pools (with halo
// rows) and GlobalAvgPool (by channel blocks).
void Tiler::rowwise(int ki, TilingChoice& choice) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const Node& n = node(k);
    const int in = k.inputs[0], out = k.output;
    const Block ob = full_block(T(out)), ib = full_block(T(in));
    const i64 tiles = vector_tiles(k, mem_.bytes(in));
    // GlobalAvgPool and GroupNorm reduce over all rows: split by channels
    // (GroupNorm by whole groups).
    const bool gap = n.op == OpType::GlobalAvgPool || n.op == OpType::GroupNorm;
    const i64 channel_unit =
        n.op == OpType::GroupNorm ? std::max<i64>(1, ib.c1 / std::max<i64>(1, n.attr_int("groups", 1))) : c0_of(T(in));
    const auto image = [](const Tensor& t) {
        return t.shape.size() == 4 && (t.layout == Layout::NCHW || t.layout == Layout::NC1HWC0);
    };
    const bool in_image = image(T(in));
    const bool image_vs_matrix = n.op == OpType::FormatConvert && T(in).shape == T(out).shape &&
                                 T(in).shape.size() == 4 && in_image != image(T(out));
    // Split the batch first, then rows (channels for GlobalAvgPool).
    const i64 outer = ob.b1;
    // Rows (channel units) per image are the grain: the largest tile sets
    // the kernel's wave, so cut into the fewest tiles with that largest
    // tile (56 rows in 48 tiles have tiles of 2 rows, as 28 tiles do, and
    // the 20 more only cost dispatch and task starts).
    const i64 units = gap ? ceil_div(ob.c1, channel_unit) : ob.r1;
    i64 per = std::max<i64>(1, ceil_div(tiles, outer));
    if (!forced(k)) per = ceil_div(units, ceil_div(units, std::min(per, units)));
    const std::uint64_t row = row_bytes(n, T(in));
    choice.forced = forced(k) != nullptr;
    int i = 0;
    for (i64 b = 0; b < outer; ++b) {
        const auto parts = gap ? split_ranges(ob.c1, per, channel_unit) : split_ranges(ob.r1, per);
        for (const auto& [lo, hi] : parts) {
            TileTask t = vector_task(ki, fmt::format("n{}/{}{}-{}", b, gap ? "c" : "r", lo, hi));
            Block rb{b, b + 1, lo, hi, 0, ib.c1}, wb{b, b + 1, lo, hi, 0, ob.c1};
            if (gap) {
                rb = Block{b, b + 1, 0, ib.r1, lo, hi};
                wb = Block{b, b + 1, 0, ob.r1, lo, hi};
            } else if (n.op == OpType::MaxPool || n.op == OpType::AvgPool) {
                const auto kk = n.attr_ints("kernel", {2, 2});
                const auto st = n.attr_ints("stride", kk);
                const auto pd = n.attr_ints("pad", {0, 0});
                rb.r0 = std::max<i64>(0, lo * st[0] - pd[0]);
                rb.r1 = std::min<i64>(ib.r1, (hi - 1) * st[0] - pd[0] + kk[0]);
            } else if (ib.r1 != ob.r1) {
                rb = Block{b, b + 1, 0, ib.r1, 0, ib.c1};  // reduces rows: reads them all
            }
            std::vector<Block> read_blocks{rb};
            if (!gap && image_vs_matrix) {
                // A 4-D tensor is (N, H rows, C columns) in an image
                // layout and (N·C, H rows, W columns) in a matrix one:
                // the tile's rows of one (n, c) plane, or of every c of
                // one n, on the other side (heads converted to
                // FRACTAL_NZ read every head's rows for one head's).
                read_blocks.clear();
                if (in_image) read_blocks.push_back(Block{b / ib.c1, b / ib.c1 + 1, lo, hi, b % ib.c1, b % ib.c1 + 1});
                else
                    for (i64 c = 0; c < ob.c1; ++c)
                        read_blocks.push_back(Block{b * ob.c1 + c, b * ob.c1 + c + 1, lo, hi, 0, ib.c1});
            }
            for (const Block& r : read_blocks) mem_.regions(in, r, t.reads);
            mem_.regions(out, wb, t.writes);
            add_consts(k, 1, t.reads);
            t.params.bytes = sum_bytes(t.reads);
            t.params.out_bytes = sum_bytes(t.writes);
            t.params.dtype = T(in).dtype;
            t.params.row_bytes = row;
            finish_vector(t, k.cycles_per_repeat);
            ++i;
        }
    }
    choice.shape = fmt::format("{} tiles ({} per image) over {}", i, per, gap ? "channels" : "rows");
}

// Concat: each input copied into its place in the output.
namespace {

// Where a Concat's axis falls in the block model. Image layouts keep
// (N, H rows, C columns) with W whole; a join along W, and every plain
// tensor, use the matrix view (leading dims, rows, columns), where W is
// the columns. An axis among the leading dims is `lead`: an input's image
// b = (o * extent + j) * inner + i lands at o * out_extent + offset + j.
struct ConcatAxis {
    enum Where { lead, rows, cols, whole } where = whole;
    bool matrix = false;
    i64 inner = 1;  // leading images inside the axis (lead only)
};

ConcatAxis concat_axis(const Tensor& in, const Tensor& out, i64 axis) {
    const Shape& s = in.shape;
    const auto n = static_cast<i64>(s.size());
    ConcatAxis a;
    const bool image = n == 4 && (out.layout == Layout::NCHW || out.layout == Layout::NC1HWC0);
    if (image && axis != 3) {
        a.where = axis == 0 ? ConcatAxis::lead : axis == 1 ? ConcatAxis::cols : ConcatAxis::rows;
        return a;
    }
    // W inside NC1HWC0's C0 blocks (of the output, or of an operand left in
    // it, a constant): one copy per image. Every other layout has a matrix view.
    if (in.layout == Layout::NC1HWC0 || out.layout == Layout::NC1HWC0) return a;
    a.matrix = true;
    if (axis == n - 1) {
        a.where = ConcatAxis::cols;
    } else if (axis == n - 2) {
        a.where = ConcatAxis::rows;
    } else {
        a.where = ConcatAxis::lead;
        for (i64 d = axis + 1; d < n - 2; ++d) a.inner *= s[static_cast<std::size_t>(d)];
    }
    return a;
}

}  // namespace

// Each input's share of the kernel's tile count (vector_tiles over all its
// bytes) cuts it into row blocks of each image, or, with fewer tiles than
// images, into runs of whole images, so a large input is not one long
// copy on one core and many small images are not one task each.
void Tiler::concat(int ki, TilingChoice& choice) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const Node& n = node(k);
    const Tensor& ot = T(k.output);
    i64 axis = n.attr_int("axis", 1);
    if (axis < 0) axis += static_cast<i64>(ot.shape.size());
    std::uint64_t all = 0;
    for (int in : k.inputs) all += mem_.bytes(in);
    const i64 budget = vector_tiles(k, all);
    i64 offset = 0;
    int tiles = 0;
    for (int in : k.inputs) {
        const double share = all > 0 ? static_cast<double>(mem_.bytes(in)) / static_cast<double>(all) : 1.0;
        tiles += concat_input(ki, in, axis, offset, static_cast<double>(budget) * share);
        offset += T(in).shape[static_cast<std::size_t>(axis)];
    }
    choice.shape = fmt::format("{} copies", tiles);
}

// Copies input `in` to `offset` along the Concat's `axis` in `want` tiles
// or about that many; returns how many it made.
int Tiler::concat_input(int ki, int in, i64 axis, i64 offset, double want) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const Tensor& ot = T(k.output);
    const ConcatAxis a = concat_axis(T(in), ot, axis);
    const Block ib = full_block(T(in), a.matrix), ob = full_block(ot, a.matrix);
    const i64 extent = T(in).shape[static_cast<std::size_t>(axis)];
    const i64 out_extent = ot.shape[static_cast<std::size_t>(axis)];
    // Runs of input images that stay together in the output.
    const i64 run = a.where == ConcatAxis::lead ? extent * a.inner : ib.b1;
    const auto out_image = [&](i64 b) {
        if (a.where != ConcatAxis::lead) return b;
        const i64 o = b / run;
        return (o * out_extent + offset) * a.inner + b % run;
    };
    const bool split_rows = a.where != ConcatAxis::whole;
    const i64 per_image = split_rows ? std::clamp<i64>(std::llround(want / static_cast<double>(ib.b1)), 1, ib.r1) : 1;
    const bool grouped = split_rows && std::llround(want / static_cast<double>(ib.b1)) < 1;
    int tiles = 0;
    for (i64 r = 0; r < ib.b1; r += run) {
        const i64 groups =
            grouped ? std::max<i64>(1, std::llround(want * static_cast<double>(run) / static_cast<double>(ib.b1)))
                    : run;
        for (const auto& [g0, g1] : split_ranges(run, groups)) {
            for (const auto& [r0, r1] : split_ranges(ib.r1, per_image)) {
                const i64 b0 = r + g0, b1 = r + g1;
                std::string label =
                    T(in).name + (b1 - b0 > 1 ? fmt::format("/n{}-{}", b0, b1) : fmt::format("/n{}", b0));
                if (per_image > 1) label += fmt::format("/r{}-{}", r0, r1);
                TileTask t = vector_task(ki, std::move(label), npusim::Kernel::copy);
                Block rb = ib, wb = ob;
                rb.b0 = b0;
                rb.b1 = b1;
                wb.b0 = out_image(b0);
                wb.b1 = wb.b0 + (b1 - b0);
                rb.r0 = wb.r0 = r0;
                rb.r1 = wb.r1 = r1;
                if (a.where == ConcatAxis::cols) {
                    wb.c0 = offset;
                    wb.c1 = offset + extent;
                } else if (a.where == ConcatAxis::rows) {
                    wb.r0 = offset + r0;
                    wb.r1 = offset + r1;
                }
                if (a.matrix) {
                    mem_.matrix_regions(in, rb, t.reads);
                    mem_.matrix_regions(k.output, wb, t.writes);
                } else {
                    mem_.regions(in, rb, t.reads);
                    mem_.regions(k.output, wb, t.writes);
                }
                t.params.bytes = sum_bytes(t.reads);
                finish_vector(t, 0);
                ++tiles;
            }
        }
    }
    return tiles;
}

}  // namespace npusim::compiler
