#include "compiler/spmd.hpp"

#include <atomic>
#include <exception>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "compiler/comm_ops.hpp"
#include "compiler/graph_reader.hpp"
#include "onnx/onnx_import.hpp"

namespace npusim::compiler {

namespace {

// What makes one rank's program differ from another's: every tensor's
// shape and row groups, and the rank itself where a collective names peers.
std::string signature(const Graph& g, bool rank_specific) {
    std::string s = rank_specific ? fmt::format("rank {};", g.spmd.rank) : std::string();
    for (const Tensor& t : g.tensors) {
        if (t.is_const || t.is_input) continue;
        for (const auto d : t.shape) s += fmt::format("{},", d);
        s += '|';
        for (const auto r : t.row_groups) s += fmt::format("{},", r);
        s += ';';
    }
    return s;
}

bool has_collective(const Graph& g) {
    for (const Node& n : g.nodes)
        if (is_comm_op(n.op) && n.op != OpType::Dispatch && n.op != OpType::Combine) return true;
    return false;
}

}  // namespace

bool runs_on_ranks(const ChipParams& chip) { return chip.interconnect.ranks > 1; }

SpmdCompile compile_spmd(const Graph& g0, const ChipParams& chip, const CompileOptions& opt, int threads) {
    const int ranks = std::max(1, chip.interconnect.ranks);
    const bool rank_specific = has_collective(g0);
    SpmdCompile out;
    out.plan_of_rank.assign(static_cast<std::size_t>(ranks), -1);
    std::map<std::string, int> plan_of;
    Graph g = g0;
    std::vector<int> first_rank;
    for (int r = 0; r < ranks; ++r) {
        if (r > 0) reinfer_for_rank(g, r);
        const auto [it, fresh] = plan_of.emplace(signature(g, rank_specific), static_cast<int>(first_rank.size()));
        if (fresh) first_rank.push_back(r);
        out.plan_of_rank[static_cast<std::size_t>(r)] = it->second;
    }
    // The first rank's program is planned in full; the others, which differ
    // only in how many rows their grouped kernels get, take its decisions
    // (the Cube cores it plans for, each Cube kernel's block counts), as one
    // compiled kernel runs on every rank with the rows it is given.
    const auto compile_rank = [&](int r, const ChipParams& c, const CompileOptions& o) {
        Graph gr = g0;
        if (r > 0) reinfer_for_rank(gr, r);
        return compile(gr, c, o);
    };
    std::vector<CompileResult> plans(first_rank.size());
    plans[0] = compile_rank(first_rank[0], chip, opt);
    ChipParams same = chip;
    same.cube.count = plans[0].cube_cores_planned;
    same.vector.count = plans[0].vector_cores_planned;
    CompileOptions decided = opt;
    decided.explore_cube_cores = decided.search_cube_plans = decided.explore_vector_cores = false;
    for (const TilingChoice& t : plans[0].tilings)
        if (t.chosen.m > 0 && !t.node.empty() && !decided.tiling.count(t.node))
            decided.tiling[t.node] = ForcedTiling{t.chosen.m, t.chosen.n, 0, t.chosen.k, true};
    // The others are independent: compiled on two threads where the machine
    // has a second core, each into its own slot (the same plans either way).
    std::atomic<std::size_t> next{1};
    std::vector<std::exception_ptr> errors(first_rank.size());
    const auto work = [&] {
        for (std::size_t i = next++; i < first_rank.size(); i = next++) {
            try {
                plans[i] = compile_rank(first_rank[i], same, decided);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    if (threads == 0) threads = std::thread::hardware_concurrency() >= 2 ? 2 : 1;
    if (first_rank.size() > 2 && threads >= 2) {
        std::thread helper(work);
        work();
        helper.join();
    } else {
        work();
    }
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);  // the lowest rank's error, as one thread would have met it first
    std::vector<std::shared_ptr<const TaskStream>> by_plan;
    for (CompileResult& c : plans) {
        by_plan.push_back(std::make_shared<const TaskStream>(std::move(c.stream)));
        c.stream = TaskStream();
        out.plans.push_back(std::move(c));
    }
    for (int r = 0; r < ranks; ++r) out.streams.push_back(by_plan[static_cast<std::size_t>(out.plan_of_rank[static_cast<std::size_t>(r)])]);
    return out;
}

SpmdCompile compile_spmd_workload(const WorkloadParams& w, const ChipParams& chip, int threads) {
    SpmdView spmd;
    spmd.ranks = std::max(1, chip.interconnect.ranks);
    spmd.routing = routing_spec(w.graph);
    const Graph g = onnx_import::is_onnx_file_name(w.file)
                        ? read_graph_text(onnx_import::import_model(w.file, graph_dims(w.graph)), w.file, {}, spmd)
                        : read_graph(w.file, graph_dims(w.graph), spmd);
    return compile_spmd(g, chip, CompileOptions(w.graph), threads);
}

TaskStream SpmdCompile::merged() const {
    TaskStream m;
    m.cross_rank = true;
    // Every rank's row tables hold all ranks' rows, the same in each program.
    if (!streams.empty()) m.row_tables = streams[0]->row_tables;
    for (std::size_t r = 0; r < streams.size(); ++r) {
        const TaskStream& s = *streams[r];
        if (m.file.empty()) m.file = s.file;
        const std::string pre = fmt::format("r{}.", r);
        const auto stream0 = static_cast<std::uint32_t>(m.streams.size());
        const auto event0 = static_cast<EventIndex>(m.events.size());
        const auto program0 = static_cast<std::uint32_t>(m.programs.size());
        for (const auto& name : s.streams) m.streams.push_back(pre + name);
        for (EventDecl e : s.events) {
            e.id = pre + e.id;
            m.events.push_back(e);
        }
        for (ProgramDecl d : s.programs) {
            d.id = pre + d.id;
            m.programs.push_back(d);
        }
        for (Task t : s.tasks) {
            t.id = pre + t.id;
            t.rank = static_cast<std::int32_t>(r);
            t.stream += stream0;
            for (auto& e : t.wait) e += event0;
            for (auto& e : t.signal) e += event0;
            if (t.kernel == npusim::Kernel::program) t.params.program += program0;
            t.op = m.intern(s.name(t.op));
            t.tile = m.intern(s.name(t.tile));
            m.tasks.push_back(std::move(t));
        }
    }
    return m;
}

}  // namespace npusim::compiler
