// ONNX ops that move, split, broadcast or index data, and the losses built
// from them, as graph ops of the same bytes: each graph node has one output,
// so an op of several outputs (Split) is several nodes.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "onnx/einsum.hpp"
#include "onnx/mapping_support.hpp"

namespace npusim::onnx_import {
namespace {

// Split: one Slice per used output, sizes from the inferred output shapes
// (the `split` attribute, the `split` input or equal parts alike).
std::string split(MapContext& c) {
    const Shape& x = c.shape(0);
    const int axis = norm_axis(attr_int(c.node, "axis", 0), x.size());
    if (axis < 0 || axis >= static_cast<int>(x.size())) return "Split (axis)";
    std::int64_t start = 0;
    const auto n = static_cast<std::size_t>(c.node.output_size());
    for (std::size_t k = 0; k < n; ++k) {
        if (c.out(k).empty()) continue;
        if (!c.out_known(k)) return "Split (output shape unknown: computed split sizes)";
        const std::int64_t len = c.out_shape(k).at(static_cast<std::size_t>(axis));
        if (c.output_used(k)) {
            if (len == x[static_cast<std::size_t>(axis)]) {
                c.b.add_node(c.b.node_name(c.name), "Reshape", {c.in(0)}, c.out(k), ojson{{"shape", ints_json(x)}});
            } else {
                c.emit("Slice", {c.in(0)}, c.out(k),
                       ojson{{"starts", ojson::array({start})}, {"ends", ojson::array({start + len})}, {"axes", ojson::array({axis})}},
                       fmt::format(".{}", k));
            }
        }
        start += len;
    }
    return "";
}

// Expand and Tile of computed data: a broadcast copy to the output shape
// (a nearest-neighbour Resize: every output element read from one input
// element), after lifting the input to the output's rank.
std::string broadcast_copy(MapContext& c) {
    if (!c.out_known()) return c.node.op_type() + " (output shape unknown: computed shape or repeats)";
    const Shape& x = c.shape(0);
    const Shape& o = c.out_shape();
    if (x == o) {
        c.alias_output(c.in(0));
        return "";
    }
    if (x.size() > o.size()) return c.node.op_type() + " (rank)";
    Shape lifted(o.size() - x.size(), 1);
    lifted.insert(lifted.end(), x.begin(), x.end());
    const std::string in = reshaped(c, c.in(0), x, lifted, ".lift");
    c.emit("Resize", {in}, c.out(), ojson{{"sizes", ints_json(o)}, {"mode", "nearest"}});
    return "";
}

// Hardmax: the ArgMax along its rows (as Softmax's), then the one-hot
// rows written (a broadcast write of the output's size).
std::string hardmax(MapContext& c) {
    const Shape& x = c.shape(0);
    if (x.empty()) return "Hardmax (scalar)";
    SoftmaxRows r;
    if (!softmax_rows(c, r)) return "Hardmax (axis)";
    const std::string t = c.b.temp_tensor(c.name + ".argmax");
    c.emit("ArgMax", {r.tensor}, t, ojson{{"axis", r.axis}, {"keepdims", 1}}, ".argmax");
    const std::string h = c.b.temp_tensor(c.name + ".as_x");
    c.emit("Cast", {t}, h, ojson{{"dtype", graph_dtype(c.elem_type(0))}}, ".cast");
    if (r.shape == x) {
        c.emit("Resize", {h}, c.out(), ojson{{"sizes", ints_json(x)}, {"mode", "nearest"}});
        return "";
    }
    const std::string w = c.b.temp_tensor(c.name + ".rows_out");
    c.emit("Resize", {h}, w, ojson{{"sizes", ints_json(r.shape)}, {"mode", "nearest"}}, ".write");
    c.emit("Reshape", {w}, c.out(), ojson{{"shape", ints_json(x)}}, ".out");
    return "";
}

// OneHot: the indices compared with each class (a broadcast write of the
// output's size, the class axis inserted at `axis`).
std::string one_hot(MapContext& c) {
    if (!c.out_known()) return "OneHot (output shape unknown: computed depth)";
    const Shape& o = c.out_shape();
    const int axis = norm_axis(attr_int(c.node, "axis", -1), o.size());
    if (axis < 0 || axis >= static_cast<int>(o.size())) return "OneHot (axis)";
    Shape lifted = o;
    lifted[static_cast<std::size_t>(axis)] = 1;
    const std::string in = reshaped(c, same_dtype(c, 0, 2), c.shape(0), lifted, ".lift");
    c.emit("Resize", {in}, c.out(), ojson{{"sizes", ints_json(o)}, {"mode", "nearest"}});
    return "";
}

// GridSample: each output element read from the input at a grid position
// (`bilinear` 4 taps, `bicubic` 16, `nearest` 1): a Resize to the output's
// size in that mode.
std::string grid_sample(MapContext& c) {
    if (!c.out_known() || c.shape(0).size() != 4) return "GridSample (rank)";
    const auto* m = find_attr(c.node, "mode");
    const std::string mode = !m || m->s() == "bilinear" ? "linear" : m->s() == "bicubic" ? "cubic" : "nearest";
    c.emit("Resize", {c.in(0)}, c.out(), ojson{{"sizes", ints_json(c.out_shape())}, {"mode", mode}});
    return "";
}

// Trilu: a Mul by a constant triangular mask of the last two dims.
std::string trilu(MapContext& c) {
    const Shape& x = c.shape(0);
    if (x.size() < 2) return "Trilu (rank)";
    // k only moves the diagonal: the mask's cost is the same for any k.
    const std::string mask = c.b.temp_tensor(c.name + ".mask");
    c.b.declare(mask, Shape{x[x.size() - 2], x.back()}, graph_dtype(c.elem_type(0)), false, true);
    c.emit("Mul", {c.in(0), mask}, c.out());
    return "";
}

std::string cumsum(MapContext& c) {
    // An axis computed at run time is costed along the last axis: the passes
    // are the same along any axis of plain data.
    const ConstValue* a = c.value(1);
    const int axis = norm_axis(a && a->data.size() == 1 ? a->int_at(0) : -1, c.shape(0).size());
    if (axis < 0 || axis >= static_cast<int>(c.shape(0).size())) return "CumSum (axis)";
    c.emit("CumSum", {c.in(0)}, c.out(), ojson{{"axis", axis}});
    return "";
}

// GatherElements / GatherND: one indexed read per output element (or row),
// as a Gather from the data viewed as rows, then the output's shape.
std::string gather_rows(MapContext& c, bool nd) {
    if (!c.out_known()) return c.node.op_type() + " (output shape unknown)";
    const Shape& x = c.shape(0);
    const Shape& idx = c.shape(1);
    const Shape& o = c.out_shape();
    if (x.empty() || idx.empty()) return c.node.op_type() + " (scalar operand)";
    // Rows of the data an index picks: single elements (GatherElements), or
    // the trailing dims after the indexed ones (GatherND).
    std::int64_t row = 1;
    if (nd) {
        const std::int64_t batch = attr_int(c.node, "batch_dims", 0);
        const auto k = static_cast<std::size_t>(batch + idx.back());
        if (k > x.size()) return "GatherND (index depth)";
        row = product(x, k, x.size());
        if (row == 0) return "GatherND (empty tensor)";
    }
    const std::int64_t picks = std::max<std::int64_t>(1, product(o, 0, o.size()) / row);
    const std::string data = reshaped(c, c.in(0), x, {product(x, 0, x.size()) / row, row}, ".rows");
    std::string at;
    if (nd && idx.back() > 1) {
        // Each index tuple becomes a row number: a multiply-add per component.
        const std::string tuples = reshaped(c, c.in(1), idx, {picks, product(idx, 0, idx.size()) / picks}, ".tuples");
        at = c.b.temp_tensor(c.name + ".row");
        c.emit("ReduceSum", {tuples}, at, ojson{{"axes", ojson::array({1})}, {"keepdims", 0}}, ".row");
    } else {
        at = reshaped(c, c.in(1), idx, {picks}, ".index");
    }
    const std::string t = c.b.temp_tensor(c.name + ".picked");
    c.emit("Gather", {data, at}, t, ojson{{"axis", 0}}, ".gather");
    c.emit("Reshape", {t}, c.out(), ojson{{"shape", ints_json(o)}}, ".out");
    return "";
}

// DepthToSpace / SpaceToDepth: the reshape-transpose-reshape of their definition.
std::string depth_space(MapContext& c, bool to_space) {
    if (!c.out_known() || c.shape(0).size() != 4) return c.node.op_type() + " (rank)";
    const Shape& x = c.shape(0);
    const std::int64_t b = attr_int(c.node, "blocksize", 1), n = x[0], ch = x[1], h = x[2], w = x[3];
    if (b < 1 || (to_space ? ch % (b * b) : h % b + w % b) != 0) return c.node.op_type() + " (blocksize)";
    const bool crd = to_space && [&] {
        const auto* m = find_attr(c.node, "mode");
        return m && m->s() == "CRD";
    }();
    Shape mid, perm;
    if (to_space) {
        mid = crd ? Shape{n, ch / (b * b), b, b, h, w} : Shape{n, b, b, ch / (b * b), h, w};
        perm = crd ? Shape{0, 1, 4, 2, 5, 3} : Shape{0, 3, 4, 1, 5, 2};
    } else {
        mid = {n, ch, h / b, b, w / b, b};
        perm = {0, 3, 5, 1, 2, 4};
    }
    const std::string v = reshaped(c, c.in(0), x, mid, ".blocks");
    const std::string t = c.b.temp_tensor(c.name + ".moved");
    c.emit("Transpose", {v}, t, ojson{{"perm", ints_json(perm)}}, ".transpose");
    c.emit("Reshape", {t}, c.out(), ojson{{"shape", ints_json(c.out_shape())}}, ".out");
    return "";
}

// NegativeLogLikelihoodLoss over log-probabilities [N, C, d...] (or the
// log-softmax SoftmaxCrossEntropyLoss computes first): one element picked
// per target, optionally weighted, then reduced (mean or sum) or not.
std::string nll_loss(MapContext& c, bool softmax) {
    if (!c.out_known()) return c.node.op_type() + " (output shape unknown)";
    const Shape& x = c.shape(0);
    if (x.size() < 2) return c.node.op_type() + " (rank)";
    std::string in = c.in(0);
    if (softmax) {
        in = c.b.temp_tensor(c.name + ".log_prob");
        c.emit("Softmax", {c.in(0)}, in, ojson{{"axis", 1}}, ".log_softmax");
        if (c.output_used(1)) c.alias_output(in, 1);
    }
    const Shape& target = c.shape(1);
    const std::int64_t picks = product(target, 0, target.size());
    const std::string data = reshaped(c, in, x, {product(x, 0, x.size())}, ".flat");
    const std::string at = reshaped(c, c.in(1), target, {picks}, ".index");
    std::string cur = c.b.temp_tensor(c.name + ".picked");
    c.emit("Gather", {data, at}, cur, ojson{{"axis", 0}}, ".pick");
    if (c.has_input(2)) {  // per-class weights: gathered by the same targets
        const std::string w = c.b.temp_tensor(c.name + ".weights");
        c.emit("Gather", {c.in(2), at}, w, ojson{{"axis", 0}}, ".weight");
        const std::string t = c.b.temp_tensor(c.name + ".weighted");
        c.emit("Mul", {cur, w}, t, ojson::object(), ".weigh");
        cur = t;
    }
    const auto* r = find_attr(c.node, "reduction");
    const std::string reduction = r ? r->s() : "mean";
    if (reduction == "none") {
        c.emit("Reshape", {cur}, c.out(), ojson{{"shape", ints_json(c.out_shape().empty() ? Shape{1} : c.out_shape())}}, ".out");
        return "";
    }
    c.emit(reduction == "sum" ? "ReduceSum" : "ReduceMean", {cur}, c.out(), ojson{{"keepdims", 1}});
    return "";
}

// Einsum of one or two operands, as ReduceSum, Transpose, Reshape and one
// (Batch)MatMul: batch letters (in both operands and the output) lead,
// contracted letters (in both, not the output) are K, the others M and N.
class EinsumBuilder {
public:
    explicit EinsumBuilder(MapContext& c) : c_(c) {}

