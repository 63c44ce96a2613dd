// Element-wise ONNX ops beyond the core set. The Vector core runs each as
// passes of its instructions, so an op whose instruction count matches a
// graph op is that op (a stand-in of the same cost, named in docs/onnx.md);
// an op of several steps is those steps.
#include <fmt/format.h>

#include "onnx/mapping_support.hpp"

namespace npusim::onnx_import {
namespace {

using TP = ::onnx::TensorProto;

// Steps applied in turn to the node's input: each a graph op of one input.
std::string chain(MapContext& c, std::initializer_list<const char*> ops) {
    if (!c.out_known()) return c.node.op_type() + " (output shape unknown)";
    std::string cur = c.in(0);
    std::size_t i = 0;
    for (const char* op : ops) {
        const bool last = ++i == ops.size();
        const std::string t = last ? c.out() : c.b.temp_tensor(c.name + "." + op);
        c.emit(op, {cur}, t, ojson::object(), last ? "" : std::string(".") + op);
        cur = t;
    }
    return "";
}

// Mish: x · tanh(softplus(x)), softplus = log(1 + exp(x)).
std::string mish(MapContext& c) {
    if (!c.out_known()) return "Mish (output shape unknown)";
    const std::string e = c.b.temp_tensor(c.name + ".exp"), sp = c.b.temp_tensor(c.name + ".softplus"),
                      th = c.b.temp_tensor(c.name + ".tanh");
    c.emit("Exp", {c.in(0)}, e, ojson::object(), ".exp");
    c.emit("Exp", {e}, sp, ojson::object(), ".log");
    c.emit("Tanh", {sp}, th, ojson::object(), ".tanh");
    c.emit("Mul", {c.in(0), th}, c.out());
    return "";
}

// Softsign: x / (1 + |x|) (the add in the Div's pass).
std::string softsign(MapContext& c) {
    if (!c.out_known()) return "Softsign (output shape unknown)";
    const std::string a = c.b.temp_tensor(c.name + ".abs");
    c.emit("Abs", {c.in(0)}, a, ojson::object(), ".abs");
    c.emit("Div", {c.in(0), a}, c.out());
    return "";
}

// Mod: a − b·⌊a / b⌋: a divide, then the floor, multiply and subtract.
std::string mod(MapContext& c) {
    if (c.inputs() != 2) return "Mod (inputs)";
    const std::string q = c.b.temp_tensor(c.name + ".quotient");
    c.emit("Div", {c.in(0), c.in(1)}, q, ojson::object(), ".div");
    c.emit("Sub", {c.in(0), q}, c.out());
    return "";
}

// Cast to the dtype of input 1.
std::string cast_like(MapContext& c) {
    const std::string to = graph_dtype(c.elem_type(1));
    if (to == graph_dtype(c.elem_type(0))) {
        c.alias_output(c.in(0));
        return "";
    }
    c.emit("Cast", {c.in(0)}, c.out(), ojson{{"dtype", to}});
    return "";
}

// MatMulInteger (a, b, zero points) and QLinearMatMul (a, scales, zero
// points, b, ...): an int8 MatMul; zero points and scales are folded into
// the accumulation and FixPipe's way out.
std::string int_matmul(MapContext& c, std::size_t b) {
    if (!c.out_known()) return c.node.op_type() + " (output shape unknown)";
    if (c.shape(0).size() != 2 && !(c.shape(0).size() > 2 && c.shape(b).size() == 2))
        return c.node.op_type() + " (batched operands)";
    const Shape& a = c.shape(0);
    if (a.size() > 2) {
        const std::string rows = reshaped(c, c.in(0), a, {product(a, 0, a.size() - 1), a.back()}, ".rows");
        const std::string t = c.b.temp_tensor(c.name + ".mm");
        c.emit("MatMul", {rows, c.in(b)}, t);
        c.emit("Reshape", {t}, c.out(), ojson{{"shape", ints_json(c.out_shape())}}, ".out");
        return "";
    }
    c.emit("MatMul", {c.in(0), c.in(b)}, c.out());
    return "";
}

// DynamicQuantizeLinear: the range of x (one reduction pass), then the
// quantisation; the scale and zero point come out of the reduction.
std::string dynamic_quantize(MapContext& c) {
    if (!c.out_known()) return "DynamicQuantizeLinear (output shape unknown)";
    if (graph_dtype(c.elem_type(0)) == "int8") return "DynamicQuantizeLinear (8-bit input)";
    const std::string range = c.b.temp_tensor(c.name + ".range");
    c.emit("ReduceMax", {c.in(0)}, range, ojson{{"keepdims", 1}}, ".range");
    c.emit("Quantize", {c.in(0)}, c.out(), ojson{{"dtype", "int8"}});
    for (std::size_t k : {1, 2})
        if (c.output_used(k))
            c.emit("Reshape", {range}, c.out(k), ojson{{"shape", ints_json(c.out_shape(k).empty() ? Shape{1} : c.out_shape(k))}},
                   k == 1 ? ".scale" : ".zero_point");
    return "";
}

}  // namespace

const MappingTable& elementwise_mappings() {
    const auto as = [](const char* op) { return [op](MapContext& c) { return unary(c, op); }; };
    const auto as2 = [](const char* op) { return [op](MapContext& c) { return binary(c, op); }; };
    static const MappingTable t = {
        {"Log", {as("Exp"), "`Exp` (a transcendental of the same cost)"}},
        {"Sin", {as("Tanh"), "`Tanh` (a range-reduced polynomial of the same cost)"}},
        {"Cos", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Tan", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Asin", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Acos", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Atan", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Sinh", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Cosh", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Asinh", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Acosh", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Atanh", {as("Tanh"), "`Tanh` (as `Sin`)"}},
        {"Elu", {as("Exp"), "`Exp` (the exponential; the select in its pass)"}},
        {"Celu", {as("Exp"), "`Exp` (as `Elu`)"}},
        {"Selu", {as("Exp"), "`Exp` (as `Elu`; the scale in its pass)"}},
        {"Softplus", {[](MapContext& c) { return chain(c, {"Exp", "Exp"}); }, "`Exp`, then `Exp` (the log, of the same cost)"}},
        {"Mish", {mish, "`Exp`, `Exp` (softplus), `Tanh`, `Mul` by x"}},
        {"Softsign", {softsign, "`Abs`, then `Div` of x by it (the + 1 in its pass)"}},
        {"ThresholdedRelu", {as("LeakyReLU"), "`LeakyReLU` (a compare-select)"}},
        {"Shrink", {as("Clip"), "`Clip` (two compare-selects)"}},
        {"Ceil", {as("Abs"), "`Abs` (one pass)"}},
        {"Floor", {as("Abs"), "`Abs` (one pass)"}},
        {"Round", {as("Abs"), "`Abs` (one pass)"}},
        {"Sign", {as("Abs"), "`Abs` (one pass)"}},
        {"IsNaN", {as("Abs"), "`Abs` (one compare pass)"}},
        {"IsInf", {as("Abs"), "`Abs` (one compare pass)"}},
        {"Not", {as("Neg"), "`Neg` (one pass)"}},
        {"Equal", {as2("Sub"), "`Sub` (a compare is one pass)"}},
        {"Greater", {as2("Sub"), "`Sub` (a compare is one pass)"}},
        {"GreaterOrEqual", {as2("Sub"), "`Sub` (a compare is one pass)"}},
        {"Less", {as2("Sub"), "`Sub` (a compare is one pass)"}},
        {"LessOrEqual", {as2("Sub"), "`Sub` (a compare is one pass)"}},
        {"And", {as2("Min"), "`Min` (of booleans, the same)"}},
        {"Or", {as2("Max"), "`Max` (of booleans, the same)"}},
        {"Xor", {as2("Sub"), "`Sub` (of booleans, one pass)"}},
        {"BitShift", {as2("Mul"), "`Mul` (a shift is one pass)"}},
        {"Mod", {mod, "`Div`, then `Sub` (a − b·⌊a/b⌋; the floor and multiply in their passes)"}},
        {"CastLike", {cast_like, "`Cast` to the second input's dtype; nothing when both simulate in the same dtype"}},
        {"MatMulInteger", {[](MapContext& c) { return int_matmul(c, 1); }, "`MatMul` of int8 operands (zero points folded)"}},
        {"QLinearMatMul", {[](MapContext& c) { return int_matmul(c, 3); }, "`MatMul` of int8 operands (scales and zero points on FixPipe's way out)"}},
        {"DynamicQuantizeLinear", {dynamic_quantize, "`ReduceMax` (the range: scale and zero point), then `Quantize` to int8"}},
    };
    return t;
}

}  // namespace npusim::onnx_import
