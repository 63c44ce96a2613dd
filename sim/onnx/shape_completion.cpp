#include "onnx/shape_completion.hpp"

#include <algorithm>
#include <cctype>

#include "onnx/einsum.hpp"
#include "onnx/fold.hpp"

namespace npusim::onnx_import {

const std::vector<std::string>& shape_preserving_contrib_ops() {
    static const std::vector<std::string> v = {"BiasGelu", "FastGelu", "Gelu", "QuickGelu", "SimplifiedLayerNormalization",
                                               "SkipLayerNormalization", "SkipSimplifiedLayerNormalization"};
    return v;
}

namespace {

bool output_shape(const ::onnx::NodeProto& n, const ShapeLookup& known, std::vector<std::int64_t>& shape, int& type) {
    std::vector<std::vector<std::int64_t>> in(static_cast<std::size_t>(n.input_size()));
    std::vector<int> types(in.size());
    for (std::size_t i = 0; i < in.size(); ++i)
        if (!known(n.input(static_cast<int>(i)), in[i], types[i])) return false;
    if (in.empty()) return false;
    type = types[0];
    if (n.domain() == "com.microsoft") {
        const auto& ops = shape_preserving_contrib_ops();
        if (std::find(ops.begin(), ops.end(), n.op_type()) == ops.end()) return false;
        shape = in[0];
        return true;
    }
    if (n.op_type() != "Einsum" || !(n.domain().empty() || n.domain() == "ai.onnx")) return false;
    const auto* eq = find_attr(n, "equation");
    if (!eq) return false;
    std::vector<std::size_t> ranks;
    for (const auto& s : in) ranks.push_back(s.size());
    EinsumTerms t;
    return parse_einsum(eq->s(), ranks, t).empty() && einsum_output_shape(t, in, shape);
}

}  // namespace

void make_einsum_explicit(::onnx::GraphProto& g) {
    for (auto& n : *g.mutable_node()) {
        if (n.op_type() != "Einsum" || !(n.domain().empty() || n.domain() == "ai.onnx")) continue;
        for (auto& a : *n.mutable_attribute()) {
            if (a.name() != "equation" || a.s().find("->") != std::string::npos) continue;
            // The letters that appear once, in alphabetical (ASCII) order,
            // after the broadcast dims.
            std::string eq;
            for (const char ch : a.s())
                if (ch != ' ') eq += ch;
            std::string once;
            for (const char ch : eq)
                if (std::isalpha(static_cast<unsigned char>(ch)) && std::count(eq.begin(), eq.end(), ch) == 1) once += ch;
            std::sort(once.begin(), once.end());
            a.set_s(eq + "->" + (eq.find("...") != std::string::npos ? "..." : "") + once);
        }
    }
}

int complete_shapes(::onnx::GraphProto& g, const ShapeLookup& known) {
    int added = 0;
    for (const auto& n : g.node()) {
        if (n.output_size() == 0 || n.output(0).empty()) continue;
        std::vector<std::int64_t> have;
        int have_type = 0;
        if (known(n.output(0), have, have_type)) continue;
        std::vector<std::int64_t> shape;
        int type = 0;
        if (!output_shape(n, known, shape, type)) continue;
        // Replace a partial entry (a rank without dims) with the whole shape.
        for (int i = 0; i < g.value_info_size(); ++i)
            if (g.value_info(i).name() == n.output(0)) {
                g.mutable_value_info()->DeleteSubrange(i, 1);
                break;
            }
        const auto set_type = [&](::onnx::ValueInfoProto* v) {
            auto* tt = v->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(type);
            auto* sh = tt->mutable_shape();
            sh->clear_dim();
            for (const auto d : shape) sh->add_dim()->set_dim_value(d);
        };
        auto* v = g.add_value_info();
        v->set_name(n.output(0));
        set_type(v);
        for (auto& o : *g.mutable_output())
            if (o.name() == n.output(0)) set_type(&o);
        ++added;
    }
    return added;
}

}  // namespace npusim::onnx_import
