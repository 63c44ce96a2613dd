#include "onnx/op_mapping.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "common/arith.hpp"
#include "onnx/fold.hpp"
#include "onnx/mapping_support.hpp"

namespace npusim::onnx_import {

std::int64_t product(const Shape& s, std::size_t from, std::size_t to) {
    std::int64_t n = 1;
    for (std::size_t i = from; i < to && i < s.size(); ++i) n *= s[i];
    return n;
}

ojson ints_json(const Shape& s) {
    ojson a = ojson::array();
    for (const auto v : s) a.push_back(v);
    return a;
}

int norm_axis(std::int64_t a, std::size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    return static_cast<int>(a < 0 ? a + r : a);
}

// Reshape `x` to `shape` (skipped when it already has it).
std::string reshaped(const MapContext& c, const std::string& x, const Shape& from, const Shape& to,
                     const std::string& suffix) {
    if (from == to) return x;
    const std::string t = c.b.temp_tensor(c.name + suffix);
    c.emit("Reshape", {x}, t, ojson{{"shape", ints_json(to)}}, suffix);
    return t;
}

std::string unary(MapContext& c, const char* op) {
    if (!c.out_known()) return std::string(c.node.op_type()) + " (output shape unknown)";
    c.emit(op, {c.in(0)}, c.out());
    return "";
}

std::string binary(MapContext& c, const char* op) {
    if (c.inputs() != 2) return c.node.op_type() + " (" + std::to_string(c.inputs()) + " inputs)";
    c.emit(op, {c.in(0), same_dtype(c, 1, 0)}, c.out());
    return "";
}

std::string same_dtype(const MapContext& c, std::size_t i, std::size_t like) {
    const std::string to = graph_dtype(c.elem_type(like));
    if (graph_dtype(c.elem_type(i)) == to) return c.in(i);
    const std::string t = c.b.temp_tensor(c.name + ".cast");
    c.emit("Cast", {c.in(i)}, t, ojson{{"dtype", to}}, ".cast");
    return t;
}

bool softmax_rows(const MapContext& c, SoftmaxRows& r) {
    const Shape& x = c.shape(0);
    const int axis = norm_axis(attr_int(c.node, "axis", c.opset >= 13 ? -1 : 1), x.size());
    if (axis < 0 || axis >= static_cast<int>(x.size())) return false;
    if (c.opset >= 13 || axis == static_cast<int>(x.size()) - 1) {
        r = SoftmaxRows{c.in(0), x, axis};
        return true;
    }
    r.shape = {product(x, 0, static_cast<std::size_t>(axis)), product(x, static_cast<std::size_t>(axis), x.size())};
    r.tensor = reshaped(c, c.in(0), x, r.shape, ".rows");
    r.axis = 1;
    return true;
}

namespace {

using TP = ::onnx::TensorProto;

// Spatial attributes of Conv and the pools: kernel, stride, pads (after
// auto_pad), dilation; 2-D only here (1-D is lifted to 2-D by the caller).
struct Window {
    std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
    std::int64_t pt = 0, pl = 0, pb = 0, pr = 0;
};

std::string window_of(const MapContext& c, const Shape& x, const Shape& kernel, Window& w) {
    if (kernel.size() != 2) return "kernel rank";
    w.kh = kernel[0];
    w.kw = kernel[1];
    const auto strides = attr_ints(c.node, "strides", {1, 1});
    const auto dil = attr_ints(c.node, "dilations", {1, 1});
    const auto pads = attr_ints(c.node, "pads", {0, 0, 0, 0});
    if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) return "attribute rank";
    w.sh = strides[0];
    w.sw = strides[1];
    w.dh = dil[0];
    w.dw = dil[1];
    w.pt = pads[0];
    w.pl = pads[1];
    w.pb = pads[2];
    w.pr = pads[3];
    const auto* ap = find_attr(c.node, "auto_pad");
    const std::string auto_pad = ap ? ap->s() : "NOTSET";
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        const auto same = [&](std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t& lo,
                              std::int64_t& hi) {
            const std::int64_t out = ceil_div(in, s);
            const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
            lo = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            hi = total - lo;
        };
        same(x[2], w.kh, w.sh, w.dh, w.pt, w.pb);
        same(x[3], w.kw, w.sw, w.dw, w.pl, w.pr);
    } else if (auto_pad == "VALID") {
        w.pt = w.pl = w.pb = w.pr = 0;
    }
    return "";
}

// ---------------------------------------------------------------------------
// The ops.

// Why shape inference left a window op's output unknown, where the input's
// rank is known: the weight or attribute that does not fit it.
std::string window_unknown(const MapContext& c, std::size_t weight) {
    const std::string op = c.node.op_type();
    const std::size_t rank = c.shape(0).size();
    if (rank == 0) return op + " (output shape unknown)";
    const std::size_t spatial = rank >= 2 ? rank - 2 : 0;
    if (weight > 0 && !c.shape(weight).empty() && c.shape(weight).size() != rank)
        return fmt::format("{} (input rank {}, weight rank {})", op, rank, c.shape(weight).size());
    for (const char* a : {"kernel_shape", "strides", "dilations", "pads"}) {
        const Shape v = attr_ints(c.node, a, {});
        const std::size_t want = std::string(a) == "pads" ? 2 * spatial : spatial;
        if (!v.empty() && v.size() != want)
            return fmt::format("{} (attribute {}: {} values for {} spatial dims)", op, a, v.size(), spatial);
    }
    return op + " (output shape unknown)";
}


std::string conv(MapContext& c) {
    if (!c.out_known()) return window_unknown(c, 1);
    const Shape& x = c.shape(0);
    const Shape& wshape = c.shape(1);
    const std::size_t spatial = x.size() >= 2 ? x.size() - 2 : 0;
    if (spatial != 1 && spatial != 2) return fmt::format("Conv ({}-D)", spatial);
    if (wshape.size() != x.size()) return "Conv (weight rank)";
    Shape x4 = x, w4 = wshape, out4 = c.out_shape();
    Shape kernel = attr_ints(c.node, "kernel_shape", Shape(wshape.begin() + 2, wshape.end()));
    if (spatial == 1) {
        // A 1-D convolution is a 2-D one of height 1.
        if (!c.is_const(1)) return "Conv (1-D with a computed weight)";
        x4 = {x[0], x[1], 1, x[2]};
        w4 = {wshape[0], wshape[1], 1, wshape[2]};
        out4 = {out4[0], out4[1], 1, out4[2]};
        kernel = {1, kernel.at(0)};
    }
    Window w;
    if (spatial == 1) {
        // Lift the 1-D attributes to 2-D by hand.
        const auto s = attr_ints(c.node, "strides", {1});
        const auto d = attr_ints(c.node, "dilations", {1});
        const auto p = attr_ints(c.node, "pads", {0, 0});
        w.kh = 1;
        w.kw = kernel[1];
        w.sw = s.at(0);
        w.dw = d.at(0);
        w.pl = p.at(0);
        w.pr = p.at(1);
        const auto* ap = find_attr(c.node, "auto_pad");
        if (ap && ap->s() != "NOTSET" && ap->s() != "VALID") return "Conv (1-D with auto_pad SAME)";
        if (ap && ap->s() == "VALID") w.pl = w.pr = 0;
    } else if (const std::string why = window_of(c, x4, kernel, w); !why.empty()) {
        return "Conv (" + why + ")";
    }
    std::string xin = c.in(0);
    std::string win = c.in(1);
    if (spatial == 1) {
        xin = reshaped(c, xin, x, x4, ".as2d");
        // The weight is a const: declare its 2-D form (consts carry no values).
        win = c.b.temp_tensor(c.name + ".weight2d");
        c.b.declare(win, w4, graph_dtype(c.elem_type(1)), false, true);
    }
    std::vector<std::string> ins = {xin, win};
    if (c.has_input(2)) ins.push_back(c.in(2));
    ojson attrs{{"kernel", ojson::array({w.kh, w.kw})}, {"stride", ojson::array({w.sh, w.sw})},
                {"pad", ojson::array({w.pt, w.pl, w.pb, w.pr})}, {"dilation", ojson::array({w.dh, w.dw})},
                {"groups", attr_int(c.node, "group", 1)}};
    if (spatial == 1) {
        const std::string t = c.b.temp_tensor(c.name + ".conv2d");
        c.emit("Conv2D", ins, t, attrs);
        c.emit("Reshape", {t}, c.out(), ojson{{"shape", ints_json(c.out_shape())}}, ".as1d");
    } else {
        c.emit("Conv2D", ins, c.out(), attrs);
    }
    return "";
}

