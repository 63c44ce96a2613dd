#include "onnx/conv_windows.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace npusim::onnx_import {

namespace {

int conv_weight_input(const std::string& op) {
    if (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger") return 1;
    if (op == "QLinearConv") return 3;
    return -1;
}

// Dims of the initializers and of the graph inputs (-1: not a fixed value).
std::map<std::string, std::vector<std::int64_t>> known_dims(const ::onnx::GraphProto& g) {
    std::map<std::string, std::vector<std::int64_t>> dims;
    for (const auto& t : g.initializer()) dims[t.name()] = {t.dims().begin(), t.dims().end()};
    for (const auto& v : g.input()) {
        if (dims.count(v.name()) || !v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
        std::vector<std::int64_t>& d = dims[v.name()];
        for (const auto& x : v.type().tensor_type().shape().dim()) d.push_back(x.has_dim_value() ? x.dim_value() : -1);
    }
    return dims;
}

bool has_attribute(const ::onnx::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return true;
    return false;
}

void check_node(const LoadedModel& m, ::onnx::NodeProto& n, int wi, const std::vector<std::int64_t>* w,
                const std::vector<std::int64_t>* x) {
    const auto fail_at = [&](const std::string& what) {
        throw InputError(fmt::format("{}: node '{}' ({}): {}", m.file, n.name(), n.op_type(), what));
    };
    const std::string& wname = n.input(wi);
    if (!w) {
        if (!has_attribute(n, "kernel_shape"))
            fail_at(fmt::format("weight '{}' is computed: give the kernel_shape attribute", wname));
        return;
    }
    const int wr = static_cast<int>(w->size());
    if (wr < 3) fail_at(fmt::format("weight '{}' has rank {}; a convolution's weight is [out, in, k1, ...] (rank >= 3)", wname, wr));
    if (x && static_cast<int>(x->size()) != wr)
        fail_at(fmt::format("input '{}' has rank {} but weight '{}' rank {}: a {}-d convolution needs an input of rank {} "
                            "(batch, channels, {} spatial)",
                            n.input(0), x->size(), wname, wr, wr - 2, wr, wr - 2));
    for (int i = 2; i < wr; ++i)
        if ((*w)[static_cast<std::size_t>(i)] < 1)
            fail_at(fmt::format("weight '{}' dimension {} is {}: a window must be a fixed size >= 1", wname, i,
                                (*w)[static_cast<std::size_t>(i)]));
    const auto spatial = static_cast<std::size_t>(wr - 2);
    for (const auto& a : n.attribute()) {
        const std::size_t want = a.name() == "pads" ? 2 * spatial : spatial;
        const bool window = a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "dilations" ||
                            a.name() == "pads" || a.name() == "output_padding" || a.name() == "output_shape";
        if (window && static_cast<std::size_t>(a.ints_size()) != want)
            fail_at(fmt::format("attribute {} has {} value(s); the {}-d weight '{}' needs {}", a.name(), a.ints_size(),
                                spatial, wname, want));
    }
    if (!has_attribute(n, "kernel_shape")) {
        auto* k = n.add_attribute();
        k->set_name("kernel_shape");
        k->set_type(::onnx::AttributeProto::INTS);
        for (std::size_t i = 2; i < w->size(); ++i) k->add_ints((*w)[i]);
    }
}

}  // namespace

void check_conv_windows(LoadedModel& m) {
    auto& g = *m.model.mutable_graph();
    const auto dims = known_dims(g);
    for (auto& n : *g.mutable_node()) {
        const int wi = n.domain().empty() ? conv_weight_input(n.op_type()) : -1;
        if (wi < 0 || n.input_size() <= wi) continue;
        const auto w = dims.find(n.input(wi));
        const auto x = dims.find(n.input(0));
        check_node(m, n, wi, w == dims.end() ? nullptr : &w->second, x == dims.end() ? nullptr : &x->second);
    }
}

}  // namespace npusim::onnx_import
