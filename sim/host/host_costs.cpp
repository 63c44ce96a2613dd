#include "host/host_costs.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "compiler/graph.hpp"

namespace npusim::host {

using json = nlohmann::json;

const char* to_string(Stage s) {
    switch (s) {
        case Stage::prepare: return "prepare";
        case Stage::infer: return "infer";
        case Stage::resize: return "resize";
        case Stage::alloc: return "alloc";
        case Stage::launch: return "launch";
        case Stage::free: return "free";
    }
    return "?";
}

const std::vector<std::string>& cost_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (Stage s : {Stage::prepare, Stage::infer, Stage::resize, Stage::alloc, Stage::launch, Stage::free}) {
            k.push_back(std::string(to_string(s)) + "_us");
            k.push_back(std::string(to_string(s)) + "_dynamic_us");
        }
        return k;
    }();
    return keys;
}

const std::vector<std::string>& cost_op_types() {
    static const std::vector<std::string> ops = [] {
        std::vector<std::string> v = compiler::graph_op_names();
        v.emplace_back("FormatConvert");
        return v;
    }();
    return ops;
}

const json& default_op_costs() {
    // Estimates (no public per-op figures): tiling ("Resize") of Cube ops
    // searches tile shapes; a Reshape is a view (cheap infer, no tiling);
    // data-dependent ops size their workspace at Resize.
    static const json table = json::parse(R"({
        "Conv2D": {"infer_us": 4, "infer_dynamic_us": 10, "resize_us": 10, "resize_dynamic_us": 36},
        "MatMul": {"resize_us": 8, "resize_dynamic_us": 30},
        "BatchMatMul": {"resize_us": 8, "resize_dynamic_us": 30},
        "Reshape": {"infer_us": 1, "infer_dynamic_us": 4, "resize_us": 0.5, "resize_dynamic_us": 1},
        "FormatConvert": {"resize_us": 3, "resize_dynamic_us": 10},
        "Unique": {"resize_us": 5, "resize_dynamic_us": 20},
        "NonZero": {"resize_us": 5, "resize_dynamic_us": 20}
    })");
    return table;
}

std::map<std::string, std::map<std::string, double>> resolve_op_costs(const json& v) {
    std::map<std::string, std::map<std::string, double>> out;
    auto merge = [&](const json& table, bool check) {
        for (auto op = table.begin(); op != table.end(); ++op) {
            const std::string where = "chip.host.op_costs." + op.key();
            if (check) {
                const auto& ops = cost_op_types();
                if (std::find(ops.begin(), ops.end(), op.key()) == ops.end())
                    throw InputError(where + ": unknown op type '" + op.key() + "'" + did_you_mean(op.key(), ops));
                if (!op->is_object())
                    throw InputError(where + ": expected an object like {\"resize_us\": 10, \"resize_dynamic_us\": 40}");
            }
            for (auto kv = op->begin(); kv != op->end(); ++kv) {
                if (check) {
                    const auto& keys = cost_keys();
                    if (std::find(keys.begin(), keys.end(), kv.key()) == keys.end())
                        throw InputError(where + ": unknown key '" + kv.key() + "'" + did_you_mean(kv.key(), keys));
                    if (!kv->is_number() || !std::isfinite(kv->get<double>()) || kv->get<double>() < 0 ||
                        kv->get<double>() > 1e6)
                        throw InputError(where + "." + kv.key() + ": expected a number of µs in [0, 1e6], got " + kv->dump());
                }
                out[op.key()][kv.key()] = kv->get<double>();
            }
        }
    };
    merge(default_op_costs(), false);
    if (!v.is_object()) throw InputError("chip.host.op_costs: expected an object {op type: {key: µs}}");
    merge(v, true);
    return out;
}

double stage_cost_us(const HostParams& p, const std::string& op_type, Stage s, bool dynamic) {
    const std::string key = std::string(to_string(s)) + (dynamic ? "_dynamic_us" : "_us");
    if (auto op = p.op_costs.find(op_type); op != p.op_costs.end())
        if (auto it = op->second.find(key); it != op->second.end()) return it->second;
    const HostStageCosts& c = p.costs;
    switch (s) {
        case Stage::prepare: return dynamic ? c.prepare_dynamic_us : c.prepare_us;
        case Stage::infer: return dynamic ? c.infer_dynamic_us : c.infer_us;
        case Stage::resize: return dynamic ? c.resize_dynamic_us : c.resize_us;
        case Stage::alloc: return dynamic ? c.alloc_dynamic_us : c.alloc_us;
        case Stage::launch: return dynamic ? c.launch_dynamic_us : c.launch_us;
        case Stage::free: return dynamic ? c.free_dynamic_us : c.free_us;
    }
    return 0;
}

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