// A 1-D pool as a 2-D one of height 1.
std::string pool_1d(MapContext& c, const char* op) {
    const Shape& x = c.shape(0);
    const Shape& o = c.out_shape();
    const auto k = attr_ints(c.node, "kernel_shape", {});
    const auto s = attr_ints(c.node, "strides", {1});
    const auto d = attr_ints(c.node, "dilations", {1});
    auto p = attr_ints(c.node, "pads", {0, 0});
    const auto* ap = find_attr(c.node, "auto_pad");
    if (k.size() != 1 || s.size() != 1 || p.size() != 2 || d.size() != 1) return c.node.op_type() + " (attribute rank)";
    if (d[0] != 1) return c.node.op_type() + " (dilated)";
    if (ap && ap->s() != "NOTSET" && ap->s() != "VALID") return c.node.op_type() + " (1-D with auto_pad SAME)";
    if (ap && ap->s() == "VALID") p = {0, 0};
    const std::int64_t need = (o[2] - 1) * s[0] + k[0] - x[2] - p[0] - p[1];
    if (need > 0) p[1] += need;  // ceil_mode
    if (p[0] >= k[0] || p[1] >= k[0]) return c.node.op_type() + " (padding >= kernel)";
    const std::string in = reshaped(c, c.in(0), x, {x[0], x[1], 1, x[2]}, ".as2d");
    const std::string t = c.b.temp_tensor(c.name + ".pooled");
    c.emit(op, {in}, t,
           ojson{{"kernel", ojson::array({1, k[0]})}, {"stride", ojson::array({1, s[0]})}, {"pad", ojson::array({0, p[0], 0, p[1]})}});
    c.emit("Reshape", {t}, c.out(), ojson{{"shape", ints_json(o)}}, ".out");
    return "";
}

std::string pool(MapContext& c, const char* op) {
    if (!c.out_known()) return window_unknown(c, 0);
    // MaxPool's indices come out of the same pass: a view of its values.
    if (c.output_used(1))
        c.b.add_node(c.b.node_name(c.name + ".indices"), "Reshape", {c.out()}, c.out(1),
                     ojson{{"shape", ints_json(c.out_shape())}});
    const Shape& x = c.shape(0);
    if (x.size() == 3) return pool_1d(c, op);
    if (x.size() != 4) return fmt::format("{} ({}-D)", c.node.op_type(), x.size() >= 2 ? x.size() - 2 : 0);
    Window w;
    if (const std::string why = window_of(c, x, attr_ints(c.node, "kernel_shape", {}), w); !why.empty())
        return c.node.op_type() + " (" + why + ")";
    if (w.dh != 1 || w.dw != 1) return c.node.op_type() + " (dilated)";
    // ceil_mode (and any rounding ONNX applies) shows in the inferred output
    // size: extend the bottom/right padding to produce it.
    const Shape& o = c.out_shape();
    const std::int64_t need_h = (o[2] - 1) * w.sh + w.kh - x[2] - w.pt - w.pb;
    const std::int64_t need_w = (o[3] - 1) * w.sw + w.kw - x[3] - w.pl - w.pr;
    if (need_h > 0) w.pb += need_h;
    if (need_w > 0) w.pr += need_w;
    if (w.pt >= w.kh || w.pb >= w.kh || w.pl >= w.kw || w.pr >= w.kw) return c.node.op_type() + " (padding >= kernel)";
    c.emit(op, {c.in(0)}, c.out(),
           ojson{{"kernel", ojson::array({w.kh, w.kw})}, {"stride", ojson::array({w.sh, w.sw})},
                 {"pad", ojson::array({w.pt, w.pl, w.pb, w.pr})}});
    return "";
}

std::string batch_norm(MapContext& c) {
    for (std::size_t k = 1; k < 5; ++k)
        if (c.output_used(k)) return "BatchNormalization (training outputs)";
    if (c.inputs() != 5 || c.shape(0).size() < 2) return "BatchNormalization (inputs)";
    c.emit("BatchNorm", {c.in(0), c.in(1), c.in(2), c.in(3), c.in(4)}, c.out(),
           ojson{{"epsilon", attr_float(c.node, "epsilon", 1e-5)}});
    return "";
}