    // Sums out the letters of `term` not in `keep`; returns the new term.
    std::string sum_out(std::string& x, Shape& shape, const std::string& term, const std::string& keep) {
        Shape axes, kept_shape;
        std::string kept;
        for (std::size_t i = 0; i < term.size(); ++i) {
            if (keep.find(term[i]) == std::string::npos) {
                axes.push_back(static_cast<std::int64_t>(i));
            } else {
                kept += term[i];
                kept_shape.push_back(shape[i]);
            }
        }
        if (axes.empty()) return term;
        const std::string t = c_.b.temp_tensor(c_.name + ".sum");
        c_.emit("ReduceSum", {x}, t, ojson{{"axes", ints_json(axes)}, {"keepdims", 0}}, ".sum");
        if (kept_shape.empty()) kept_shape.push_back(1);
        x = t;
        shape = kept_shape;
        return kept;
    }

    // Permutes x (letters `term`) to the letters `order`.
    void permute(std::string& x, Shape& shape, std::string& term, const std::string& order, const char* suffix) {
        if (term == order) return;
        Shape perm, out;
        for (const char ch : order) {
            const auto i = term.find(ch);
            perm.push_back(static_cast<std::int64_t>(i));
            out.push_back(shape[i]);
        }
        const std::string t = c_.b.temp_tensor(c_.name + suffix);
        c_.emit("Transpose", {x}, t, ojson{{"perm", ints_json(perm)}}, suffix);
        x = t;
        shape = out;
        term = order;
    }

private:
    MapContext& c_;
};

std::string einsum(MapContext& c) {
    const auto* eq = find_attr(c.node, "equation");
    if (!eq) return "Einsum (no equation)";
    std::vector<std::size_t> ranks;
    for (std::size_t i = 0; i < c.inputs(); ++i) ranks.push_back(c.shape(i).size());
    if (ranks.empty() || ranks.size() > 2) return fmt::format("Einsum ({} operands)", ranks.size());
    EinsumTerms t;
    if (const std::string why = parse_einsum(eq->s(), ranks, t); !why.empty()) return "Einsum (" + why + ")";
    if (!c.out_known()) return "Einsum (output shape unknown)";
    EinsumBuilder e(c);
    std::string a = c.in(0);
    Shape as = c.shape(0);
    const std::string keep_a = ranks.size() == 2 ? t.out + t.in[1] : t.out;
    std::string ta = e.sum_out(a, as, t.in[0], keep_a);
    const auto size_of = [](const std::string& term, const Shape& s, char ch) { return s[term.find(ch)]; };
    if (ranks.size() == 1) {
        e.permute(a, as, ta, t.out, ".transpose");
        c.emit("Reshape", {a}, c.out(), ojson{{"shape", ints_json(c.out_shape())}}, ".out");
        return "";
    }
    std::string b = c.in(1);
    Shape bs = c.shape(1);
    std::string tb = e.sum_out(b, bs, t.in[1], t.out + ta);
    std::string batch, contract, free_a, free_b;
    for (const char ch : ta) {
        const bool in_b = tb.find(ch) != std::string::npos, in_out = t.out.find(ch) != std::string::npos;
        (in_b ? (in_out ? batch : contract) : free_a) += ch;
    }
    for (const char ch : tb)
        if (ta.find(ch) == std::string::npos) free_b += ch;
    for (const char ch : batch + contract)
        if (size_of(ta, as, ch) != size_of(tb, bs, ch)) return "Einsum (broadcast index)";
    e.permute(a, as, ta, batch + free_a + contract, ".a_t");
    e.permute(b, bs, tb, batch + contract + free_b, ".b_t");
    const auto dims = [&](const std::string& term, const Shape& s, const std::string& letters) {
        std::int64_t n = 1;
        for (const char ch : letters) n *= size_of(term, s, ch);
        return n;
    };
    const std::int64_t bt = dims(ta, as, batch), m = dims(ta, as, free_a), k = dims(ta, as, contract),
                       n = dims(tb, bs, free_b);
    const bool batched = !batch.empty() && bt > 1;
    const Shape a3 = batched ? Shape{bt, m, k} : Shape{m, k}, b3 = batched ? Shape{bt, k, n} : Shape{k, n};
    a = reshaped(c, a, as, a3, ".a3");
    b = reshaped(c, b, bs, b3, ".b3");
    const std::string mm = c.b.temp_tensor(c.name + ".mm");
    c.emit(batched ? "BatchMatMul" : "MatMul", {a, b}, mm, ojson::object(), ".mm");
    // [batch..., free_a..., free_b...], then the output's order.
    std::string term = batch + free_a + free_b;
    Shape shape;
    for (const char ch : batch + free_a) shape.push_back(size_of(ta, as, ch));
    for (const char ch : free_b) shape.push_back(size_of(tb, bs, ch));
    std::string r = reshaped(c, mm, batched ? Shape{bt, m, n} : Shape{m, n}, shape.empty() ? Shape{1} : shape, ".split");
    e.permute(r, shape, term, t.out, ".out_t");
    c.emit("Reshape", {r}, c.out(), ojson{{"shape", ints_json(c.out_shape().empty() ? Shape{1} : c.out_shape())}}, ".out");
    return "";
}

}  // namespace

const MappingTable& tensor_mappings() {
    static const MappingTable t = {
        {"Split", {split, "`Slice` per used output (sizes from the `split` attribute or input, or equal parts)"}},
        {"Einsum", {einsum, "`ReduceSum` of indices only one operand has, `Transpose`s, one `MatMul`/`BatchMatMul` (batch, M, K, N from the indices), `Transpose` to the output's order; one operand: `ReduceSum` and `Transpose`"}},
        {"Expand", {broadcast_copy, "`Resize` (`nearest`: a broadcast copy to the output shape)"}},
        {"Tile", {broadcast_copy, "`Resize` (`nearest`: the same bytes as the tiled copy)"}},
        {"Trilu", {trilu, "`Mul` by a triangular mask (the same for any `k`)"}},
        {"CumSum", {cumsum, "`CumSum` (an axis computed at run time: costed along the last axis)"}},
        {"Hardmax", {hardmax, "`ArgMax`, then the one-hot rows written (`Cast`, `Resize` `nearest`)"}},
        {"OneHot", {one_hot, "`Resize` (`nearest`) of the indices to the output: a compare-and-write per element"}},
        {"GridSample", {grid_sample, "`Resize` to the output's size (`bilinear`: `linear`, 4 taps; `bicubic`: `cubic`; `nearest`)"}},
        {"GatherElements", {[](MapContext& c) { return gather_rows(c, false); }, "`Gather` of one element per index (data viewed flat), then `Reshape`"}},
        {"GatherND", {[](MapContext& c) { return gather_rows(c, true); }, "`Gather` of the indexed rows (data viewed as rows), then `Reshape`"}},
        {"DepthToSpace", {[](MapContext& c) { return depth_space(c, true); }, "`Reshape`, `Transpose`, `Reshape` (DCR or CRD)"}},
        {"SpaceToDepth", {[](MapContext& c) { return depth_space(c, false); }, "`Reshape`, `Transpose`, `Reshape`"}},
        {"NegativeLogLikelihoodLoss", {[](MapContext& c) { return nll_loss(c, false); }, "`Gather` of each target's log-probability (× its class weight), then `ReduceMean`/`ReduceSum`"}},
        {"SoftmaxCrossEntropyLoss", {[](MapContext& c) { return nll_loss(c, true); }, "`Softmax` over the classes (the log-softmax), then as `NegativeLogLikelihoodLoss`"}},
    };
    return t;
}

}  // namespace npusim::onnx_import
