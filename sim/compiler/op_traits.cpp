#include "compiler/op_traits.hpp"

#include "compiler/attention_layout.hpp"

#include <algorithm>
#include <cmath>

namespace npusim::compiler {

bool is_cube_op(OpType op) {
    return op == OpType::Conv2D || op == OpType::MatMul || op == OpType::BatchMatMul || op == OpType::GroupedMatMul;
}

bool is_elementwise(OpType op) {
    switch (op) {
        case OpType::BatchNorm:
        case OpType::ReLU:
        case OpType::GELU:
        case OpType::Sigmoid:
        case OpType::Add:
        case OpType::Mul:
        case OpType::Quantize:
        case OpType::Dequantize:
        case OpType::Sub:
        case OpType::Div:
        case OpType::Max:
        case OpType::Min:
        case OpType::Pow:
        case OpType::Exp:
        case OpType::Sqrt:
        case OpType::Tanh:
        case OpType::Erf:
        case OpType::Abs:
        case OpType::Neg:
        case OpType::Reciprocal:
        case OpType::Clip:
        case OpType::LeakyReLU:
        case OpType::HardSigmoid:
        case OpType::HardSwish:
        case OpType::SiLU:
        case OpType::Where:
        case OpType::RoPE:
        case OpType::Cast:
            return true;
        default: return false;
    }
}

bool fixpipe_can_apply(OpType op) { return op == OpType::ReLU; }

double vector_cycles_per_repeat(const Node& n) {
    // One 256 B repeat per cycle is the V pipe's peak; transcendental and
    // multi-pass ops take several (estimates from instruction counts).
    switch (n.op) {
        case OpType::ReLU: return 1;
        case OpType::Add: return 1;
        case OpType::Mul: return 1;
        case OpType::BatchNorm: return 2;        // scale and shift
        case OpType::Quantize: return 2;
        case OpType::Dequantize: return 2;
        case OpType::Sigmoid: return 4;          // exp, add, reciprocal
        case OpType::GELU: return 8;             // tanh approximation
        case OpType::Softmax: return 6;          // max, exp, sum, divide
        case OpType::LayerNorm: return 6;        // mean, variance, normalise
        case OpType::RMSNorm: return 5;          // mean of squares, normalise
        case OpType::ReduceSum: return 1;
        case OpType::GlobalAvgPool: return 1;
        case OpType::Transpose: return 2;
        case OpType::FormatConvert: return 2;    // TransData
        case OpType::Concat: return 0;           // pure copies
        case OpType::Reshape: return 0;
        case OpType::Cast: return 1;             // one conversion pass
        case OpType::CumSum: return 2;           // an add per element, the carry across repeats
        // Imported models' ops (estimates from instruction counts, like the above).
        case OpType::Sub:
        case OpType::Max:
        case OpType::Min:
        case OpType::Abs:
        case OpType::Neg: return 1;
        case OpType::Clip: return 2;             // max, min
        case OpType::LeakyReLU: return 2;        // mul, max
        case OpType::Where: return 2;            // compare-select
        case OpType::HardSigmoid: return 3;      // mul-add, clamp
        case OpType::HardSwish: return 4;        // hard sigmoid, mul
        case OpType::Div: return 4;              // reciprocal (Newton step), mul
        case OpType::Reciprocal: return 3;
        case OpType::Sqrt: return 4;
        case OpType::Exp: return 4;
        case OpType::SiLU: return 5;             // sigmoid, mul
        case OpType::Tanh: return 6;
        case OpType::Erf: return 8;              // polynomial
        case OpType::Pow: return 8;              // log, mul, exp
        case OpType::ReduceMean: return 1;       // sum, one scale
        case OpType::ReduceMax: return 1;
        case OpType::Gather: return 2;           // indexed copies
        case OpType::Slice: return 0;            // pure copies
        case OpType::Unique: return 16;         // sort + compaction (estimate)
        case OpType::NonZero: return 2;         // compare + compaction (estimate)
        case OpType::Pad: return 1;             // a masked copy into the padded place (zeros or edge values)
        case OpType::ScatterND: return 1;       // a copy of the data, the updates written at their indices
        case OpType::Resize:                    // per output repeat: nearest is a gather copy, linear 4 taps, cubic 16
            return n.attrs.count("mode") && n.attrs.at("mode").s == "linear" ? 4
                   : n.attrs.count("mode") && n.attrs.at("mode").s == "cubic" ? 16 : 1;
        case OpType::GroupNorm: return 6;       // mean, variance, normalise (as LayerNorm)
        case OpType::Attention:
        case OpType::MLAttention: return 0;     // costed by the tiler (Cube + Vector tasks)
        // x·cos + rotate(x)·sin: two multiplies, a lane permute, an add.
        case OpType::RoPE: return 4;
        // Per score: sigmoid (4), the expert bias (1), each group's top-2 sum
        // and the group selection (2), the masked top-k by repeated max over
        // the kept groups (k / 2 per score for k up to 16, at most 4), and
        // the weights' normalisation (1). Estimates from instruction counts.
        case OpType::MoEGate: return 8 + std::min<double>(4.0, static_cast<double>(n.attr_int("top_k", 8)) / 2.0);
        case OpType::MaxPool:
        case OpType::AvgPool: {
            const auto k = n.attr_ints("kernel", {2, 2});
            const auto s = n.attr_ints("stride", k);
            const double window = static_cast<double>(k[0] * (k.size() > 1 ? k[1] : k[0]));
            const double step = static_cast<double>(s[0] * (s.size() > 1 ? s[1] : s[0]));
            // Per input repeat: each input element feeds window/step outputs.
            return std::max(1.0, window / step);
        }
        default: return 1;
    }
}

double vector_cycles_per_repeat(const Graph& g, const Node& n) {
    const auto T = [&](int t) -> const Tensor& { return g.tensors[static_cast<std::size_t>(t)]; };
    if (n.op != OpType::TopK && n.op != OpType::ArgMax) return vector_cycles_per_repeat(n);
    const Tensor& in = T(n.inputs.at(0));
    const Tensor& out = T(n.outputs.at(0));
    const auto rank = static_cast<std::int64_t>(in.shape.size());
    std::int64_t axis = n.attr_int("axis", -1);
    if (axis < 0) axis += rank;
    const double len = static_cast<double>(in.shape.at(static_cast<std::size_t>(axis)));
    // Per input repeat: ArgMax is a max and an index select (2); TopK either
    // k passes of max-and-mask (2 each) or a bitonic sort of the row,
    // log2(n)·(log2(n)+1)/2 compare-exchange stages (a min and a max each),
    // whichever is fewer.
    const double stages = std::ceil(std::log2(std::max(2.0, len)));
    const double per_in = n.op == OpType::ArgMax
                              ? 2.0
                              : std::min(2.0 * static_cast<double>(n.attr_int("k", 1)), stages * (stages + 1));
    // The tiler charges per output repeat (vector_cycles_per_repeat above).
    return per_in * static_cast<double>(std::max<std::uint64_t>(1, in.bytes())) /
           static_cast<double>(std::max<std::uint64_t>(1, out.bytes()));
}

Layout plain_layout(const Shape& s) { return s.size() == 4 ? Layout::NCHW : Layout::ND; }
bool is_plain(Layout l) { return l == Layout::NCHW || l == Layout::ND; }

namespace {

// Spatial padding / resizing works on image blocks; anything that
// changes the channels, or a fractal matrix, wants plain data.
std::optional<Layout> spatial_layout(const Graph& g, const Node& n, const Tensor& t) {
    const Tensor& out = g.tensors[static_cast<std::size_t>(n.outputs[0])];
    if (t.layout == Layout::NC1HWC0 && out.shape.size() == 4 && out.shape[0] == t.shape[0] &&
        out.shape[1] == t.shape[1])
        return std::nullopt;
    if (!is_plain(t.layout)) return plain_layout(t.shape);
    return std::nullopt;
}

// Same-shape operands must share the first operand's layout.
std::optional<Layout> first_operand_layout(const Graph& g, const Node& n, std::size_t i, const Tensor& t) {
    if (i == 0) return std::nullopt;
    const Tensor& first = g.tensors[static_cast<std::size_t>(n.inputs[0])];
    if (t.shape.size() == first.shape.size() && first.layout != t.layout) return first.layout;
    return std::nullopt;
}

}  // namespace

std::optional<Layout> required_layout(const Graph& g, const Node& n, std::size_t i, CubeConversions cube) {
    const Tensor& t = g.tensors[static_cast<std::size_t>(n.inputs[i])];
    if (t.is_const) return std::nullopt;
    switch (n.op) {
        case OpType::Conv2D:
            return i == 0 ? std::optional<Layout>(Layout::NC1HWC0) : std::nullopt;
        case OpType::MLAttention:
        case OpType::Attention:
            // The mask goes only through the Vector core's softmax, which
            // reads it plain; q, k and v through the Cube's loads, as a
            // MatMul's operands (in BSND always plain: a head's rows are
            // strided rows of the projections' output).
            if (i >= 3 || (n.op == OpType::Attention && seq_major(n)))
                return is_plain(t.layout) ? std::nullopt : std::optional<Layout>(plain_layout(t.shape));
            [[fallthrough]];
        case OpType::MatMul:
        case OpType::BatchMatMul:
        case OpType::GroupedMatMul:
            if (cube.nd2nz_on_load && is_plain(t.layout)) return std::nullopt;
            return Layout::FRACTAL_NZ;
        case OpType::MaxPool:
        case OpType::AvgPool:
        case OpType::GlobalAvgPool: return Layout::NC1HWC0;
        case OpType::Softmax:
        case OpType::LayerNorm:
        case OpType::RMSNorm:
        case OpType::ReduceSum:
        case OpType::ReduceMean:
        case OpType::ReduceMax:
        case OpType::CumSum:
            // Row-wise over the last axis: fine on plain or fractal data, but
            // NC1HWC0 splits the channel axis.
            if (t.layout == Layout::NC1HWC0) return Layout::NCHW;
            return std::nullopt;
        case OpType::Reshape:
        case OpType::Transpose:
        case OpType::Unique:
        case OpType::NonZero:
        case OpType::Gather:
        case OpType::Slice:
        case OpType::ScatterND:
        // Communication moves rows of plain data between ranks.
        case OpType::AllReduce:
        case OpType::AllGather:
        case OpType::ReduceScatter:
        case OpType::AllToAll:
        case OpType::Dispatch:
        case OpType::Combine:
            if (!is_plain(t.layout)) return plain_layout(t.shape);
            return std::nullopt;
        case OpType::TopK:
        case OpType::ArgMax:
        case OpType::MoEGate:
            if (t.layout == Layout::NC1HWC0) return Layout::NCHW;  // over the last axis, as Softmax
            return std::nullopt;
        case OpType::Pad:
        case OpType::Resize:
            return spatial_layout(g, n, t);
        case OpType::Concat:
        case OpType::Add:
        case OpType::Mul:
        case OpType::Sub:
        case OpType::Div:
        case OpType::Max:
        case OpType::Min:
        case OpType::Pow:
        case OpType::Where:
            return first_operand_layout(g, n, i, t);
        default: return std::nullopt;
    }
}

Layout output_layout(const Graph& g, const Node& n, CubeConversions cube) {
    const Tensor& out = g.tensors[static_cast<std::size_t>(n.outputs[0])];
    switch (n.op) {
        case OpType::Conv2D:
        case OpType::MaxPool:
        case OpType::AvgPool:
        case OpType::GlobalAvgPool: return Layout::NC1HWC0;
        case OpType::MatMul:
        case OpType::BatchMatMul:
        case OpType::GroupedMatMul:
        case OpType::Attention:
        case OpType::MLAttention: {
            if (n.op == OpType::Attention && seq_major(n)) return plain_layout(out.shape);
            if (!cube.nz2nd_on_store) return Layout::FRACTAL_NZ;
            // Written plain unless a Cube consumer would have to convert it
            // back (a chip whose MTE2 does not convert on the way).
            if (!cube.nd2nz_on_load)
                for (int c : out.consumers) {
                    const OpType op = g.nodes[static_cast<std::size_t>(c)].op;
                    if (op == OpType::MatMul || op == OpType::BatchMatMul || op == OpType::GroupedMatMul ||
                        op == OpType::Attention || op == OpType::MLAttention)
                        return Layout::FRACTAL_NZ;
                }
            return plain_layout(out.shape);
        }
        case OpType::Reshape:
        case OpType::Transpose:
        case OpType::Unique:
        case OpType::NonZero:
        case OpType::Gather:
        case OpType::Slice:
        case OpType::ScatterND:
        case OpType::AllReduce:
        case OpType::AllGather:
        case OpType::ReduceScatter:
        case OpType::AllToAll:
        case OpType::Dispatch:
        case OpType::Combine: return plain_layout(out.shape);
        case OpType::Pad:
        case OpType::Resize: {
            const Tensor& in = g.tensors[static_cast<std::size_t>(n.inputs[0])];
            return in.layout == Layout::NC1HWC0 ? Layout::NC1HWC0 : plain_layout(out.shape);
        }
        case OpType::FormatConvert: return out.layout;  // set when inserted
        default: {
            const Tensor& in = g.tensors[static_cast<std::size_t>(n.inputs[0])];
            // A 4-D layout cannot describe a tensor of another rank.
            if (in.shape.size() != out.shape.size()) return plain_layout(out.shape);
            return in.layout;
        }
    }
}

}  // namespace npusim::compiler