std::string matmul(MapContext& c) {
    if (!c.out_known()) return "MatMul (output shape unknown)";
    Shape a = c.shape(0), b = c.shape(1);
    if (a.empty() || b.empty()) return "MatMul (scalar operand)";
    std::string ai = c.in(0), bi = c.in(1);
    // numpy semantics: a 1-D operand gains a unit dim, removed from the result.
    if (a.size() == 1) {
        ai = reshaped(c, ai, a, {1, a[0]}, ".a2d");
        a = {1, a[0]};
    }
    if (b.size() == 1) {
        bi = reshaped(c, bi, b, {b[0], 1}, ".b2d");
        b = {b[0], 1};
    }
    const bool batched = a.size() >= 3 && a.size() == b.size() && !c.is_const(1);
    if (a.size() >= 3 && b.size() == 2 && c.is_const(1) && product(a, 0, a.size() - 2) > 1) {
        // A shared 2-D weight: the leading dims are more rows of one matmul
        // (as torch's Linear computes it), not batches of a few rows each
        // (an [S, B, H] activation would be S matmuls of B rows).
        const std::string rows = reshaped(c, ai, a, {product(a, 0, a.size() - 1), a.back()}, ".rows");
        const std::string t = c.b.temp_tensor(c.name + ".mm");
        c.emit("MatMul", {rows, bi}, t);
        c.emit("Reshape", {t}, c.out(), ojson{{"shape", ints_json(c.out_shape())}}, ".out");
        return "";
    }
    const char* op = batched ? "BatchMatMul" : "MatMul";
    if (a.size() == 2 && b.size() > 2) {
        // [M,K] x [B...,K,N]: the compiler wants the batch on the left operand.
        // Broadcasting a 2-D left operand costs nothing extra: reshape to [1..,M,K].
        Shape a_lift(b.size() - 2, 1);
        a_lift.push_back(a[0]);
        a_lift.push_back(a[1]);
        ai = reshaped(c, ai, a, a_lift, ".abatch");
        const std::string t = c.b.temp_tensor(c.name + ".bmm");
        if (c.out_shape().size() == b.size()) {
            c.emit("BatchMatMul", {ai, bi}, c.out());
            return "";
        }
        c.emit("BatchMatMul", {ai, bi}, t);
        c.emit("Reshape", {t}, c.out(), ojson{{"shape", ints_json(c.out_shape())}}, ".out");
        return "";
    }
    const bool reshape_out = c.shape(0).size() == 1 || c.shape(1).size() == 1;
    if (!reshape_out) {
        c.emit(op, {ai, bi}, c.out());
        return "";
    }
    const std::string t = c.b.temp_tensor(c.name + ".mm");
    c.emit(op, {ai, bi}, t);
    c.emit("Reshape", {t}, c.out(), ojson{{"shape", ints_json(c.out_shape())}}, ".out");
    return "";
}

std::string gemm(MapContext& c) {
    // alpha and beta scale values, not work: a compiler folds them into the
    // weights, so they cost nothing here.
    if (c.shape(0).size() != 2 || c.shape(1).size() != 2) return "Gemm (operands not 2-D)";
    const bool ta = attr_int(c.node, "transA", 0) != 0, tb = attr_int(c.node, "transB", 0) != 0;
    ojson attrs = ojson::object();
    if (ta) attrs["transpose_a"] = 1;
    if (tb) attrs["transpose_b"] = 1;
    if (!c.has_input(2)) {
        c.emit("MatMul", {c.in(0), c.in(1)}, c.out(), attrs);
        return "";
    }
    const std::string t = c.b.temp_tensor(c.name + ".matmul");
    c.emit("MatMul", {c.in(0), c.in(1)}, t, attrs, ".matmul");
    c.emit("Add", {t, c.in(2)}, c.out(), ojson::object(), ".bias_add");
    return "";
}

std::string softmax(MapContext& c) {
    const Shape& x = c.shape(0);
    if (x.empty()) return "Softmax (scalar)";
    SoftmaxRows r;
    if (!softmax_rows(c, r)) return "Softmax (axis)";
    if (r.shape == x) {
        c.emit("Softmax", {r.tensor}, c.out(), ojson{{"axis", r.axis}});
        return "";
    }
    const std::string s = c.b.temp_tensor(c.name + ".softmax");
    c.emit("Softmax", {r.tensor}, s, ojson{{"axis", -1}});
    c.emit("Reshape", {s}, c.out(), ojson{{"shape", ints_json(x)}}, ".out");
    return "";
}

// Flatten, Squeeze, Unsqueeze, Reshape: a view with the inferred shape.
std::string view(MapContext& c) {
    if (!c.out_known()) return c.node.op_type() + " (target shape not computable at import)";
    c.emit("Reshape", {c.in(0)}, c.out(), ojson{{"shape", ints_json(c.out_shape())}});
    return "";
}

