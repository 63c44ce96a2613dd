// Schema rows of what the run's timing record yields after the run: the
// critical path, what binds, the per-op table and the chip's roofs.
#include "stats/stat_rows.hpp"

namespace npusim::stat_rows {

namespace {

void critical_path_keys(std::vector<StatSpec>& v) {
    Section(v, "critical_path")
        .key("critical_path", K::object, "", M::whole, "the chain of steps that ended last (the fields below); on several ranks walked across them")
        .field("critical_path.total_ns", K::ns, "ns", "the run's end: `total_ns`, or `host.end_to_end_ns` for a host run")
        .field("critical_path.by_kind.<kind>", K::ns, "ns", "time on the path per kind; the kinds present add up to `total_ns`")
        .field("critical_path.segments", K::list, "list", "the path in time order, contiguous from 0: `{task, op, kind, start_ns, end_ns}`, plus `after` (why the step started when it did: `event E set by T`, `core busy with T`, `stream order after T`, `host`, `device task T`, `write of rank R task T landed`), `waited` (the event that released the task, if it waited for one; `memory` for a memory wait), `phase` (a kernel program's phase) and, on several ranks, `rank`")
        .field("critical_path.segments[].{task,op,kind,start_ns,end_ns,after,waited,phase,rank,stage}", K::object, "", "each segment, as above")
        .field("critical_path.segments_omitted", K::count, "segments", "segments past the first 10 000 left out of the list (`by_kind` still counts them)")
        .field("critical_path.ranks", K::list, "list", "runs on several ranks: `{rank, ns}` for each rank the path spends time on (idle left out), most time first; `--trace-ranks critical` traces the first 8")
        .field("critical_path.ranks[].{rank,ns}", K::object, "", "each rank on the path and its time there")
        .field("critical_path.host_stages.<stage>", K::ns, "ns", "host runs: the path's `host` time split by the host stage of the thread it follows (the launching thread, or the one that finished last): `frontend`, `infer`, `resize`, `launch`, `queue`, `drain`, `wait`, `cpu` as in `host.breakdown`, and `idle` where that thread waited for work from another host thread; adds up to `by_kind.host`. Host segments carry the same `stage`.");
    Section(v, "binds")
        .field("critical_path.by_resource.<resource>", K::ns, "ns", "the path's time per resource; adds up to `critical_path.total_ns`")
        .field("critical_path.binds", K::list, "list", "the same, most first: `{resource, ns, share, key}`, `key` the chip key that sets its capacity (`chip.cores.cube.gm_bytes_per_cycle`; `\"\"` for latency, sync wait and idle)")
        .field("critical_path.binds[].{resource,ns,share,key}", K::object, "", "each resource on the path, as above")
        .field("critical_path.segments[].resource", K::text, "", "each segment's resource")
        .field("ops[].resource", K::text, "", "per op, as above");
    Section(v, "what_would_help")
        .after("what_would_help.method", K::text, "text", "how the figures were made: `re-run with the resource at twice its capacity`")
        .after("what_would_help.binds", K::text, "text", "the resource whose doubling saves the most of the run (at least 1%; empty when none does)")
        .after("what_would_help.resources.<resource>.key", K::text, "text", "the chip key changed")
        .after("what_would_help.resources.<resource>.{from,to}", K::number, "", "its value before and in the re-run")
        .after("what_would_help.resources.<resource>.total_ns", K::ns, "ns", "the re-run's `total_ns`")
        .after("what_would_help.resources.<resource>.change", K::ratio, "fraction", "`total_ns` of the re-run / of the run − 1 (−0.10: 10% faster)")
        .after("what_would_help.resources.<resource>.error", K::text, "text", "the re-run's first line of output when it did not run (e.g. a value over the key's range)")
        .after("ops[].bound_resource", K::text, "text", "per op: the resource whose doubling saves the most of the op's busy time")
        .after("ops[].bound_resource_saving", K::fraction, "fraction", "how much of it (at least 1%)");
}

void op_keys(std::vector<StatSpec>& v) {
    Section(v, "ops")
        .key("ops", K::list, "list", M::last_rank, "one entry per op name of the stream (a task without an `op` counts under its kernel name), longest busy time first; on several ranks the rank that ends last")
        .field("ops[].name", K::text, "", "the op")
        .field("ops[].{start_ns,end_ns}", K::ns, "ns", "first start and last end of its tasks")
        .field("ops[].tasks", K::count, "tasks", "its tasks")
        .field("ops[].cores", K::count, "cores", "distinct cores its tasks ran on")
        .field("ops[].busy_ns", K::ns, "ns", "Σ task run time")
        .field("ops[].{compute_ns,transfer_ns}", K::ns, "ns", "Σ over its tasks of the busiest compute pipe's and the busiest transfer pipe's time")
        .field("ops[].event_wait_ns", K::ns, "ns", "time its tasks waited for events inside the op's span (waits before it began are the dataflow's order)")
        .field("ops[].bytes", K::bytes, "B", "bytes its transfer stages moved through the GM port (L2 hits and HBM)")
        .field("ops[].flops", K::count, "FLOP", "2·m·n·k per matmul, one per element of a vector task, none for copies")
        .field("ops[].bound", K::text, "", "`sync`: its cores sat idle over half its span and it waited longer than it ran; `latency`: no pipe busy for half its run (start-up, fill and drain, tier latency); else `memory` or `compute`, by the busier pipe class")
        .key("roofline", K::object, "", M::last_rank, "the chip's roofs (the fields below)")
        .field("roofline.cube_flops_per_s", K::rate, "FLOP/s", "every Cube core doing a fractal of MACs per cycle, two FLOPs each")
        .field("roofline.vector_flops_per_s", K::rate, "FLOP/s", "one op per fp16 lane per cycle")
        .field("roofline.{hbm_bytes_per_s,l2_bytes_per_s}", K::rate, "B/s", "the HBM's and the L2's bandwidth");
}

}  // namespace

void path_keys(std::vector<StatSpec>& v) {
    critical_path_keys(v);
    op_keys(v);
}

}  // namespace npusim::stat_rows
