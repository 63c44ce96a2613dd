#include "common/op_type.hpp"

namespace npusim {

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
        case OpType::Sub: return "Sub";
        case OpType::Div: return "Div";
        case OpType::Max: return "Max";
        case OpType::Min: return "Min";
        case OpType::Pow: return "Pow";
        case OpType::Exp: return "Exp";
        case OpType::Sqrt: return "Sqrt";
        case OpType::Tanh: return "Tanh";
        case OpType::Erf: return "Erf";
        case OpType::Abs: return "Abs";
        case OpType::Neg: return "Neg";
        case OpType::Reciprocal: return "Reciprocal";
        case OpType::Clip: return "Clip";
        case OpType::LeakyReLU: return "LeakyReLU";
        case OpType::HardSigmoid: return "HardSigmoid";
        case OpType::HardSwish: return "HardSwish";
        case OpType::SiLU: return "SiLU";
        case OpType::Where: return "Where";
        case OpType::ReduceMean: return "ReduceMean";
        case OpType::ReduceMax: return "ReduceMax";
        case OpType::Gather: return "Gather";
        case OpType::Slice: return "Slice";
        case OpType::RMSNorm: return "RMSNorm";
        case OpType::Attention: return "Attention";
        case OpType::Pad: return "Pad";
        case OpType::Resize: return "Resize";
        case OpType::TopK: return "TopK";
        case OpType::ArgMax: return "ArgMax";
        case OpType::GroupNorm: return "GroupNorm";
        case OpType::ScatterND: return "ScatterND";
        case OpType::AllReduce: return "AllReduce";
        case OpType::AllGather: return "AllGather";
        case OpType::ReduceScatter: return "ReduceScatter";
        case OpType::AllToAll: return "AllToAll";
        case OpType::Dispatch: return "Dispatch";
        case OpType::Combine: return "Combine";
        case OpType::GroupedMatMul: return "GroupedMatMul";
        case OpType::RoPE: return "RoPE";
        case OpType::MoEGate: return "MoEGate";
        case OpType::MLAttention: return "MLAttention";
        case OpType::Cast: return "Cast";
        case OpType::CumSum: return "CumSum";
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

}  // namespace npusim