std::string transpose(MapContext& c) {
    const Shape& x = c.shape(0);
    Shape perm = attr_ints(c.node, "perm", {});
    if (perm.empty())
        for (std::size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
    c.emit("Transpose", {c.in(0)}, c.out(), ojson{{"perm", ints_json(perm)}});
    return "";
}

std::string concat(MapContext& c) {
    std::vector<std::string> ins;
    for (std::size_t i = 0; i < c.inputs(); ++i)
        if (c.has_input(i)) ins.push_back(c.in(i));
    c.emit("Concat", ins, c.out(), ojson{{"axis", attr_int(c.node, "axis", 0)}});
    return "";
}

std::string quantize(MapContext& c, bool quant) {
    ojson attrs = ojson::object();
    if (const ConstValue* s = c.value(1); s && s->data.size() == 1) attrs["scale"] = s->data[0];
    if (c.has_input(2))
        if (const ConstValue* z = c.value(2); z && z->data.size() == 1) attrs["zero_point"] = z->int_at(0);
    // A per-axis (or computed) scale is a broadcast multiply in the same pass.
    if (quant == (graph_dtype(c.elem_type(0)) == "int8")) return c.node.op_type() + (quant ? " (8-bit input)" : " (input not 8-bit)");
    attrs["dtype"] = quant ? "int8" : "fp16";
    c.emit(quant ? "Quantize" : "Dequantize", {c.in(0)}, c.out(), attrs);
    return "";
}

// LayerNormalization; its mean and inverse-std outputs (training graphs)
// each as a ReduceMean pass of their own over the normalised axes.
std::string layer_norm(MapContext& c) {
    std::vector<std::string> ins = {c.in(0)};
    if (c.has_input(1)) ins.push_back(c.in(1));
    if (c.has_input(1) && c.has_input(2)) ins.push_back(c.in(2));
    const std::int64_t axis = attr_int(c.node, "axis", -1);
    if (ins.size() == 2) {
        // Scale without bias: the compiler's LayerNorm takes both or neither;
        // a bias of zeros costs the same add the shift does.
        const std::string beta = c.b.temp_tensor(c.name + ".bias");
        c.b.declare(beta, c.shape(1), graph_dtype(c.elem_type(1)), false, true);
        ins.push_back(beta);
    }
    c.emit("LayerNorm", ins, c.out(), ojson{{"axis", axis}, {"epsilon", attr_float(c.node, "epsilon", 1e-5)}});
    const std::size_t rank = c.shape(0).size();
    Shape axes;
    for (auto a = static_cast<std::size_t>(norm_axis(axis, rank)); a < rank; ++a) axes.push_back(static_cast<std::int64_t>(a));
    for (std::size_t k : {1, 2})
        if (c.output_used(k))
            c.emit("ReduceMean", {c.in(0)}, c.out(k), ojson{{"axes", ints_json(axes)}, {"keepdims", 1}},
                   k == 1 ? ".mean" : ".inv_std");
    return "";
}

std::string identity(MapContext& c) {
    for (std::size_t k = 1; k < static_cast<std::size_t>(c.node.output_size()); ++k)
        if (c.output_used(k)) return c.node.op_type() + " (mask output)";
    c.alias_output(c.in(0));
    return "";
}

std::string cast(MapContext& c) {
    const int to = static_cast<int>(attr_int(c.node, "to", TP::FLOAT));
    if (to == TP::STRING) return "Cast (to strings)";
    if (graph_dtype(to) == graph_dtype(c.elem_type(0))) {
        c.alias_output(c.in(0));  // same simulated dtype: a no-op
        return "";
    }
    c.emit("Cast", {c.in(0)}, c.out(), ojson{{"dtype", graph_dtype(to)}});
    return "";
}

// Div by a constant is a Mul by its reciprocal (computed offline).
std::string div(MapContext& c) {
    if (c.is_const(1) && !c.is_const(0)) {
        c.emit("Mul", {c.in(0), c.in(1)}, c.out());
        return "";
    }
    return binary(c, "Div");
}

// Pow by a constant 2 is x·x, by 0.5 a square root; other exponents Pow.
std::string pow(MapContext& c) {
    if (const ConstValue* e = c.value(1); e && e->data.size() == 1) {
        if (e->data[0] == 2.0) {
            c.emit("Mul", {c.in(0), c.in(0)}, c.out());
            return "";
        }
        if (e->data[0] == 0.5) return unary(c, "Sqrt");
        if (e->data[0] == 1.0) {
            c.alias_output(c.in(0));
            return "";
        }
    }
    return binary(c, "Pow");
}

// Max / Min of N inputs: N-1 binary ops.
std::string variadic(MapContext& c, const char* op) {
    if (c.inputs() == 1) {
        c.alias_output(c.in(0));
        return "";
    }
    std::string acc = c.in(0);
    for (std::size_t i = 1; i < c.inputs(); ++i) {
        const bool last = i + 1 == c.inputs();
        const std::string t = last ? c.out() : c.b.temp_tensor(c.name + ".partial");
        c.emit(op, {acc, c.in(i)}, t, ojson::object(), last ? "" : ".partial");
        acc = t;
    }
    return "";
}

// Clip by bounds computed at run time: a Max by the lower, a Min by the upper.
std::string clip_computed(MapContext& c) {
    std::string cur = c.in(0);
    const bool upper = c.has_input(2);
    if (c.has_input(1)) {
        const std::string t = upper ? c.b.temp_tensor(c.name + ".lower") : c.out();
        c.emit("Max", {cur, same_dtype(c, 1, 0)}, t, ojson::object(), upper ? ".lower" : "");
        cur = t;
    }
    if (upper) c.emit("Min", {cur, same_dtype(c, 2, 0)}, c.out());
    return "";
}

std::string clip(MapContext& c) {
    ojson attrs = ojson::object();
    double lo = attr_float(c.node, "min", -HUGE_VAL), hi = attr_float(c.node, "max", HUGE_VAL);
    if (c.opset >= 11) {
        for (std::size_t i : {1, 2}) {
            if (!c.has_input(i)) continue;
            const ConstValue* v = c.value(i);
            if (!v || v->data.size() != 1) return clip_computed(c);
            (i == 1 ? lo : hi) = v->data[0];
        }
    }
    if (std::isfinite(lo)) attrs["min"] = lo;
    if (std::isfinite(hi)) attrs["max"] = hi;
    if (lo == 0 && !std::isfinite(hi)) return unary(c, "ReLU");  // Clip(0, inf) is a ReLU
    c.emit("Clip", {c.in(0)}, c.out(), attrs);
    return "";
}

std::string reduce(MapContext& c, const char* op) {
    Shape axes = attr_ints(c.node, "axes", {});
    if (c.has_input(1)) {
        const ConstValue* v = c.value(1);
        if (!v) return c.node.op_type() + " (computed axes)";
        axes = v->ints();
    }
    if (axes.empty() && attr_int(c.node, "noop_with_empty_axes", 0)) {
        c.alias_output(c.in(0));
        return "";
    }
    ojson attrs{{"keepdims", attr_int(c.node, "keepdims", 1) != 0 ? 1 : 0}};
    if (!axes.empty()) attrs["axes"] = ints_json(axes);
    c.emit(op, {c.in(0)}, c.out(), attrs);
    return "";
}

std::string slice(MapContext& c) {
    if (!c.out_known()) return "Slice (output shape unknown)";
    if (c.out_shape() == c.shape(0)) {
        c.alias_output(c.in(0));  // the whole tensor
        return "";
    }
    const ConstValue *st = c.value(1), *en = c.value(2);
    const ConstValue* ax = c.has_input(3) ? c.value(3) : nullptr;
    const ConstValue* sp = c.has_input(4) ? c.value(4) : nullptr;
    if (!st || !en || (c.has_input(3) && !ax) || (c.has_input(4) && !sp)) return "Slice (computed bounds)";
    if (sp)
        for (const auto s : sp->ints())
            if (s < 1) return "Slice (negative steps)";
    // Bounds as ONNX clamps them (INT64_MAX ends and the like), so the graph file reads plainly.
    const Shape& x = c.shape(0);
    Shape starts, ends, axes = ax ? ax->ints() : Shape{}, steps = sp ? sp->ints() : Shape{};
    if (axes.empty())
        for (std::size_t i = 0; i < st->data.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
    if (axes.size() != st->data.size() || en->data.size() != st->data.size() ||
        (!steps.empty() && steps.size() != st->data.size()))
        return "Slice (bounds of different lengths)";
    for (std::size_t i = 0; i < st->data.size(); ++i) {
        const int a = norm_axis(axes.at(i), x.size());
        if (a < 0 || a >= static_cast<int>(x.size())) return "Slice (axis)";
        const std::int64_t d = x[static_cast<std::size_t>(a)];
        const auto clampd = [d](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? std::max<std::int64_t>(v + d, 0) : v, 0, d); };
        starts.push_back(clampd(st->int_at(i)));
        ends.push_back(clampd(en->int_at(i)));
        axes[i] = a;
    }
    ojson attrs{{"starts", ints_json(starts)}, {"ends", ints_json(ends)}, {"axes", ints_json(axes)}};
    if (!steps.empty()) attrs["steps"] = ints_json(steps);
    c.emit("Slice", {c.in(0)}, c.out(), attrs);
    return "";
}

std::string gather(MapContext& c) {
    if (c.is_const(1) && c.shape(1).empty() && c.shape(0).size() == 1) return "Gather (scalar of a 1-D tensor)";
    c.emit("Gather", {c.in(0), c.in(1)}, c.out(), ojson{{"axis", attr_int(c.node, "axis", 0)}});
    return "";
}

std::string where(MapContext& c) {
    // The graph's Where takes x, y, then the condition (its dtype is x's).
    c.emit("Where", {c.in(1), c.in(2), c.in(0)}, c.out());
    return "";
}

// Pad (opset 11+: pads as an input; before, an attribute). Every mode costs
// the same copy; per-axis pads must be constant and non-negative.
std::string pad(MapContext& c) {
    if (!c.out_known()) return "Pad (output shape unknown)";
    Shape pads = attr_ints(c.node, "pads", {});
    if (c.has_input(1)) {
        const ConstValue* v = c.value(1);
        if (!v) return "Pad (computed pads)";
        pads.clear();
        for (const double d : v->data) pads.push_back(static_cast<std::int64_t>(d));
    }
    if (c.has_input(3)) return "Pad (axes input)";
    const std::size_t rank = c.shape(0).size();
    if (pads.size() != 2 * rank) return "Pad (pads rank)";
    for (const auto p : pads)
        if (p < 0) return "Pad (negative pads: a crop)";
    const auto* m = find_attr(c.node, "mode");
    c.emit("Pad", {c.in(0)}, c.out(), ojson{{"pads", ints_json(pads)}, {"mode", m ? m->s() : "constant"}});
    return "";
}

// Resize / Upsample to the output shape ONNX inference gives.
std::string resize(MapContext& c) {
    if (!c.out_known()) return "Resize (output shape unknown: computed scales or sizes)";
    const auto* m = find_attr(c.node, "mode");
    const std::string mode = m ? m->s() : "nearest";
    c.emit("Resize", {c.in(0)}, c.out(), ojson{{"sizes", ints_json(c.out_shape())}, {"mode", mode}});
    return "";
}

// TopK: the values (and their indices, the same pass); k must be constant.
std::string topk(MapContext& c) {
    if (!c.out_known()) return "TopK (output shape unknown: computed k)";
    const std::size_t rank = c.shape(0).size();
    const int axis = norm_axis(attr_int(c.node, "axis", -1), rank);
    if (axis < 0 || axis >= static_cast<int>(rank) || c.out_shape().size() != rank) return "TopK (axis)";
    const std::int64_t k = c.out_shape()[static_cast<std::size_t>(axis)];
    // A graph node has one output: the values. The indices come out of the
    // same pass, so a used indices output is a view of it (no extra work).
    c.emit("TopK", {c.in(0)}, c.out(), ojson{{"k", k}, {"axis", axis - static_cast<int>(rank)}});
    if (c.output_used(1))
        c.b.add_node(c.b.node_name(c.name + ".indices"), "Reshape", {c.out()}, c.out(1),
                     ojson{{"shape", ints_json(c.out_shape())}});
    return "";
}

// ArgMax / ArgMin: one pass of compare-select; keepdims 0 is a view after it.
std::string argmax(MapContext& c) {
    if (!c.out_known()) return c.node.op_type() + " (output shape unknown)";
    const Shape& x = c.shape(0);
    const int axis = norm_axis(attr_int(c.node, "axis", 0), x.size());
    if (axis < 0 || axis >= static_cast<int>(x.size())) return c.node.op_type() + " (axis)";
    if (attr_int(c.node, "keepdims", 1) != 0) {
        c.emit("ArgMax", {c.in(0)}, c.out(), ojson{{"axis", axis}, {"keepdims", 1}});
        return "";
    }
    Shape kept = x;
    kept[static_cast<std::size_t>(axis)] = 1;
    const std::string t = c.b.temp_tensor(c.name + ".kept");
    c.emit("ArgMax", {c.in(0)}, t, ojson{{"axis", axis}, {"keepdims", 1}});
    c.emit("Reshape", {t}, c.out(), ojson{{"shape", ints_json(c.out_shape())}}, ".squeeze");
    return "";
}

// GroupNormalization (opset 18 form, or the contrib one) and
// InstanceNormalization (one group per channel): a per-group reduction.
std::string group_norm(MapContext& c, bool instance) {
    const Shape& x = c.shape(0);
    if (x.size() < 3) return c.node.op_type() + " (rank)";
    const std::int64_t groups = instance ? x[1] : attr_int(c.node, "num_groups", 1);
    std::vector<std::string> ins = {c.in(0)};
    // Per-channel gamma / beta (GroupNormalization's per-group ones have as
    // many elements as groups: the cost is the same; drop them).
    if (c.has_input(2) && product(c.shape(1), 0, c.shape(1).size()) == x[1] &&
        product(c.shape(2), 0, c.shape(2).size()) == x[1]) {
        ins.push_back(c.in(1));
        ins.push_back(c.in(2));
    }
    c.emit("GroupNorm", ins, c.out(), ojson{{"groups", groups}, {"epsilon", attr_float(c.node, "epsilon", 1e-5)}});
    return "";
}

// ConvTranspose as the Cube runs it: the input with stride - 1 zeros
// inserted between elements and k - 1 - pad around it (a Pad), then a
// stride-1 Conv2D: the inserted zeros are real Cube work (counted).
std::string conv_transpose(MapContext& c) {
    if (!c.out_known()) return window_unknown(c, 1);
    const Shape& x = c.shape(0);
    const Shape& w = c.shape(1);  // [C_in, C_out / group, kh, kw]
    if (x.size() != 4 || w.size() != 4) return fmt::format("ConvTranspose ({}-D)", x.size() >= 2 ? x.size() - 2 : 0);
    if (!c.is_const(1) && attr_int(c.node, "group", 1) != 1) return "ConvTranspose (computed grouped weight)";
    const auto strides = attr_ints(c.node, "strides", {1, 1});
    const auto dil = attr_ints(c.node, "dilations", {1, 1});
    if (dil != Shape{1, 1}) return "ConvTranspose (dilated)";
    const std::int64_t group = attr_int(c.node, "group", 1);
    const Shape& o = c.out_shape();
    // Padding that gives the inferred output: lo = k-1-pad_begin, hi the rest.
    const auto pads = attr_ints(c.node, "pads", {0, 0, 0, 0});
    if (pads.size() != 4 || strides.size() != 2) return "ConvTranspose (attribute rank)";
    Shape p(8, 0), interior(4, 0);
    for (int a = 0; a < 2; ++a) {
        const std::int64_t k = w[static_cast<std::size_t>(2 + a)];
        const std::int64_t dilated = (x[static_cast<std::size_t>(2 + a)] - 1) * strides[static_cast<std::size_t>(a)] + 1;
        const std::int64_t lo = k - 1 - pads[static_cast<std::size_t>(a)];
        const std::int64_t hi = o[static_cast<std::size_t>(2 + a)] + k - 1 - dilated - lo;
        if (lo < 0 || hi < 0) return "ConvTranspose (padding larger than the kernel)";
        p[static_cast<std::size_t>(2 + a)] = lo;
        p[static_cast<std::size_t>(6 + a)] = hi;
        interior[static_cast<std::size_t>(2 + a)] = strides[static_cast<std::size_t>(a)] - 1;
    }
    const std::string t = c.b.temp_tensor(c.name + ".dilated");
    c.emit("Pad", {c.in(0)}, t, ojson{{"pads", ints_json(p)}, {"interior", ints_json(interior)}, {"mode", "constant"}},
           ".zero_insert");
    // The flipped, transposed weight [C_out, C_in / group, kh, kw]: a constant by its shape, a computed one by a Transpose.
    const std::string wt = c.b.temp_tensor(c.name + ".weight_flipped");
    std::vector<std::string> ins = {t, wt};
    if (c.has_input(2)) ins.push_back(c.in(2));
    if (!c.is_const(1)) {
        // A computed weight is re-laid out at run time: [C_in, C_out, kh, kw]
        // to [C_out, C_in, kh, kw] (flipping kh, kw in the same copy).
        c.emit("Transpose", {c.in(1)}, wt, ojson{{"perm", ojson::array({1, 0, 2, 3})}}, ".weight_t");
    } else {
        c.b.declare(wt, Shape{w[1] * group, w[0] / group, w[2], w[3]}, graph_dtype(c.elem_type(1)), false, true);
    }
    c.emit("Conv2D", ins, c.out(),
           ojson{{"kernel", ojson::array({w[2], w[3]})}, {"stride", ojson::array({1, 1})}, {"pad", ojson::array({0, 0, 0, 0})},
                 {"groups", group}});
    return "";
}

// ScatterND / ScatterElements (any reduction): the data copied to the
// output, the updates written at their indices. A KV-cache update written
// this way copies the whole cache (an in-place update would not; the
// export's ops do).
std::string scatter(MapContext& c) {
    if (c.inputs() != 3) return c.node.op_type() + " (inputs)";
    c.emit("ScatterND", {c.in(0), c.in(1), c.in(2)}, c.out());
    return "";
}

// Mean of N inputs: N-1 Adds, then a Mul by 1/N.
std::string mean(MapContext& c) {
    if (c.inputs() == 1) {
        c.alias_output(c.in(0));
        return "";
    }
    std::string acc = c.in(0);
    for (std::size_t i = 1; i < c.inputs(); ++i) {
        const std::string t = c.b.temp_tensor(c.name + ".partial");
        c.emit("Add", {acc, c.in(i)}, t, ojson::object(), ".partial");
        acc = t;
    }
    const std::string f = c.b.temp_tensor(c.name + ".inv_n");
    c.b.declare(f, Shape{1}, "fp16", false, true);
    c.emit("Mul", {acc, f}, c.out());
    return "";
}

// Attention the pattern found (onnx/patterns.hpp): one fused op when q, kᵀ
// and v are [heads..., S, D] with the same leading dims, else the ops it was.
std::string attention(MapContext& c) {
    const Shape &q = c.shape(0), &kt = c.shape(1), &v = c.shape(2);
    const double scale = attr_float(c.node, "scale", 1.0);
    const bool mask = c.has_input(3);
    const bool fits = q.size() >= 2 && q.size() == kt.size() && q.size() == v.size() &&
                      std::equal(q.begin(), q.end() - 2, kt.begin()) && std::equal(q.begin(), q.end() - 2, v.begin());
    if (fits) {
        std::vector<std::string> ins = {c.in(0), c.in(1), c.in(2)};
        if (mask) ins.push_back(c.in(3));
        c.emit("Attention", ins, c.out(), ojson{{"scale", scale}, {"k_transposed", 1}});
        return "";
    }
    // Op by op: scores, scale, mask, softmax, context.
    const char* mm = q.size() >= 3 && q.size() == kt.size() ? "BatchMatMul" : "MatMul";
    const std::string s = c.b.temp_tensor(c.name + ".scores");
    c.emit(mm, {c.in(0), c.in(1)}, s, ojson::object(), ".scores");
    std::string cur = s;
    if (scale != 1.0) {
        const std::string f = c.b.temp_tensor(c.name + ".scale_factor");
        c.b.declare(f, Shape{1}, "fp16", false, true);
        const std::string t = c.b.temp_tensor(c.name + ".scaled");
        c.emit("Mul", {cur, f}, t, ojson::object(), ".scale");
        cur = t;
    }
    if (mask) {
        const std::string t = c.b.temp_tensor(c.name + ".masked");
        c.emit("Add", {cur, c.in(3)}, t, ojson::object(), ".mask");
        cur = t;
    }
    const std::string p = c.b.temp_tensor(c.name + ".probs");
    c.emit("Softmax", {cur}, p, ojson{{"axis", -1}}, ".softmax");
    c.emit(mm, {p, c.in(2)}, c.out(), ojson::object(), ".context");
    return "";
}

// Fused patterns (onnx/patterns.hpp): domain "npusim".
std::string fused(MapContext& c) {
    const std::string& op = c.node.op_type();
    if (op == "GELU") {
        const auto* a = find_attr(c.node, "approximate");
        c.emit("GELU", {c.in(0)}, c.out(), a ? ojson{{"approximate", a->s()}} : ojson::object());
        return "";
    }
    if (op == "LayerNorm" || op == "RMSNorm") {
        std::vector<std::string> ins;
        for (std::size_t i = 0; i < c.inputs(); ++i) ins.push_back(c.in(i));
        c.emit(op, ins, c.out(), ojson{{"axis", -1}, {"epsilon", attr_float(c.node, "epsilon", 1e-5)}});
        return "";
    }
    if (op == "SiLU" || op == "HardSwish") return unary(c, op.c_str());
    if (op == "Attention") return attention(c);
    return "npusim:" + op;
}

// The max over every spatial position, per channel.
std::string global_max_pool(MapContext& c) {
    const Shape& x = c.shape(0);
    if (x.size() < 3) return "GlobalMaxPool (rank)";
    Shape axes;
    for (std::size_t i = 2; i < x.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
    c.emit("ReduceMax", {c.in(0)}, c.out(), ojson{{"axes", ints_json(axes)}, {"keepdims", 1}});
    return "";
}

// PRelu: a constant slope costs what LeakyReLU does; a computed one is
// read: max(x, slope · x) for slopes below 1, as exporters use it.
std::string prelu(MapContext& c) {
    if (c.is_const(1)) return unary(c, "LeakyReLU");
    const std::string t = c.b.temp_tensor(c.name + ".scaled");
    c.emit("Mul", {c.in(0), c.in(1)}, t, ojson::object(), ".scale");
    c.emit("Max", {c.in(0), t}, c.out());
    return "";
}

// Sum of N inputs: N-1 Adds.
std::string sum(MapContext& c) {
    if (c.inputs() == 1) {
        c.alias_output(c.in(0));
        return "";
    }
    std::string acc = c.in(0);
    for (std::size_t i = 1; i < c.inputs(); ++i) {
        const bool last = i + 1 == c.inputs();
        const std::string t = last ? c.out() : c.b.temp_tensor(c.name + ".partial");
        c.emit("Add", {acc, c.in(i)}, t, ojson::object(), last ? "" : ".partial");
        acc = t;
    }
    return "";
}

const MappingTable& core_mappings() {
    static const MappingTable t = {
        {"Abs", {[](MapContext& c) { return unary(c, "Abs"); }, "`Abs`"}},
        {"Add", {[](MapContext& c) { return binary(c, "Add"); }, "`Add`"}},
        {"Clip", {clip, "`Clip` (ReLU6 is `Clip` 0..6; `Clip` 0..inf is `ReLU`); bounds computed at run time: `Max`, `Min`"}},
        {"Div", {div, "`Mul` when the divisor is a constant (its reciprocal), else `Div`"}},
        {"Erf", {[](MapContext& c) { return unary(c, "Erf"); }, "`Erf` (inside a GELU: the `GELU` pattern)"}},
        {"Exp", {[](MapContext& c) { return unary(c, "Exp"); }, "`Exp`"}},
        {"Gather", {gather, "`Gather` (an embedding lookup when the data is a constant)"}},
        {"HardSigmoid", {[](MapContext& c) { return unary(c, "HardSigmoid"); }, "`HardSigmoid`"}},
        {"HardSwish", {[](MapContext& c) { return unary(c, "HardSwish"); }, "`HardSwish`"}},
        {"LeakyRelu", {[](MapContext& c) { return unary(c, "LeakyReLU"); }, "`LeakyReLU`"}},
        {"Max", {[](MapContext& c) { return variadic(c, "Max"); }, "`Max` (N inputs: N − 1 of them)"}},
        {"Min", {[](MapContext& c) { return variadic(c, "Min"); }, "`Min` (N inputs: N − 1 of them)"}},
        {"Neg", {[](MapContext& c) { return unary(c, "Neg"); }, "`Neg`"}},
        {"Pow", {pow, "`Mul` (x·x) for exponent 2, `Sqrt` for 0.5, else `Pow`"}},
        {"Reciprocal", {[](MapContext& c) { return unary(c, "Reciprocal"); }, "`Reciprocal`"}},
        {"ReduceMax", {[](MapContext& c) { return reduce(c, "ReduceMax"); }, "`ReduceMax`"}},
        {"ReduceMean", {[](MapContext& c) { return reduce(c, "ReduceMean"); }, "`ReduceMean` (inside a LayerNorm/RMSNorm: the pattern)"}},
        {"Slice", {slice, "`Slice` (constant bounds, positive steps); the whole tensor: nothing"}},
        {"Sqrt", {[](MapContext& c) { return unary(c, "Sqrt"); }, "`Sqrt`"}},
        {"Sub", {[](MapContext& c) { return binary(c, "Sub"); }, "`Sub`"}},
        {"Tanh", {[](MapContext& c) { return unary(c, "Tanh"); }, "`Tanh`"}},
        {"Where", {where, "`Where` (x, y, condition)"}},
        {"AveragePool", {[](MapContext& c) { return pool(c, "AvgPool"); }, "`AvgPool` (2-D, 1-D as 2-D of height 1; `ceil_mode` as extra bottom/right padding)"}},
        {"BatchNormalization", {batch_norm, "`BatchNorm` (inference form; folded into a preceding `Conv2D` by the compiler)"}},
        {"Cast", {cast, "`Cast` to the target's simulated dtype; nothing when source and target simulate in the same dtype (e.g. fp32 -> fp16)"}},
        {"Concat", {concat, "`Concat`"}},
        {"Conv", {conv, "`Conv2D` (2-D; 1-D as a 2-D conv of height 1; groups, dilations, `auto_pad`)"}},
        {"DequantizeLinear", {[](MapContext& c) { return quantize(c, false); }, "`Dequantize` (per-tensor or per-axis scale: the same pass)"}},
        {"Dropout", {identity, "nothing (inference)"}},
        {"Flatten", {view, "`Reshape`"}},
        {"Gemm", {gemm, "`MatMul` with `transpose_a`/`transpose_b`, then `Add` of C (alpha, beta fold into the weights)"}},
        {"GlobalAveragePool", {[](MapContext& c) { return unary(c, "GlobalAvgPool"); }, "`GlobalAvgPool`"}},
        {"Identity", {identity, "nothing (an alias)"}},
        {"LayerNormalization", {layer_norm, "`LayerNorm` (opset 17; the mean and inverse-std outputs of training graphs as `ReduceMean` passes)"}},
        {"MatMul", {matmul, "`MatMul` (a shared 2-D weight takes the leading dims as rows), or `BatchMatMul` when both operands are computed and batched; 1-D operands reshaped"}},
        {"MaxPool", {[](MapContext& c) { return pool(c, "MaxPool"); }, "`MaxPool` (2-D, 1-D as 2-D of height 1; the indices, from the same pass, a view of it)"}},
        {"Mul", {[](MapContext& c) { return binary(c, "Mul"); }, "`Mul`"}},
        {"NonZero", {[](MapContext& c) { return unary(c, "NonZero"); }, "`NonZero` (compute-dependent size)"}},
        {"QuantizeLinear", {[](MapContext& c) { return quantize(c, true); }, "`Quantize` to int8 (per-tensor or per-axis scale: the same pass)"}},
        {"ReduceSum", {[](MapContext& c) { return reduce(c, "ReduceSum"); }, "`ReduceSum`"}},
        {"Relu", {[](MapContext& c) { return unary(c, "ReLU"); }, "`ReLU`"}},
        {"Reshape", {view, "`Reshape` to the shape inferred at import"}},
        {"Sigmoid", {[](MapContext& c) { return unary(c, "Sigmoid"); }, "`Sigmoid`"}},
        {"Softmax", {softmax, "`Softmax` (before opset 13: over the flattened trailing dims)"}},
        {"Squeeze", {view, "`Reshape`"}},
        {"Sum", {sum, "`Add`s (one fewer than the inputs)"}},
        {"GlobalMaxPool", {global_max_pool, "`ReduceMax` over the spatial axes"}},
        {"PRelu", {prelu, "`LeakyReLU` (a constant slope tensor; the cost is the same), or `Mul` by the computed slope, then `Max`"}},
        {"Transpose", {transpose, "`Transpose`"}},
        {"Pad", {pad, "`Pad` (constant pads; every mode costs the same copy)"}},
        {"ScatterND", {scatter, "`ScatterND`: the data copied, the updates written at their indices (a KV-cache update this way copies the cache)"}},
        {"ScatterElements", {scatter, "`ScatterND` (the same copy and indexed writes)"}},
        {"Mean", {mean, "`Add`s, then a `Mul` by 1/N"}},
        {"LogSoftmax", {[](MapContext& c) { return softmax(c); }, "`Softmax` (the same passes: max, exp, sum; a log in place of the divide)"}},
        {"ReduceL1", {[](MapContext& c) { return reduce(c, "ReduceSum"); }, "`ReduceSum` (the abs in the same pass)"}},
        {"ReduceL2", {[](MapContext& c) { return reduce(c, "ReduceSum"); }, "`ReduceSum` (square and sqrt in the same pass)"}},
        {"ReduceSumSquare", {[](MapContext& c) { return reduce(c, "ReduceSum"); }, "`ReduceSum` (the square in the same pass)"}},
        {"ReduceLogSum", {[](MapContext& c) { return reduce(c, "ReduceSum"); }, "`ReduceSum` (the log in the same pass)"}},
        {"ReduceLogSumExp", {[](MapContext& c) { return reduce(c, "ReduceSum"); }, "`ReduceSum` (exp and log in the same pass)"}},
        {"ReduceMin", {[](MapContext& c) { return reduce(c, "ReduceMax"); }, "`ReduceMax` (the same compare pass)"}},
        {"ReduceProd", {[](MapContext& c) { return reduce(c, "ReduceSum"); }, "`ReduceSum` (a multiply in place of the add)"}},
        {"Resize", {resize, "`Resize` to the inferred shape (`nearest` a gather copy, `linear` 4 taps, `cubic` 16 per output)"}},
        {"Upsample", {resize, "`Resize`"}},
        {"TopK", {topk, "`TopK` (constant k; k passes of max-and-mask or a bitonic sort of the row, whichever is fewer)"}},
        {"ArgMax", {argmax, "`ArgMax` (a compare-select pass; `keepdims` 0 as a view after it)"}},
        {"ArgMin", {argmax, "`ArgMax` (the same pass)"}},
        {"GroupNormalization", {[](MapContext& c) { return group_norm(c, false); }, "`GroupNorm` (a reduction per group of channels, as LayerNorm)"}},
        {"InstanceNormalization", {[](MapContext& c) { return group_norm(c, true); }, "`GroupNorm` with one group per channel"}},
        {"ConvTranspose", {conv_transpose, "`Pad` inserting stride − 1 zeros between inputs, then a stride-1 `Conv2D` (the Cube multiplies the zeros: counted)"}},
        {"Unsqueeze", {view, "`Reshape`"}},
    };
    return t;
}

const MappingTable& table() {
    static const MappingTable t = [] {
        MappingTable all = core_mappings();
        for (const MappingTable* more : {&elementwise_mappings(), &tensor_mappings(), &contrib_mappings()})
            for (const auto& [op, m] : *more)
                if (!all.emplace(op, m).second) throw std::logic_error("ONNX op " + op + " mapped twice");
        return all;
    }();
    return t;
}

}  // namespace

// ---------------------------------------------------------------------------

std::string graph_dtype(int elem_type) {
    switch (elem_type) {
        case TP::BFLOAT16: return "bf16";
        case TP::INT8:
        case TP::UINT8:
        case TP::BOOL: return "int8";
        case TP::FLOAT:
        case TP::DOUBLE:
        case TP::FLOAT16: return "fp16";
        default: return "fp32";
    }
}

std::string GraphBuilder::node_name(const std::string& base) {
    const std::string b = base.empty() ? "node" : base;
    int& n = node_names_[b];
    ++n;
    return n == 1 ? b : fmt::format("{}_{}", b, n);
}

std::string GraphBuilder::temp_tensor(const std::string& base) {
    int& n = temp_names_[base];
    ++n;
    return n == 1 ? base : fmt::format("{}_{}", base, n);
}

void GraphBuilder::declare(const std::string& name, const Shape& shape, const std::string& dtype, bool input,
                           bool is_const) {
    if (tensors.contains(name)) return;
    ojson t{{"shape", ints_json(shape.empty() ? Shape{1} : shape)}, {"dtype", dtype}};
    if (input) t["input"] = true;
    if (is_const) t["const"] = true;
    tensors[name] = std::move(t);
}

void GraphBuilder::add_node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                            const std::string& output, ojson attrs) {
    ojson n{{"name", name}, {"op", op}, {"inputs", inputs}, {"outputs", ojson::array({output})}};
    if (!attrs.empty()) n["attrs"] = std::move(attrs);
    nodes.push_back(std::move(n));
}

