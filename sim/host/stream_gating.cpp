#include "host/stream_gating.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace npusim::host {

GatedStream gate_stream(const TaskStream& in, const HostPlan& plan, std::uint32_t submit_batch) {
    const std::size_t n_ops = plan.ops.size();
    GatedStream g;
    g.batches.resize(n_ops);
    g.batch_tasks.resize(n_ops);
    g.end_event.assign(n_ops, kNoEvent);
    g.cpu_waits.resize(n_ops);
    g.cpu_signals.resize(n_ops);

    TaskStream& out = g.stream;
    out.file = in.file;
    out.events = in.events;
    out.streams = in.streams;
    out.names = in.names;
    out.name_index = in.name_index;

    std::vector<int> op_of_task(in.tasks.size(), -1);
    std::vector<std::uint32_t> batch_of_task(in.tasks.size(), 0);
    for (std::size_t o = 0; o < n_ops; ++o) {
        const HostOp& op = plan.ops[o];
        for (std::size_t i = 0; i < op.tasks.size(); ++i) {
            op_of_task[op.tasks[i]] = static_cast<int>(o);
            batch_of_task[op.tasks[i]] = submit_batch ? static_cast<std::uint32_t>(i / submit_batch) : 0;
        }
        if (!op.on_device()) continue;
        const std::size_t n = op.tasks.size();
        const std::size_t per = submit_batch ? submit_batch : n;
        for (std::size_t b = 0, lo = 0; lo < n; ++b, lo += per) {
            const auto e = static_cast<EventIndex>(out.events.size());
            out.events.push_back(EventDecl{fmt::format("launch:{}#{}", op.name, b), 1, 0});
            g.batches[o].emplace_back(e, static_cast<std::uint32_t>(std::min(per, n - lo)));
        }
        g.batch_tasks[o].resize(g.batches[o].size());
        g.end_event[o] = static_cast<EventIndex>(out.events.size());
        out.events.push_back(EventDecl{"end:" + op.name, static_cast<std::uint32_t>(n), 0});
    }

    // Who signals each event, to keep a CPU op from waiting on itself.
    std::vector<std::set<int>> signallers(in.events.size());
    for (std::size_t t = 0; t < in.tasks.size(); ++t)
        for (EventIndex e : in.tasks[t].signal) signallers[e].insert(op_of_task[t]);

    std::vector<std::map<EventIndex, std::uint32_t>> signals(n_ops);
    std::vector<std::set<EventIndex>> waits(n_ops);
    for (std::size_t t = 0; t < in.tasks.size(); ++t) {
        const Task& task = in.tasks[t];
        const int o = op_of_task[t];
        if (o < 0) throw std::logic_error("gate_stream: task '" + task.id + "' belongs to no host op");
        const HostOp& op = plan.ops[static_cast<std::size_t>(o)];
        if (op.on_cpu) {
            for (EventIndex e : task.wait)
                if (signallers[e] != std::set<int>{o}) waits[static_cast<std::size_t>(o)].insert(e);
            for (EventIndex e : task.signal) ++signals[static_cast<std::size_t>(o)][e];
            continue;
        }
        Task copy = task;
        const std::uint32_t b = batch_of_task[t];
        copy.wait.push_back(g.batches[static_cast<std::size_t>(o)][b].first);
        copy.signal.push_back(g.end_event[static_cast<std::size_t>(o)]);
        g.batch_tasks[static_cast<std::size_t>(o)][b].push_back(static_cast<std::uint32_t>(out.tasks.size()));
        out.tasks.push_back(std::move(copy));
    }
    for (std::size_t o = 0; o < n_ops; ++o) {
        g.cpu_waits[o].assign(waits[o].begin(), waits[o].end());
        g.cpu_signals[o].assign(signals[o].begin(), signals[o].end());
    }
    return g;
}

}  // namespace npusim::host
