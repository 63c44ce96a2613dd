#include "host/host_plan.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/split.hpp"
#include "host/host_costs.hpp"

namespace npusim::host {

using compiler::Graph;
using compiler::Node;
using compiler::OpType;

const char* to_string(Mode m) {
    switch (m) {
        case Mode::off: return "off";
        case Mode::sync: return "sync";
        case Mode::async: return "async";
        case Mode::pipeline: return "pipeline";
        case Mode::hetero: return "hetero";
    }
    return "?";
}

Mode mode_from_string(const std::string& s) {
    for (Mode m : {Mode::off, Mode::sync, Mode::async, Mode::pipeline, Mode::hetero})
        if (s == to_string(m)) return m;
    throw InputError("workload.host_mode: expected one of off, sync, async, pipeline, hetero, got '" + s + "'");
}

int threads_needed(Mode m) {
    switch (m) {
        case Mode::off: return 0;
        case Mode::sync: return 1;
        case Mode::async: return 2;
        case Mode::pipeline: return 3;
        case Mode::hetero: return 4;
    }
    return 1;
}

namespace {

bool global(Space s) { return s == Space::hbm || s == Space::l2; }

struct Written {
    std::uint64_t lo, hi;
    int op;
};

}  // namespace

HostPlan make_plan(const Graph& g, const TaskStream& stream, const std::vector<compiler::TilingChoice>& kernels,
                   const std::vector<std::string>& cpu_nodes, bool hetero, const HostParams& params) {
    HostPlan plan;
    std::unordered_map<std::string, int> node_index;
    std::vector<std::string> node_names;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        node_index.emplace(g.nodes[i].name, static_cast<int>(i));
        node_names.push_back(g.nodes[i].name);
    }
    std::set<std::string> cpu;
    for (const auto& n : cpu_nodes) {
        if (!node_index.count(n))
            throw InputError("workload.cpu_ops: no node '" + n + "' in " + g.file + did_you_mean(n, node_names));
        cpu.insert(n);
    }
    for (const Node& n : g.nodes)
        if (n.on_cpu) cpu.insert(n.name);

    // Kernels in compiler order; tasks by their `op` label.
    std::unordered_map<std::string, int> op_of_kernel;
    for (const auto& k : kernels) {
        HostOp op;
        op.name = k.kernel;
        op.type = "FormatConvert";  // compiler-inserted unless its name is a node
        for (const std::string& part : split(k.kernel, '+')) {
            auto it = node_index.find(part);
            if (it == node_index.end()) continue;
            op.nodes.push_back(it->second);
        }
        if (!op.nodes.empty()) op.type = compiler::to_string(g.nodes[static_cast<std::size_t>(op.nodes[0])].op);
        op_of_kernel.emplace(op.name, static_cast<int>(plan.ops.size()));
        plan.ops.push_back(std::move(op));
    }
    for (std::uint32_t t = 0; t < stream.tasks.size(); ++t) {
        auto it = op_of_kernel.find(stream.name(stream.tasks[t].op));
        if (it == op_of_kernel.end())
            throw std::logic_error("host plan: task '" + stream.tasks[t].id + "' belongs to no compiled kernel");
        plan.ops[static_cast<std::size_t>(it->second)].tasks.push_back(t);
    }

    // Node -> op, and the CPU subgraph.
    std::vector<int> op_of_node(g.nodes.size(), -1);
    for (std::size_t o = 0; o < plan.ops.size(); ++o)
        for (int n : plan.ops[o].nodes) op_of_node[static_cast<std::size_t>(n)] = static_cast<int>(o);
    if (hetero) {
        for (HostOp& op : plan.ops) {
            std::size_t labelled = 0;
            for (int n : op.nodes) labelled += cpu.count(g.nodes[static_cast<std::size_t>(n)].name);
            if (labelled == 0) continue;
            if (labelled != op.nodes.size())
                throw InputError("workload.cpu_ops: CPU-labelled node(s) of kernel '" + op.name +
                                 "' were fused with NPU nodes; label all of them, or keep them apart with "
                                 "workload.passes.fuse_vector=false / fuse_activation=false");
            op.on_cpu = true;
        }
    }
    auto node_on_cpu = [&](int n) {
        const int o = op_of_node[static_cast<std::size_t>(n)];
        return o >= 0 && plan.ops[static_cast<std::size_t>(o)].on_cpu;
    };

