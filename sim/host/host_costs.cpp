#include "host/host_costs.hpp"

#include <algorithm>
#include <cmath>

#include "compiler/graph.hpp"

namespace npusim::host {

CpuWork cpu_work(const compiler::Graph& g, const compiler::Node& n) {
    using compiler::OpType;
    CpuWork w;
    const auto& T = [&](int t) -> const compiler::Tensor& { return g.tensors[static_cast<std::size_t>(t)]; };
    for (int in : n.inputs) w.bytes += static_cast<double>(T(in).bytes());
    const compiler::Tensor& out = T(n.outputs.at(0));
    w.bytes += static_cast<double>(out.bytes());
    const double elems = static_cast<double>(compiler::elements(out.shape));
    const double in_elems = n.inputs.empty() ? 0.0 : static_cast<double>(compiler::elements(T(n.inputs[0]).shape));
    switch (n.op) {
        case OpType::MatMul:
        case OpType::BatchMatMul: {
            const auto& a = T(n.inputs.at(0)).shape;
            const double k = a.empty() ? 1.0 : static_cast<double>(n.attr_int("transpose_a", 0) ? a[a.size() - 2] : a.back());
            w.flops = 2 * elems * k;
            break;
        }
        case OpType::Conv2D: {
            const auto& wt = T(n.inputs.at(1)).shape;
            w.flops = 2 * elems * static_cast<double>(wt.size() == 4 ? wt[1] * wt[2] * wt[3] : 1);
            break;
        }
        case OpType::Sigmoid: w.flops = 4 * elems; break;
        case OpType::GELU: w.flops = 8 * elems; break;
        case OpType::Softmax:
        case OpType::LayerNorm:
        case OpType::BatchNorm: w.flops = 5 * elems; break;
        case OpType::ReduceSum:
        case OpType::GlobalAvgPool:
        case OpType::NonZero: w.flops = in_elems; break;
        case OpType::Unique: w.flops = in_elems * std::max(1.0, std::log2(std::max(2.0, in_elems))); break;  // sort
        case OpType::MaxPool:
        case OpType::AvgPool: {
            const auto k = n.attr_ints("kernel", {2, 2});
            w.flops = elems * static_cast<double>(k[0] * (k.size() > 1 ? k[1] : k[0]));
            break;
        }
        case OpType::Reshape: w.bytes = 0; break;  // a view
        case OpType::Concat:
        case OpType::Transpose:
        case OpType::FormatConvert: w.flops = 0; break;
        default: w.flops = elems; break;  // element-wise
    }
    return w;
}

double cpu_time_us(const HostParams& p, const CpuWork& w) {
    const double compute = w.flops / (p.cpu_gflops_per_thread * 1e3);  // GFLOP/s = 1e3 FLOP/µs
    const double memory = w.bytes / (p.cpu_gbps_per_thread * 1e3);     // GB/s = 1e3 B/µs
    return p.cpu_op_overhead_us + std::max(compute, memory);
}

double link_time_us(double latency_us, double bytes, double gbps) { return latency_us + bytes / (gbps * 1e3); }

}  // namespace npusim::host