MapContext::MapContext(const ::onnx::NodeProto& n, int op_set, GraphBuilder& builder,
                       const std::map<std::string, TensorFacts>& facts, const std::map<std::string, ConstValue>& consts,
                       std::map<std::string, std::string>& aliases, std::string node_name)
    : node(n), opset(op_set), b(builder), name(std::move(node_name)), facts_(facts), consts_(consts), aliases_(aliases) {}

std::size_t MapContext::inputs() const { return static_cast<std::size_t>(node.input_size()); }
bool MapContext::has_input(std::size_t i) const { return i < inputs() && !node.input(static_cast<int>(i)).empty(); }
bool MapContext::is_const(std::size_t i) const { return has_input(i) && consts_.count(node.input(static_cast<int>(i))); }

const ConstValue* MapContext::value(std::size_t i) const {
    if (!is_const(i)) return nullptr;
    const ConstValue& v = consts_.at(node.input(static_cast<int>(i)));
    return v.has_data ? &v : nullptr;
}

const Shape& MapContext::shape(std::size_t i) const {
    static const Shape none;
    if (!has_input(i)) return none;
    const std::string& n = node.input(static_cast<int>(i));
    if (const auto it = consts_.find(n); it != consts_.end()) return it->second.shape;
    const auto it = facts_.find(n);
    return it == facts_.end() ? none : it->second.shape;
}