    // Value- and compute-dependence; CPU costs and link traffic.
    for (HostOp& op : plan.ops) {
        for (int ni : op.nodes) {
            const Node& n = g.nodes[static_cast<std::size_t>(ni)];
            if ((n.op == OpType::Reshape || n.op == OpType::ReduceSum) && n.inputs.size() == 2) {
                const compiler::Tensor& v = g.tensors[static_cast<std::size_t>(n.inputs[1])];
                if (v.producer >= 0) {  // inputs and consts are known on the host
                    op.value_dependent = true;
                    op.value_bytes += v.bytes();
                    op.value_on_host = node_on_cpu(v.producer);
                }
            }
            if (n.op == OpType::Unique || n.op == OpType::NonZero) {
                op.compute_dependent = true;
                op.shape_bytes += 8 * g.tensors[static_cast<std::size_t>(n.outputs[0])].shape.size();
            }
            if (op.on_cpu) {
                op.cpu_us += cpu_time_us(params, cpu_work(g, n));
                for (int in : n.inputs) {
                    const compiler::Tensor& t = g.tensors[static_cast<std::size_t>(in)];
                    if (t.producer >= 0 && !node_on_cpu(t.producer)) op.d2h_bytes += t.bytes();
                }
            }
        }
        if (op.on_cpu && !op.nodes.empty()) {
            const compiler::Tensor& out = g.tensors[static_cast<std::size_t>(g.nodes[static_cast<std::size_t>(op.nodes.back())].outputs[0])];
            bool npu_reader = false;
            for (int c : out.consumers) npu_reader = npu_reader || !node_on_cpu(c);
            if (npu_reader) op.h2d_bytes = out.bytes();
        }
        plan.value_dependent += op.value_dependent;
        plan.compute_dependent += op.compute_dependent;
        plan.cpu_ops += op.on_cpu;
        plan.views += !op.on_cpu && op.tasks.empty();
    }

    // Device buffers from the regions tasks write, last readers from the
    // regions tasks read (views read their source's addresses). CPU ops'
    // outputs live in host memory.
    std::vector<Written> writes;
    for (std::size_t o = 0; o < plan.ops.size(); ++o) {
        HostOp& op = plan.ops[o];
        if (op.on_cpu) continue;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
        for (std::uint32_t t : op.tasks)
            for (const Region& r : stream.tasks[t].writes)
                if (global(r.space) && r.bytes) spans.emplace_back(r.addr, r.addr + r.bytes);
        std::sort(spans.begin(), spans.end());
        std::uint64_t lo = 0, hi = 0;
        bool open = false;
        auto flush = [&] {
            if (!open) return;
            writes.push_back({lo, hi, static_cast<int>(o)});
            op.out_bytes += hi - lo;
        };
        for (const auto& [a, b] : spans) {
            if (open && a <= hi) {
                hi = std::max(hi, b);
                continue;
            }
            flush();
            lo = a;
            hi = b;
            open = true;
        }
        flush();
    }
    std::sort(writes.begin(), writes.end(), [](const Written& a, const Written& b) { return a.lo < b.lo; });
    std::uint64_t longest = 0;
    for (const auto& w : writes) longest = std::max(longest, w.hi - w.lo);
    std::vector<int> last_reader(plan.ops.size(), -1);
    for (std::size_t o = 0; o < plan.ops.size(); ++o)
        for (std::uint32_t t : plan.ops[o].tasks)
            for (const Region& r : stream.tasks[t].reads) {
                if (!global(r.space) || !r.bytes) continue;
                const std::uint64_t lo = r.addr, hi = r.addr + r.bytes;
                auto it = std::lower_bound(writes.begin(), writes.end(), lo >= longest ? lo - longest : 0,
                                           [](const Written& w, std::uint64_t v) { return w.lo < v; });
                for (; it != writes.end() && it->lo < hi; ++it)
                    if (it->hi > lo && it->op != static_cast<int>(o))
                        last_reader[static_cast<std::size_t>(it->op)] =
                            std::max(last_reader[static_cast<std::size_t>(it->op)], static_cast<int>(o));
            }
    for (std::size_t o = 0; o < plan.ops.size(); ++o)
        if (plan.ops[o].out_bytes && last_reader[o] > static_cast<int>(o))
            plan.ops[static_cast<std::size_t>(last_reader[o])].frees.push_back(static_cast<int>(o));
    for (const compiler::Tensor& t : g.tensors)
        if (t.is_input || t.is_const) plan.resident_bytes += t.bytes();
    return plan;
}

}  // namespace npusim::host
