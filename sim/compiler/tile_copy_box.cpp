// The input a copy's tile reads when its output elements come from
// scattered input elements (a Transpose that moves the last axis, a Pad
// of constant or edge values): the boxes of input indices behind the
// tile's output slice, named as strided regions. Each box of output
// indices spans, per output axis, a range; each input axis's range follows
// from the op's index map. Copies whose map the compiler does not know
// (Resize, which also stands for Tile, Expand and GridSample; a reflecting
// Pad) keep naming their whole input.
#include <algorithm>

#include "compiler/op_traits.hpp"
#include "compiler/tiler_impl.hpp"

namespace npusim::compiler {

namespace {

using u64 = std::uint64_t;

// Regions a tile's box may take before it is named as one span: a DMA
// descriptor list of a reasonable length.
constexpr u64 kMaxBoxRegions = 64;

// Output elements [e0, e1] as boxes of output indices (per axis a range
// [first, first + count)), each single down to one axis, a range there,
// whole inside it: a partial row, then ever larger aligned blocks, then
// ever smaller ones; at most 2 per axis.
void output_boxes(const std::vector<u64>& odim, u64 e0, u64 e1, std::vector<IndexBox>& out) {
    const std::size_t rank = odim.size();
    std::vector<u64> size(rank);  // elements per index of each axis
    for (std::size_t j = rank, at = 1; j-- > 0;) size[j] = at, at *= odim[j];
    for (u64 e = e0; e <= e1;) {
        // The outermost axis whose blocks e starts on and the rest of the
        // elements fill at least one of.
        std::size_t j = 0;
        while (j + 1 < rank && (e % size[j] != 0 || e1 - e + 1 < size[j])) ++j;
        const u64 at = e / size[j] % odim[j];
        const u64 n = std::min((e1 - e + 1) / size[j], odim[j] - at);
        IndexBox b;
        b.first.assign(rank, 0);
        b.count.assign(rank, 1);
        for (std::size_t i = 0; i < j; ++i) b.first[i] = e / size[i] % odim[i];
        b.first[j] = at, b.count[j] = n;
        for (std::size_t i = j + 1; i < rank; ++i) b.count[i] = odim[i];
        out.push_back(std::move(b));
        e += n * size[j];
    }
}

// Input index range [lo, hi] behind output indices [o0, o1] of a Pad axis
// (`begin` leading pads, `interior` zeros between elements): the elements
// it copies, or the nearest edge one (an edge pad's value) if none.
void pad_range(u64 o0, u64 o1, i64 begin, i64 interior, u64 dim, u64& lo, u64& hi) {
    const auto step = static_cast<i64>(interior + 1);
    const i64 a = static_cast<i64>(o0) - begin, b = static_cast<i64>(o1) - begin;
    const i64 max = static_cast<i64>(dim) - 1;
    const i64 l = std::clamp<i64>(a <= 0 ? 0 : (a + step - 1) / step, 0, max);
    const i64 h = std::clamp<i64>(b < 0 ? 0 : b / step, 0, max);
    lo = static_cast<u64>(std::min(l, h));
    hi = static_cast<u64>(std::max(l, h));
}

}  // namespace

std::vector<u64> byte_strides(const Tensor& t) {
    std::vector<u64> stride(t.shape.size());
    u64 at = static_cast<u64>(dtype_bytes(t.dtype));
    for (std::size_t d = t.shape.size(); d-- > 0;) {
        stride[d] = at;
        at *= static_cast<u64>(t.shape[d]);
    }
    return stride;
}

bool Tiler::input_box(const Node& n, const Tensor& in, const IndexBox& o, IndexBox& box) const {
    const std::size_t rank = in.shape.size();
    const std::vector<u64>&ofirst = o.first, &ocount = o.count;
    std::vector<u64>&first = box.first, &count = box.count;
    first.assign(rank, 0);
    count.assign(rank, 0);
    const auto dim = [&](std::size_t d) { return static_cast<u64>(in.shape[d]); };
    u64 lo = 0, hi = 0;
    switch (n.op) {
        case OpType::Transpose: {
            const auto perm = n.attr_ints("perm", {});
            if (perm.size() != rank) return false;
            for (std::size_t j = 0; j < rank; ++j) {
                first[static_cast<std::size_t>(perm[j])] = ofirst[j];
                count[static_cast<std::size_t>(perm[j])] = ocount[j];
            }
            return true;
        }
        case OpType::Pad: {
            const auto mode = n.attrs.count("mode") ? n.attrs.at("mode").s : std::string("constant");
            if (mode != "constant" && mode != "edge") return false;  // reflect, wrap: indices from the far side
            const auto pads = n.attr_ints("pads", {});
            const auto interior = n.attr_ints("interior", std::vector<i64>(rank, 0));
            if (pads.size() != 2 * rank || interior.size() != rank) return false;
            for (std::size_t d = 0; d < rank; ++d) {
                pad_range(ofirst[d], ofirst[d] + ocount[d] - 1, pads[d], interior[d], dim(d), lo, hi);
                first[d] = lo, count[d] = hi - lo + 1;
            }
            return true;
        }
        default:
            return false;
    }
}

bool Tiler::box_reads(const Node& n, int in, u64 lo, u64 hi, std::vector<Region>& out) const {
    const Tensor& t = T(in);
    if ((n.op != OpType::Transpose && n.op != OpType::Pad) || n.outputs.empty()) return false;
    if (!is_plain(t.layout) || t.shape.empty() || lo >= hi) return false;
    const Tensor& o = T(n.outputs[0]);
    if (o.shape.size() != t.shape.size()) return false;
    const auto out_elt = static_cast<u64>(dtype_bytes(o.dtype));
    const std::size_t rank = t.shape.size();
    const std::vector<u64> stride = byte_strides(t);
    std::vector<u64> odim(rank), dim(rank);
    for (std::size_t d = 0; d < rank; ++d) {
        odim[d] = static_cast<u64>(o.shape[d]);
        dim[d] = static_cast<u64>(t.shape[d]);
    }
    std::vector<IndexBox> pieces;
    output_boxes(odim, lo / out_elt, (hi - 1) / out_elt, pieces);
    std::vector<IndexBox> boxes(pieces.size());
    for (std::size_t i = 0; i < pieces.size(); ++i)
        if (!input_box(n, t, pieces[i], boxes[i])) return false;
    for (const IndexBox& b : boxes) box_regions(in, dim, stride, b, out);
    return true;
}

void Tiler::box_regions(int in, const std::vector<u64>& dim, const std::vector<u64>& stride, const IndexBox& box,
                        std::vector<Region>& out) const {
    const Tensor& t = T(in);
    const std::vector<u64>&first = box.first, &count = box.count;
    const std::size_t rank = dim.size();
    // The run: the innermost axes the box holds whole, and the one outside them.
    std::size_t k = rank;
    while (k > 0 && count[k - 1] == dim[k - 1]) --k;
    if (k == 0) {
        out.push_back(mem_.physical(in, 0, mem_.bytes(in)));
        mem_.count_regions(t, 1);
        return;
    }
    --k;
    const u64 run = count[k] * stride[k];
    // The rows: the next axis out with more than one index; the axes
    // outside it, one region per combination.
    std::size_t m = k;
    while (m > 0 && count[m - 1] == 1) --m;
    const bool strided = m > 0;
    if (strided) --m;
    u64 base = 0, combos = 1;
    for (std::size_t d = 0; d <= k; ++d) base += first[d] * stride[d];
    for (std::size_t d = 0; strided && d < m; ++d) combos *= count[d];
    const u64 rows = strided ? count[m] : 1;
    if (combos > kMaxBoxRegions || rows > UINT32_MAX) {
        u64 last = base + run;
        for (std::size_t d = 0; d < k; ++d) last += (count[d] - 1) * stride[d];
        out.push_back(mem_.physical(in, base, last));
        mem_.count_regions(t, 1);
        return;
    }
    std::vector<u64> digit(m, 0);
    for (u64 c = 0; c < combos; ++c) {
        u64 at = base;
        for (std::size_t d = 0; d < m; ++d) at += digit[d] * stride[d];
        Region r = mem_.physical(in, at, at + run);
        if (rows > 1) r.rows = static_cast<std::uint32_t>(rows), r.stride = stride[m];
        out.push_back(r);
        for (std::size_t d = m; d-- > 0;)  // the next combination, the innermost axis first
            if (++digit[d] < count[d]) break;
            else digit[d] = 0;
    }
    mem_.count_regions(t, combos);
}

}  // namespace npusim::compiler
