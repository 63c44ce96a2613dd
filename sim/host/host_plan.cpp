#include "host/host_plan.hpp"

#include <algorithm>
#include <map>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "host/host_costs.hpp"

namespace npusim::host {

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

HostPlan make_plan(const compiler::OpTable& table, const TaskStream& stream, const std::vector<std::string>& cpu_nodes,
                   bool hetero, const HostParams& params) {
    HostPlan plan;
    const std::set<std::string> names(table.node_names.begin(), table.node_names.end());
    std::set<std::string> cpu;
    for (const auto& n : cpu_nodes) {
        if (!names.count(n))
            throw InputError("workload.cpu_ops: no node '" + n + "' in " + table.graph_file +
                             did_you_mean(n, table.node_names));
        cpu.insert(n);
    }
    for (const compiler::CompiledOp& c : table.ops) {
        HostOp op;
        op.name = c.name;
        op.type = c.type;
        op.tasks = c.tasks;
        plan.ops.push_back(std::move(op));
    }

    // The CPU subgraph.
    if (hetero) {
        for (std::size_t o = 0; o < plan.ops.size(); ++o) {
            const auto& nodes = table.ops[o].nodes;
            std::size_t labelled = 0;
            for (const compiler::OpNode& n : nodes) labelled += n.cpu_label || cpu.count(n.name);
            if (labelled == 0) continue;
            if (labelled != nodes.size())
                throw InputError("workload.cpu_ops: CPU-labelled node(s) of kernel '" + plan.ops[o].name +
                                 "' were fused with NPU nodes; label all of them, or keep them apart with "
                                 "workload.passes.fuse_vector=false / fuse_activation=false");
            plan.ops[o].on_cpu = true;
        }
    }
    auto op_on_cpu = [&](int o) { return o >= 0 && plan.ops[static_cast<std::size_t>(o)].on_cpu; };

    // Value- and compute-dependence; CPU costs and link traffic.
    for (std::size_t o = 0; o < plan.ops.size(); ++o) {
        HostOp& op = plan.ops[o];
        const auto& nodes = table.ops[o].nodes;
        for (const compiler::OpNode& n : nodes) {
            if (n.value_input >= 0) {
                const compiler::OpInput& v = n.inputs[static_cast<std::size_t>(n.value_input)];
                op.value_dependent = true;
                op.value_bytes += v.bytes;
                op.value_on_host = op_on_cpu(v.op);
            }
            if (n.compute_dependent) {
                op.compute_dependent = true;
                op.shape_bytes += n.shape_bytes;
            }
            if (op.on_cpu) {
                op.cpu_us += cpu_time_us(params, n.work);
                for (const compiler::OpInput& in : n.inputs)
                    if (in.computed && !op_on_cpu(in.op)) op.d2h_bytes += in.bytes;
            }
        }
        if (op.on_cpu && !nodes.empty()) {
            bool npu_reader = false;
            for (int r : nodes.back().readers) npu_reader = npu_reader || !op_on_cpu(r);
            if (npu_reader) op.h2d_bytes = nodes.back().out_bytes;
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
                if (global(r.space) && r.bytes) spans.emplace_back(r.addr, r.end());
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
                const std::uint64_t lo = r.addr, hi = r.end();  // the envelope of a strided region
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
    plan.resident_bytes = table.resident_bytes;
    return plan;
}

}  // namespace npusim::host
