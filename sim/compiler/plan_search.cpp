#include "compiler/plan_search.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/memory_budget.hpp"
#include "compiler/attention_layout.hpp"
#include "compiler/cost_model.hpp"
#include "compiler/fusion_pass.hpp"
#include "compiler/memory_plan.hpp"

namespace npusim::compiler {

namespace {

// Beyond this many Cube kernels the variants cost too much compile time
// (each variant is another full tiling of the graph).
constexpr long kMaxExploredCubeKernels = 16;

// Each fused attention kernel hands its score tiles between Cube and Vector
// through a workspace [heads, S, Sk] (addresses for the sync pass; the bytes
// stay in UB / L2). A tensor of the compiled graph only: the op table and
// the host never see it.
void add_attention_workspaces(Graph& g, KernelPlan& plan) {
    for (Kernel& k : plan.kernels) {
        if (k.kind != KernelKind::attention) continue;
        const bool sm = seq_major(g.nodes[static_cast<std::size_t>(k.nodes[0])]);
        const AttentionDims q = attention_dims(g.tensors[static_cast<std::size_t>(k.inputs[0])].shape, sm);
        // The keys: k / v of an Attention, the latent cache of an MLAttention.
        const AttentionDims v = attention_dims(
            g.tensors[static_cast<std::size_t>(k.inputs[std::min<std::size_t>(2, k.inputs.size() - 1)])].shape, sm);
        Tensor ws;
        ws.name = k.name + ".scores";
        ws.shape = {q.heads, q.seq, v.seq};
        ws.dtype = g.tensors[static_cast<std::size_t>(k.inputs[0])].dtype;
        ws.layout = Layout::ND;
        g.tensors.push_back(std::move(ws));
        k.workspace = static_cast<int>(g.tensors.size() - 1);
    }
}

DieTimer& die_timer() {
    static DieTimer timer;
    return timer;
}

// The plan's time on the die model, when a timer is registered and the plan
// runs on one die. Returns whether the die ran it.
bool time_on_die(PlannedGraph& v, const ChipParams& chip) {
    if (!die_timer()) return false;
    const TaskStream ts = plan_stream(v);
    if (ts.tasks.empty()) return false;
    v.makespan = die_timer()(ts, chip);
    return true;
}

// A search's candidate: a plan of a graph whose first plan ran on the die,
// so it runs there too.
void time_candidate(PlannedGraph& v, const ChipParams& chip) {
    if (!time_on_die(v, chip)) throw std::logic_error("plan search: a plan of one graph no longer runs on one die");
}

}  // namespace

DieTimer set_die_timer(DieTimer timer) {
    std::swap(die_timer(), timer);
    return timer;
}

PlannedGraph plan_graph(const Graph& laid, const ChipParams& chip, const CompileOptions& opt) {
    PlannedGraph v;
    v.g = laid;
    v.cubes = chip.cube.count;
    v.vectors = chip.vector.count;
    v.plan = form_kernels(v.g, opt, chip);
    add_attention_workspaces(v.g, v.plan);
    const MemoryPlan mem(v.g);
    v.tasks = tile_kernels(v.g, v.plan, mem, chip, opt, v.tilings);
    if (v.tasks.empty()) throw InputError(fmt::format("{}: the graph compiles to no tasks", v.g.file));
    // The tiles exist; the sync plan and the stream are still to come.
    check_memory_budget(fmt::format("{}: compiling its {} tasks", v.g.file, v.tasks.size()),
                        static_cast<std::uint64_t>(v.tasks.size()) * kCompileBytesPerTask,
                        "make the graph smaller with a lower --set workload.batch=N or --set workload.dims.NAME=N, or "
                        "force fewer tiles with --set workload.tiling.NODE={\"tiles\": N}");
    v.sync = insert_sync(v.tasks, v.plan, opt.sync);
    v.where = place_tasks(v.tasks, v.sync.preds, chip);
    return v;
}

namespace {

// The core counts a search over fewer cores of a kind plans for: every
// `step` below the chip's `all` down to `step` (every count below 8 cores),
// and not below `pinned`, the highest core a kernel is pinned to (a
// micro-batch stream keeps its cores). The same counts on every chip, so a
// chip with more cores tries every count a smaller one tried.
int core_step(int all) { return all < 8 ? 1 : 4; }

std::vector<int> fewer_cores(int all, int pinned) {
    const int step = core_step(all);
    std::vector<int> counts;
    for (int c = (all - 1) / step * step; c >= std::max(step, pinned); c -= step) counts.push_back(c);
    return counts;
}

// The highest core of `type` a kernel is pinned to (0: none).
int pinned_cores(const KernelPlan& plan, CoreType type) {
    int hi = 0;
    for (const Kernel& k : plan.kernels)
        hi = std::max(hi, type == CoreType::cube ? k.cores.cube_hi : k.cores.vector_hi);
    return hi;
}

// Tasks per kernel: two plans cut alike differ only in the cores they use.
std::vector<std::size_t> tile_counts(const PlannedGraph& v) {
    std::vector<std::size_t> n(v.plan.kernels.size(), 0);
    for (const TileTask& t : v.tasks) ++n[static_cast<std::size_t>(t.kernel)];
    return n;
}

// The Vector tiler cuts a kernel by the vector cores it has (tiles of a
// size per core, waves ahead of a Cube consumer, the scalar cores'
// dispatch): a chip with more of them cuts finer, which can end later. So
// the graph is also planned for fewer vector cores (fewer_cores) and each
// plan cut otherwise than those before it runs on the die of the whole
// chip. A chip with more vector cores so tries the cuts of a smaller one.
// Returns the plan for fewer that ends first (of equal ones, the one for
// the fewest cores) when it ends no later than `first`, else nothing.
std::optional<PlannedGraph> explore_vector_cores(const Graph& laid, const ChipParams& chip, const CompileOptions& opt,
                                                 const PlannedGraph& first) {
    std::set<std::vector<std::size_t>> cuts{tile_counts(first)};
    std::optional<PlannedGraph> best;
    for (int c : fewer_cores(chip.vector.count, pinned_cores(first.plan, CoreType::vector))) {
        ChipParams less = chip;
        less.vector.count = c;
        PlannedGraph v = plan_graph(laid, less, opt);
        if (!cuts.insert(tile_counts(v)).second) continue;
        time_candidate(v, chip);
        if (v.makespan <= (best ? best->makespan : first.makespan)) best = std::move(v);
    }
    return best;
}

// Planned for every Cube core, a kernel's tiling sees only its own
// estimate: one wave of larger tiles can beat two of smaller ones there and
// lose in the graph, where coarser tiles start later behind their
// producers. So the graph is also planned for fewer Cube cores
// (fewer_cores, with the vector cores `best` is planned for): a chip with
// more cores tries every plan a smaller one tried and keeps the same one
// unless a plan for its extra cores ends sooner (no margin: a margin would
// let a chip with more cores keep a plan a smaller chip beat). The plan
// whose run on the die ends first goes (on a tie, the one on fewer cores);
// `best` becomes it.
void explore_cube_cores(const Graph& laid, const ChipParams& chip, const CompileOptions& opt, PlannedGraph& best,
                        std::vector<std::string>& notes) {
    const int all = chip.cube.count, pinned = pinned_cores(best.plan, CoreType::cube);
    std::vector<PlannedGraph> tried;
    double fastest = best.makespan;
    // Each Cube core runs its tasks one after another, and no tiling of a
    // MatMul or ungrouped conv has less M-pipe work than the kernel whole
    // (TilingChoice::m_floor_cycles): no plan on c cores ends before that
    // work spread over them. Once that is beyond the fastest, so it is for
    // fewer cores: they are not planned.
    double m_work = 0;
    for (const TilingChoice& tc : best.tilings) m_work += tc.m_floor_cycles;
    const std::vector<int> counts = fewer_cores(all, pinned);
    std::size_t planned = 0;
    for (; planned < counts.size() && m_work / counts[planned] <= fastest; ++planned) {
        ChipParams less = chip;
        less.cube.count = counts[planned];
        less.vector.count = best.vectors;
        PlannedGraph v = plan_graph(laid, less, opt);
        time_candidate(v, chip);
        fastest = std::min(fastest, v.makespan);
        tried.push_back(std::move(v));
    }
    const double all_cores = best.makespan;
    for (PlannedGraph& v : tried)  // fewest cores last: they win ties
        if (v.makespan <= fastest) best = std::move(v);
    if (best.cubes < all)
        notes.push_back(
            fmt::format("explore cube cores: planned for {} of the {} cube cores (simulated {:.0f} "
                        "cycles, {:.1f}% fewer than for all {}; tried {} counts from {} down to {}{})",
                        best.cubes, all, best.makespan, (1 - best.makespan / all_cores) * 100, all, planned,
                        counts.front(), counts[planned - 1],
                        planned < counts.size()   ? ": fewer cores end later by their Cube work alone"
                        : pinned > core_step(all) ? fmt::format(": cores up to {} are pinned to a stream", pinned)
                                                  : std::string()));
}

// The tiler chooses each Cube kernel's block counts by the kernel's own
// estimate; what its neighbours make of them (a conversion it waits
// for, a consumer waiting for its last rows, a kernel beside it) only
// the whole plan's run shows: a larger buffer can let a plan win whose
// every tile reads all rows of A. So each Cube kernel's runners-up and
// the counts that move fewer bytes (kernel order, each kept if the die
// runs the whole plan faster) are tried with the plan found so far, on
// every kernel of the same dims at once: kernels alike run side by side,
// and one of them alone in coarser tiles frees too few cores to show.
void search_cube_plans(const Graph& laid, const ChipParams& chip, const CompileOptions& opt, PlannedGraph& best,
                       std::vector<std::string>& notes) {
    ChipParams c = chip;
    c.cube.count = best.cubes;
    c.vector.count = best.vectors;
    CompileOptions kept = opt;
    const std::vector<TilingChoice> first = best.tilings;
    std::set<std::string> done;                            // dims already searched
    const auto searchable = [&](const TilingChoice& tc) {  // a kernel the tiler searched, with plans to try
        return !tc.runners_up.empty() || !tc.fewer_bytes.empty();
    };
    for (const TilingChoice& tc : first) {
        if (!searchable(tc) || !done.insert(tc.dims).second) continue;
        // Searched kernels of the same dims take each plan together.
        const auto alike_to = [&](const TilingChoice& other) { return other.dims == tc.dims && searchable(other); };
        const auto alike = std::count_if(first.begin(), first.end(), alike_to);
        // Also the counts that move fewer bytes (where the estimate
        // misjudges traffic, only the model tells).
        std::vector<TilingChoice::Blocks> tries = tc.runners_up;
        for (const TilingChoice::Blocks& b : tc.fewer_bytes)
            if (std::find(tries.begin(), tries.end(), b) == tries.end()) tries.push_back(b);
        for (const TilingChoice::Blocks& b : tries) {
            // Coarser tiles are tried for a kernel alone too: fewer
            // waves of a lone kernel can end sooner.
            CompileOptions o = kept;
            for (const TilingChoice& other : first)
                if (alike_to(other)) o.tiling[other.node] = ForcedTiling{b.m, b.n, 0, b.k, true};
            PlannedGraph v = plan_graph(laid, c, o);
            time_candidate(v, chip);
            // The model's time as it says: no margin.
            if (v.makespan < best.makespan) {
                notes.push_back(fmt::format(
                    "search cube plans: {}{} as {} x {}{} blocks (simulated {:.0f} cycles, "
                    "{:.1f}% fewer)",
                    tc.kernel, alike > 1 ? fmt::format(" and {} alike", alike - 1) : "", b.m, b.n,
                    b.k > 1 ? fmt::format(" x {}", b.k) : "", v.makespan, (1 - v.makespan / best.makespan) * 100));
                best = std::move(v);
                kept = std::move(o);
            }
        }
    }
}

}  // namespace

PlannedGraph plan_best(const Graph& laid, const ChipParams& chip, const CompileOptions& opt,
                       std::vector<std::string>& notes) {
    PlannedGraph best = plan_graph(laid, chip, opt);
    const auto cube_kernels = std::count_if(best.plan.kernels.begin(), best.plan.kernels.end(),
                                            [](const Kernel& k) { return k.core == CoreType::cube; });
    if (cube_kernels == 0 || cube_kernels > kMaxExploredCubeKernels ||
        !(opt.explore_cube_cores || opt.search_cube_plans || opt.explore_vector_cores))
        return best;
    // Every plan the searches compare runs on the die model: without one,
    // or for a graph that waits on other ranks, the tiler's plan stands.
    if (!time_on_die(best, chip)) {
        notes.push_back(die_timer()
                            ? "plan searches: the graph waits on other ranks or runs kernel programs, "
                              "which one die cannot run alone: the tiler's plan"
                            : "plan searches: no die model registered (compiler::set_die_timer): the tiler's plan");
        return best;
    }
    // The Cube searches start from the tiler's plan for every vector core
    // and, when a plan for fewer of them ends no later, from that one too
    // (each search keeps only what ends sooner from where it starts): the
    // searched plan that ends first goes (on a tie, the one for every
    // vector core).
    const std::optional<PlannedGraph> fewer =
        opt.explore_vector_cores ? explore_vector_cores(laid, chip, opt, best) : std::nullopt;
    const auto searched = [&](PlannedGraph p, std::vector<std::string>& n) {
        if (opt.explore_cube_cores) explore_cube_cores(laid, chip, opt, p, n);
        if (opt.search_cube_plans) search_cube_plans(laid, chip, opt, p, n);
        return p;
    };
    const double all_vectors = best.makespan;
    const std::size_t own_notes = notes.size();
    best = searched(std::move(best), notes);
    if (fewer) {
        std::vector<std::string> fewer_notes{
            fmt::format("explore vector cores: planned for {} of the {} vector cores (simulated {:.0f} cycles, {:.1f}% "
                        "fewer than for all {})",
                        fewer->vectors, chip.vector.count, fewer->makespan, (1 - fewer->makespan / all_vectors) * 100,
                        chip.vector.count)};
        PlannedGraph v = searched(*fewer, fewer_notes);
        if (v.makespan < best.makespan) {
            best = std::move(v);
            notes.resize(own_notes);
            notes.insert(notes.end(), fewer_notes.begin(), fewer_notes.end());
        }
    }
    return best;
}

}  // namespace npusim::compiler