int MapContext::elem_type(std::size_t i) const {
    const std::string& n = node.input(static_cast<int>(i));
    if (const auto it = consts_.find(n); it != consts_.end()) return it->second.elem_type;
    const auto it = facts_.find(n);
    return it == facts_.end() ? TP::FLOAT : it->second.elem_type;
}

std::string MapContext::in(std::size_t i) const {
    const std::string& n = node.input(static_cast<int>(i));
    if (const auto it = consts_.find(n); it != consts_.end()) {
        b.declare(n, it->second.shape, graph_dtype(it->second.elem_type), false, true);
        return n;
    }
    const auto a = aliases_.find(n);
    return a == aliases_.end() ? n : a->second;
}

const Shape& MapContext::out_shape(std::size_t k) const {
    static const Shape none;
    const auto it = facts_.find(out(k));
    return it == facts_.end() ? none : it->second.shape;
}

bool MapContext::out_known(std::size_t k) const {
    const auto it = facts_.find(out(k));
    return it != facts_.end() && it->second.known;
}

bool MapContext::output_used(std::size_t k) const {
    if (k >= static_cast<std::size_t>(node.output_size()) || node.output(static_cast<int>(k)).empty()) return false;
    return used_outputs && used_outputs->count(node.output(static_cast<int>(k)));
}

