#include "compiler/graph.hpp"

#include <limits>
#include <stdexcept>

#include "common/errors.hpp"

namespace npusim::compiler {

const char* to_string(Layout l) {
    switch (l) {
        case Layout::ND: return "ND";
        case Layout::NCHW: return "NCHW";
        case Layout::NC1HWC0: return "NC1HWC0";
        case Layout::FRACTAL_NZ: return "FRACTAL_NZ";
    }
    return "?";
}

const char* to_string(OpType op) {
    switch (op) {
        case OpType::Conv2D: return "Conv2D";
        case OpType::BatchNorm: return "BatchNorm";
        case OpType::ReLU: return "ReLU";
        case OpType::GELU: return "GELU";
        case OpType::Sigmoid: return "Sigmoid";
        case OpType::Add: return "Add";
        case OpType::Mul: return "Mul";
        case OpType::MatMul: return "MatMul";
        case OpType::BatchMatMul: return "BatchMatMul";
        case OpType::LayerNorm: return "LayerNorm";
        case OpType::Softmax: return "Softmax";
        case OpType::MaxPool: return "MaxPool";
        case OpType::AvgPool: return "AvgPool";
        case OpType::GlobalAvgPool: return "GlobalAvgPool";
        case OpType::Concat: return "Concat";
        case OpType::Reshape: return "Reshape";
        case OpType::Transpose: return "Transpose";
        case OpType::ReduceSum: return "ReduceSum";
        case OpType::Quantize: return "Quantize";
        case OpType::Dequantize: return "Dequantize";
        case OpType::Unique: return "Unique";
        case OpType::NonZero: return "NonZero";
        case OpType::FormatConvert: return "FormatConvert";
    }
    return "?";
}

const std::vector<std::string>& graph_op_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (int i = 0; i < static_cast<int>(OpType::FormatConvert); ++i)
            v.emplace_back(to_string(static_cast<OpType>(i)));
        return v;
    }();
    return names;
}

bool op_from_string(const std::string& s, OpType& out) {
    const auto& names = graph_op_names();
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == s) {
            out = static_cast<OpType>(i);
            return true;
        }
    return false;
}

std::int64_t elements(const Shape& s) {
    // Saturates instead of overflowing; the reader rejects anything near this.
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    std::int64_t n = 1;
    for (const std::int64_t d : s) {
        if (d <= 0) return 0;
        if (n > kMax / d) return kMax;
        n *= d;
    }
    return n;
}

std::string to_string(const Shape& s) {
    std::string r = "[";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i) r += ",";
        r += std::to_string(s[i]);
    }
    return r + "]";
}

std::int64_t Node::attr_int(const std::string& key, std::int64_t fallback) const {
    const auto it = attrs.find(key);
    if (it == attrs.end()) return fallback;
    const Attr& a = it->second;
    if (a.kind == Attr::Kind::integer) return a.i;
    if (a.kind == Attr::Kind::ints && a.list.size() == 1) return a.list[0];
    throw InputError("node " + name + ": attribute '" + key + "' is not an integer");
}

std::vector<std::int64_t> Node::attr_ints(const std::string& key, std::vector<std::int64_t> fallback) const {
    const auto it = attrs.find(key);
    if (it == attrs.end()) return fallback;
    const Attr& a = it->second;
    if (a.kind == Attr::Kind::ints) return a.list;
    if (a.kind == Attr::Kind::integer) return {a.i};
    throw InputError("node " + name + ": attribute '" + key + "' is not an integer or list of integers");
}

int Graph::tensor_index(const std::string& tname) const {
    for (std::size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].name == tname) return static_cast<int>(i);
    return -1;
}

}  // namespace npusim::compiler
