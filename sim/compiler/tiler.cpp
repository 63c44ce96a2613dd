// The tiler's entry: walks the kernels in order, hands each to the piece
// that cuts its kind into tiles (tile_cube.cpp, tile_attention.cpp,
// tile_vector_kernels.cpp, comm_lowering for communication), and finishes
// each kernel's tasks (row masks, core groups, Vector chunk plans). Also the
// questions every piece asks of the graph: forced tilings, producers, warm
// inputs, kernels alike.
#include "compiler/tiler.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/arith.hpp"
#include "common/errors.hpp"
#include "compiler/comm_lowering.hpp"
#include "compiler/comm_ops.hpp"
#include "compiler/tiler_impl.hpp"
#include "compiler/slice_view.hpp"

namespace npusim::compiler {

Tiler::Tiler(const Graph& g, const KernelPlan& plan, const MemoryPlan& mem, const ChipParams& chip,
             const CompileOptions& opt)
    : g_(g),
      plan_(plan),
      mem_(mem),
      full_chip_(chip),
      chip_(chip),
      opt_(opt),
      first_tile_(plan.kernels.size(), -1),
      tile_count_(plan.kernels.size(), 0),
      k_parts_(plan.kernels.size(), 1),
      capacity_(capacity_dispatches(g)),
      views_(slice_views(g)) {}

std::vector<TileTask> Tiler::run(std::vector<TilingChoice>& choices) {
    for (std::size_t k = 0; k < plan_.kernels.size(); ++k) {
        const Kernel& kn = plan_.kernels[k];
        first_tile_[k] = static_cast<int>(tasks_.size());
        TilingChoice choice;
        choice.kernel = kn.name;
        use_core_group(kn);
        cube_where_.reset();
        blocking_key_.valid = false;
        tile_kernel(static_cast<int>(k), choice);
        finish_kernel(k, choice);
        choices.push_back(choice);
    }
    return std::move(tasks_);
}

void Tiler::tile_kernel(int ki, TilingChoice& choice) {
    const Kernel& kn = plan_.kernels[static_cast<std::size_t>(ki)];
    switch (kn.kind) {
        case KernelKind::conv:
            conv(ki, choice);
            break;
        case KernelKind::matmul:
            matmul(ki, choice);
            break;
        case KernelKind::elementwise:
        case KernelKind::transpose:  // slices of the output, each reading its input's runs, boxes or all of it
            if (kn.fused_with >= 0) fused_vector(ki, choice);
            else elementwise(ki, choice);
            break;
        case KernelKind::format:
        case KernelKind::reduce:
        case KernelKind::pool:
            rowwise(ki, choice);
            break;
        case KernelKind::concat:
            concat(ki, choice);
            break;
        case KernelKind::alias:
            choice.shape = "view (no task)";
            break;
        case KernelKind::attention:
            attention(ki, choice);
            break;
        case KernelKind::program:
        case KernelKind::collective:
            comm(ki, choice);
            break;
    }
}

void Tiler::finish_kernel(std::size_t k, TilingChoice& choice) {
    const Kernel& kn = plan_.kernels[k];
    tile_count_[k] = static_cast<int>(tasks_.size()) - first_tile_[k];
    mask_rows(kn, static_cast<std::size_t>(first_tile_[k]));
    for (std::size_t t = static_cast<std::size_t>(first_tile_[k]); t < tasks_.size(); ++t) {
        const bool cube = tasks_[t].core == CoreType::cube;
        tasks_[t].core_lo = cube ? kn.cores.cube_lo : kn.cores.vector_lo;
        tasks_[t].core_hi = cube ? kn.cores.cube_hi : kn.cores.vector_hi;
    }
    plan_vector_tasks(kn, static_cast<std::size_t>(first_tile_[k]));
    if (choice.est_cycles == 0 && tile_count_[k] > 0 && tasks_.back().core == CoreType::vector)
        choice.est_cycles =
            tasks_.back().est_cycles * static_cast<double>(ceil_div(tile_count_[k], std::max(1, chip_.vector.count)));
    choice.tiles = tile_count_[k];
}

// A kernel of a core group is tiled for that group's cores.
void Tiler::use_core_group(const Kernel& k) {
    const CoreRange& r = k.cores;
    if (r.cube_hi > full_chip_.cube.count || r.vector_hi > full_chip_.vector.count)
        throw InputError(
            fmt::format("{}: node '{}': cores cube [{}, {}) vector [{}, {}) but a die of chip '{}' has {} cube and "
                        "{} vector cores",
                        g_.file, g_.nodes[static_cast<std::size_t>(k.nodes[0])].name, r.cube_lo, r.cube_hi, r.vector_lo,
                        r.vector_hi, full_chip_.name, full_chip_.cube.count, full_chip_.vector.count));
    chip_.cube.count = r.cube_hi > 0 ? r.cube_hi - r.cube_lo : full_chip_.cube.count;
    chip_.vector.count = r.vector_hi > 0 ? r.vector_hi - r.vector_lo : full_chip_.vector.count;
}

const ForcedTiling* Tiler::forced(const Kernel& k) const {
    for (int n : k.nodes) {
        auto it = opt_.tiling.find(g_.nodes[static_cast<std::size_t>(n)].name);
        if (it != opt_.tiling.end()) return &it->second;
    }
    return nullptr;
}

// Where a cube kernel's output goes: in place for a fused consumer.
Space Tiler::cube_dst(int k) const {
    for (const Kernel& v : plan_.kernels)
        if (v.fused_with == k) return chip_.layout == CoreLayout::coupled ? Space::ub : Space::l2;
    return Space::hbm;
}

// Communication: programs on every vector core, collectives' steps.
void Tiler::comm(int ki, TilingChoice& choice) {
    const Kernel& k = plan_.kernels[static_cast<std::size_t>(ki)];
    const CommContext c{g_, mem_, chip_, opt_};
    std::vector<TileTask> ts = k.kind == KernelKind::program ? lower_moe_op(c, k, ki) : lower_collective(c, k, ki);
    choice.shape = k.kind == KernelKind::program
                       ? fmt::format("{} blocks of {}", ts.size(), ts.empty() ? "" : ts.front().program_name)
                       : fmt::format("{} steps on this rank", ts.size());
    for (TileTask& t : ts) choice.est_cycles = std::max(choice.est_cycles, t.est_cycles);
    for (TileTask& t : ts) tasks_.push_back(std::move(t));
}

void Tiler::too_many_tasks(const std::string& kernel, std::uint64_t tasks) const {
    throw InputError(
        fmt::format("{}: kernel {}: the graph would compile to {} or more tasks, more than the limit of {}; "
                    "use a smaller batch or smaller shapes",
                    g_.file, kernel, tasks, kMaxCompiledTasks));
}

// The share of a kernel's input bytes that an earlier kernel wrote and
// the write-back L2 still holds (the tensor fits half of it): those
// loads hit L2. Graph inputs and weights come from HBM the first time.
double Tiler::warm_input_share(const Kernel& k) const {
    const double l2 = timing::l2_capacity_bytes(chip_);
    double all = 0, warm = 0;
    for (int in : k.inputs) {
        const auto bytes = static_cast<double>(mem_.bytes(in));
        all += bytes;
        if (!T(in).is_const && producer_kernel(in) >= 0 && bytes <= l2 / 2) warm += bytes;
    }
    return all > 0 ? warm / all : 0.0;
}

// Cube kernels of the same kind that multiply the same input by
// constant weights of the same shape into outputs of the same shape
// (this one included): nothing orders them, so they run side by side.
i64 Tiler::kernels_alike(const Kernel& k) const {
    if (k.inputs.size() < 2 || !T(k.inputs[1]).is_const) return 1;
    i64 n = 0;
    for (const Kernel& o : plan_.kernels)
        if (o.core == CoreType::cube && o.kind == k.kind && o.inputs.size() >= 2 && o.inputs[0] == k.inputs[0] &&
            T(o.inputs[1]).is_const && T(o.inputs[1]).shape == T(k.inputs[1]).shape &&
            T(o.output).shape == T(k.output).shape)
            ++n;
    return std::max<i64>(1, n);
}

bool Tiler::read_by_a_kernel(int t) const {
    for (const Kernel& j : plan_.kernels) {
        if (std::find(j.inputs.begin(), j.inputs.end(), t) == j.inputs.end()) continue;
        // A view (a Reshape alias) runs no task: its readers read t.
        if (j.kind != KernelKind::alias || read_by_a_kernel(j.output)) return true;
    }
    return false;
}

int Tiler::producer_kernel(int t) const {
    for (std::size_t k = 0; k < plan_.kernels.size(); ++k)
        if (plan_.kernels[k].output == t) {
            if (plan_.kernels[k].kind != KernelKind::alias) return static_cast<int>(k);
            break;
        }
    // Through a view (a Reshape alias, a Slice read in place) the data is
    // still the source's.
    const Tensor& tt = T(t);
    if (tt.producer >= 0) {
        const Node& n = g_.nodes[static_cast<std::size_t>(tt.producer)];
        if (n.op == OpType::Reshape || views_[static_cast<std::size_t>(tt.producer)])
            return producer_kernel(n.inputs[0]);
    }
    return -1;
}

std::vector<TileTask> tile_kernels(const Graph& g, const KernelPlan& plan, const MemoryPlan& mem,
                                   const ChipParams& chip, const CompileOptions& opt,
                                   std::vector<TilingChoice>& choices) {
    return Tiler(g, plan, mem, chip, opt).run(choices);
}

}  // namespace npusim::compiler
