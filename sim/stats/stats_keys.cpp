// The rows of the statistics schema (stats_schema.hpp): every key a stats
// file can hold, section by section as docs/statistics.md shows them. The
// meanings are the docs' text: edit them here, then regenerate the doc
// (`npusim stats-reference --doc docs/statistics.md`).
#include "stats/stat_rows.hpp"

namespace npusim {
namespace stat_rows {
namespace {

void run_keys(std::vector<StatSpec>& v) {
    Section(v, "run")
        .key(
            "total_ps", K::ps, "ps", M::whole,
            "end of the last task, or of the host's last step when a host is modelled and ends later (the run length; `host.end_to_end_ns`); on several ranks the last task's end on any rank",
            "48987701")
        .key("total_ns", K::ns, "ns", M::whole, "`total_ps` / 1000", "48987.701")
        .key("total_cycles", K::cycles, "cycles", M::whole, "`total_ps` in core cycles", "48988")
        .key("clock_ghz", K::rate, "GHz", M::whole, "core clock used for every `_cycles` key", "1.0")
        .key(
            "version", K::text, "text", M::whole,
            "the npusim that made the run, as `npusim --version` prints it (project version and `git describe` at configure time)",
            "`0.16.0 (73fbe7d)`")
        .key("config", K::object, "", M::whole,
             "the resolved run document `{\"chip\": {...}, \"workload\": {...}}` ([`config`](#config))")
        .key(
            "engine.events", K::count, "events", M::whole,
            "several ranks or kernel programs: simulation events the run processed (task and pipe actions, memory flows, mesh chunks, kernel API calls): the speed figure's denominator")
        .key(
            "engine.events_by.{core,kernel_call,scalar,hbm_flow,l2_flow,delivery,mesh_chunk,host}", K::count, "events",
            M::whole,
            "`engine.events` by kind: a Cube or Vector core's actions (task starts, pipe stages' ends, kernel programs "
            "resumed), kernel API calls, the scalar cores' dispatch and event actions, transfers' HBM and L2 parts "
            "ending, transfers' bytes arriving at their cores, remote-write chunks on link planes, host-runtime steps: "
            "what a run's simulation time goes to")
        .key(
            "engine.windows", K::count, "windows", M::whole,
            "several ranks: stretches of simulated time the dies ran through one after another before any could reach another (docs/architecture.md, \"How time works\"); fewer is faster, and only this figure depends on `npusim run --lookahead`");
}

void unit_keys(std::vector<StatSpec>& v) {
    Section(v, "units.core")
        .key("units.{cube,vector}.count", K::count, "cores", M::sum, "number of cores of the type")
        .key("units.{cube,vector}.busy_cycles", K::cycles, "cycles", M::sum, "sum over the cores of task busy time: from the start on the core (after dispatch, including `task_start_cycles`) to the task's end")
        .key("units.{cube,vector}.utilization", K::fraction, "fraction", M::mean, "busy / (`total_ps` · count)")
        .key("units.{cube,vector}.replanned_tasks", K::count, "tasks", M::sum, "tasks whose tiling data (Cube plan, UB chunk: [task-streams.md](task-streams.md#tiling-data)) did not fit this chip (its buffers, fractal shape or `tile_kb`), so the core planned them itself; 0 when the stream was compiled for this chip")
        .key("units.scalar.count", K::count, "slots", M::sum, "`cores.scalar.count`")
        .key("units.scalar.busy_cycles", K::cycles, "cycles", M::sum, "sum of dispatch time: `dispatch_cycles` per task, plus `params.cycles` of scalar-kernel tasks")
        .key("units.scalar.utilization", K::fraction, "fraction", M::mean, "busy / (`total_ps` · count)");
    Section(v, "units.pipe")
        .key("units.<pipe>.count", K::count, "pipes", M::sum, "pipes of that name on the die")
        .key("units.<pipe>.busy_cycles", K::cycles, "cycles", M::sum, "sum over those pipes of stage time. A transfer stage counts from its request until delivery, including bandwidth wait and latency.")
        .key("units.<pipe>.utilization", K::fraction, "fraction", M::mean, "busy / (`total_ps` · count)")
        .key("units.<pipe>.bytes", K::bytes, "B", M::sum, "bytes the stage moved (see the list below)");
    Section(v, "units.memory")
        .key("units.hbm.utilization", K::fraction, "fraction", M::mean, "(`memory.hbm.read_bytes` + `memory.hbm.write_bytes`) / (`chip.hbm.bandwidth_gbps` · `total_ps`)")
        .key("units.l2.utilization", K::fraction, "fraction", M::mean, "(`memory.l2.hit_bytes` + `memory.l2.write_bytes`) / (`chip.l2.bandwidth_gbps` · `total_ps`)")
        .key("units.hbm.bound_fraction", K::fraction, "fraction", M::mean, "share of `total_ps` during which the transfers in flight wanted more than HBM's bandwidth (some moved below their engines' caps): the time more HBM bandwidth could save. 0 when the cores' GM ports bind first")
        .key("units.l2.bound_fraction", K::fraction, "fraction", M::mean, "the same for the L2's aggregate bandwidth");
    Section(v, "cores")
        .key("cores.<core>.busy_cycles", K::cycles, "cycles", M::sum, "task busy time on this core")
        .key("cores.<core>.utilization", K::fraction, "fraction", M::mean, "busy / `total_ps`")
        .key("cores.<core>.tasks", K::count, "tasks", M::sum, "tasks the core ran")
        .key("cores.<core>.closed_form_runs", K::count, "chunks", M::sum, "with `NPUSIM_CLOSED_FORM=1`: chunks of long tasks run in closed form (absent when none; [architecture](architecture.md#long-tasks-in-closed-form))")
        .key("cores.<core>.closed_form_tiles", K::count, "tiles", M::sum, "tiles those chunks covered")
        .key("cores.<core>.pipes.<pipe>.busy_cycles", K::cycles, "cycles", M::sum, "busy time of that pipe on this core");
    Section(v, "overlap")
        .key("overlap.cube_vector", K::fraction, "fraction", M::mean, "the ratio above", "0.9098")
        .key("overlap.cube_busy_cycles", K::cycles, "cycles", M::sum, "\\|U_cube\\|: time at least one cube core is busy", "47481")
        .key("overlap.vector_busy_cycles", K::cycles, "cycles", M::sum, "\\|U_vector\\|", "16356")
        .key("overlap.both_busy_cycles", K::cycles, "cycles", M::sum, "\\|U_cube ∩ U_vector\\|", "14882");
}

void memory_keys(std::vector<StatSpec>& v) {
    Section(v, "memory")
        .key(
            "memory.hbm.addressed_bytes", K::bytes, "B", M::sum,
            "the GM the run's tasks address: the union of the ranges they read and write (regions, and copies' and vector tasks' base addresses over their bytes; tasks without addresses add nothing), as laid out (padded fractal layouts, workspaces). On several ranks, summed over ranks (`ranks.r<R>.hbm_addressed_bytes` each). A compiled graph's estimate from its tensors is `compile.hbm_footprint_bytes`",
            "4161536")
        .key(
            "memory.hbm.read_bytes", K::bytes, "B", M::sum,
            "bytes read from `hbm`: the L2 lines reads missed, whole (a read of part of a line fills all of it), plus reads without addresses",
            "950272")
        .key(
            "memory.hbm.write_bytes", K::bytes, "B", M::sum,
            "bytes written to `hbm`: dirty L2 lines evicted (write-back) or cleaned while HBM was idle (eager write-back), plus writes without addresses",
            "0")
        .key("memory.l2.hit_bytes", K::bytes, "B", M::sum,
             "`hbm` read bytes that hit L2, plus all bytes read from space `l2`", "8129528")
        .key("memory.l2.miss_bytes", K::bytes, "B", M::sum,
             "`hbm` read bytes that missed L2 (the requested parts of the lines `memory.hbm.read_bytes` fills)",
             "947112")
        .key("memory.l2.write_bytes", K::bytes, "B", M::sum,
             "all GM writes: to `hbm` (write-back, write-allocate) and to space `l2`", "3211264")
        .key("memory.l2.hits", K::count, "lines", M::sum, "line lookups of reads that hit", "63840")
        .key("memory.l2.misses", K::count, "lines", M::sum, "line lookups of reads that missed (filled from HBM)",
             "7424")
        .key("memory.l2.write_hits", K::count, "lines", M::sum, "line lookups of writes to a resident line", "0")
        .key("memory.l2.write_misses", K::count, "lines", M::sum, "line lookups of writes that allocated a line",
             "25088")
        .key("memory.l2.evictions", K::count, "lines", M::sum,
             "valid lines evicted with their tag block (LRU with dynamic insertion)", "0")
        .key("memory.l2.dirty_evictions", K::count, "lines", M::sum,
             "evicted lines that were dirty, each written back to HBM", "0")
        .key("memory.l2.dirty_eviction_bytes", K::bytes, "B", M::sum,
             "bytes of those write-backs (part of `memory.hbm.write_bytes`)", "0")
        .key(
            "memory.l2.clean_bytes", K::bytes, "B", M::sum,
            "dirty lines written back early while HBM had nothing in flight (`chip.l2.eager_writeback`; part of `memory.hbm.write_bytes`)",
            "0")
        .key("memory.l2.dirty_resident_bytes", K::bytes, "B", M::sum,
             "dirty lines still in L2 at the end (never written back in the run)", "3211264")
        .key("memory.l2.hit_rate", K::fraction, "fraction", M::mean, "hit / (hit + miss); 0 without reads", "0.8957")
        .key("memory.transfers", K::count, "requests", M::sum,
             "transfer requests made to the memory system (one per tile per transfer stage)", "1280")
        .key("memory.l1.in_bytes", K::bytes, "B", M::sum, "cube MTE2 bytes, GM → L1", "7471008")
        .key("memory.l0.in_bytes", K::bytes, "B", M::sum, "MTE1 bytes, L1 → L0A/L0B", "65470464")
        .key("memory.l0c.out_bytes", K::bytes, "B", M::sum, "FixPipe bytes out of L0C, to GM or on-core", "1605632")
        .key("memory.ub.in_bytes", K::bytes, "B", M::sum,
             "vector MTE2 bytes into UB, from GM or L1. FixPipe writes into UB are not counted.", "1605632")
        .key("memory.ub.out_bytes", K::bytes, "B", M::sum, "vector MTE3 bytes out of UB, to GM or L1", "1605632");
}

void task_keys(std::vector<StatSpec>& v) {
    Section(v, "tasks")
        .key("tasks.count", K::count, "tasks", M::sum, "tasks in the stream", "64")
        .key("tasks.streams", K::count, "streams", M::sum, "distinct `stream` names", "8")
        .key("tasks.by_kernel.<kernel>", K::count, "tasks", M::sum,
             "tasks per kernel (`matmul`, `vector`, `copy`, `scalar`, `program`; only kernels present)",
             "matmul 32, vector 32")
        .key("tasks.dispatched", K::count, "tasks", M::sum, "tasks the scalar core dispatched", "64")
        .key(
            "tasks.dispatch_wait_cycles", K::cycles, "cycles", M::sum,
            "Σ (start − max(head, released)): waiting for a dispatch slot and a free core, plus `dispatch_cycles` itself",
            "171998")
        .key("events.count", K::count, "events", M::sum, "distinct event ids, declared or used", "32")
        .key("events.fired", K::count, "events", M::sum, "events that reached their count", "32")
        .key("events.signals", K::count, "signals", M::sum,
             "signals counted toward firing. Signals after an event fired are not counted.", "32")
        .key("events.wait_cycles", K::cycles, "cycles", M::sum,
             "Σ max(0, released − head): time stream heads spent waiting for events", "187551")
        .key("events.max_wait_cycles", K::cycles, "cycles", M::max,
             "the largest single task's event wait (on several ranks, the largest of any rank)", "6868");
}

}  // namespace
}  // namespace stat_rows

const std::vector<StatSpec>& stat_keys() {
    static const std::vector<StatSpec> rows = [] {
        using namespace stat_rows;
        std::vector<StatSpec> v;
        run_keys(v);
        unit_keys(v);
        memory_keys(v);
        task_keys(v);
        host_keys(v);
        path_keys(v);
        system_keys(v);
        return v;
    }();
    return rows;
}

}  // namespace npusim
