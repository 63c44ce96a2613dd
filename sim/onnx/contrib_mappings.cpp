// The com.microsoft ops exporters and ONNX Runtime's optimiser write for
// fused transformer pieces (GELU forms, RMSNorm, residual + norm), mapped
// onto the compiler's fused ops. Their output shapes come from
// onnx/shape_completion.cpp (libonnx has no schema for them).
#include "onnx/mapping_support.hpp"

namespace npusim::onnx_import {
namespace {

// x (+ bias), then GELU.
std::string gelu(MapContext& c, bool bias, const char* approximate) {
    std::string x = c.in(0);
    if (bias && c.has_input(1)) {
        x = c.b.temp_tensor(c.name + ".biased");
        c.emit("Add", {c.in(0), c.in(1)}, x, ojson::object(), ".bias_add");
    }
    c.emit("GELU", {x}, c.out(), *approximate ? ojson{{"approximate", approximate}} : ojson::object());
    return "";
}

// x + skip (+ bias), then LayerNorm or RMSNorm; output 3 (the sum) is the Add's.
std::string skip_norm(MapContext& c, bool rms) {
    if (!c.has_input(2)) return c.node.op_type() + " (no gamma)";
    std::string sum = c.b.temp_tensor(c.name + ".residual");
    c.emit("Add", {c.in(0), c.in(1)}, sum, ojson::object(), ".residual");
    const std::size_t bias = rms ? 3 : 4;
    if (c.has_input(bias)) {
        const std::string t = c.b.temp_tensor(c.name + ".biased");
        c.emit("Add", {sum, c.in(bias)}, t, ojson::object(), ".bias_add");
        sum = t;
    }
    std::vector<std::string> ins = {sum, c.in(2)};
    if (!rms && c.has_input(3)) ins.push_back(c.in(3));
    if (!rms && ins.size() == 2) {
        const std::string beta = c.b.temp_tensor(c.name + ".beta");
        c.b.declare(beta, c.shape(2), graph_dtype(c.elem_type(2)), false, true);
        ins.push_back(beta);
    }
    c.emit(rms ? "RMSNorm" : "LayerNorm", ins, c.out(), ojson{{"axis", -1}, {"epsilon", attr_float(c.node, "epsilon", 1e-5)}});
    if (c.output_used(3)) c.alias_output(sum, 3);
    for (std::size_t k : {1, 2})
        if (c.output_used(k)) return c.node.op_type() + " (mean/inv-std outputs)";
    return "";
}

}  // namespace

const MappingTable& contrib_mappings() {
    static const MappingTable t = {
        {"com.microsoft:FastGelu", {[](MapContext& c) { return gelu(c, true, "tanh"); }, "`GELU` `approximate: tanh` (after an `Add` of the bias)"}},
        {"com.microsoft:BiasGelu", {[](MapContext& c) { return gelu(c, true, ""); }, "`Add` of the bias, then `GELU`"}},
        {"com.microsoft:Gelu", {[](MapContext& c) { return gelu(c, false, ""); }, "`GELU`"}},
        {"com.microsoft:QuickGelu", {[](MapContext& c) { return unary(c, "SiLU"); }, "`SiLU` (x·sigmoid(αx): the same passes)"}},
        {"com.microsoft:SimplifiedLayerNormalization", {[](MapContext& c) {
             std::vector<std::string> ins = {c.in(0)};
             if (c.has_input(1)) ins.push_back(c.in(1));
             c.emit("RMSNorm", ins, c.out(), ojson{{"axis", -1}, {"epsilon", attr_float(c.node, "epsilon", 1e-5)}});
             return std::string();
         }, "`RMSNorm`"}},
        {"com.microsoft:SkipLayerNormalization", {[](MapContext& c) { return skip_norm(c, false); }, "`Add` of the skip (and bias), then `LayerNorm`; the sum output is the `Add`'s"}},
        {"com.microsoft:SkipSimplifiedLayerNormalization", {[](MapContext& c) { return skip_norm(c, true); }, "`Add` of the skip (and bias), then `RMSNorm`"}},
    };
    return t;
}

}  // namespace npusim::onnx_import
