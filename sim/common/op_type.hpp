// The op types of the model graph: the compiler's vocabulary, also named by
// chip files (per-op host costs) and messages. Plain C++.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace npusim {

enum class OpType : std::uint8_t {
    Conv2D, BatchNorm, ReLU, GELU, Sigmoid, Add, Mul, MatMul, BatchMatMul, LayerNorm, Softmax,
    MaxPool, AvgPool, GlobalAvgPool, Concat, Reshape, Transpose, ReduceSum, Quantize, Dequantize,
    // Data-dependent output shape (host runtime: compute-dependent ops).
    Unique, NonZero,
    // Element-wise and data-movement ops of imported models (docs/onnx.md):
    // binary with numpy broadcast, unary, select, reductions, gathers.
    Sub, Div, Max, Min, Pow,
    Exp, Sqrt, Tanh, Erf, Abs, Neg, Reciprocal, Clip, LeakyReLU, HardSigmoid, HardSwish, SiLU,
    Where, ReduceMean, ReduceMax, Gather, Slice, RMSNorm,
    // Fused attention (Cube + Vector, tiled over the sequence), data movement
    // with a new shape, selections and group-wise normalisation.
    Attention, Pad, Resize, TopK, ArgMax, GroupNorm,
    // Indexed writes into a copy of the data (KV-cache updates as exporters write them).
    ScatterND,
    // Communication across the ranks of a supernode (docs/graph-format.md,
    // "Graphs that span ranks"), and the expert MatMul after a Dispatch.
    AllReduce, AllGather, ReduceScatter, AllToAll, Dispatch, Combine, GroupedMatMul,
    // LLM serving (docs/graph-format.md, "LLM ops"): rotary embedding, the
    // MoE router's group-limited top-k, attention over a compressed
    // (latent) KV cache.
    RoPE, MoEGate, MLAttention,
    // Of imported models: a dtype conversion, a running sum along an axis.
    Cast, CumSum,
    // Compiler-inserted.
    FormatConvert,
};
const char* to_string(OpType op);
// All graph-level op names (not FormatConvert), for messages and did-you-mean.
const std::vector<std::string>& graph_op_names();
bool op_from_string(const std::string& s, OpType& out);

}  // namespace npusim