void MapContext::emit(const std::string& op, const std::vector<std::string>& ins, const std::string& output, ojson attrs,
                      const std::string& suffix) const {
    b.add_node(b.node_name(name + suffix), op, ins, output, std::move(attrs));
}

std::string map_node(MapContext& c) {
    const std::string& domain = c.node.domain();
    if (domain == "npusim") return fused(c);
    const bool onnx = domain.empty() || domain == "ai.onnx";
    const auto it = table().find(onnx ? c.node.op_type() : domain + ":" + c.node.op_type());
    if (!onnx && it == table().end()) return domain + ":" + c.node.op_type();
    if (it == table().end()) return c.node.op_type();
    return it->second.fn(c);
}

const std::vector<std::string>& mapped_op_types() {
    static const std::vector<std::string> v = [] {
        std::vector<std::string> r;
        for (const auto& [k, f] : table()) r.push_back(k);
        return r;
    }();
    return v;
}

const char* mapping_of(const std::string& op_type) {
    const auto it = table().find(op_type);
    return it == table().end() ? "" : it->second.becomes;
}

const std::vector<std::string>& folded_op_types() {
    static const std::vector<std::string> v = {
        "Abs", "Add", "And", "Cast", "Ceil", "Concat", "Constant", "ConstantOfShape", "Div", "Equal", "Expand",
        "Flatten", "Floor", "Gather", "Greater", "GreaterOrEqual", "Identity", "Less", "LessOrEqual", "Max", "Min",
        "Mod", "Mul", "Neg", "Not", "Or", "Pow", "Range", "Reciprocal", "ReduceMax", "ReduceMin", "ReduceProd",
        "ReduceSum", "Relu", "Reshape", "Shape", "Sign", "Size", "Slice", "Sqrt", "Squeeze", "Sub", "Tile",
        "Transpose", "Unsqueeze", "Where"};
    return v;
}

}  // namespace npusim::onnx_import
