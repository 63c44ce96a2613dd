// Schema rows of what a run beyond one die's hardware writes: the ranks of a
// System, the mesh and the functional memory, kernel programs, and what the
// compiler, a collective or an LLM step add.
#include "stats/stat_rows.hpp"

namespace npusim::stat_rows {

namespace {

void rank_keys(std::vector<StatSpec>& v) {
    Section(v, "ranks")
        .key("ranks.count", K::count, "ranks", M::whole, "ranks")
        .key("ranks.last", K::index, "rank", M::whole, "the rank whose last task ends last")
        .key("ranks.{end_min_ns,end_mean_ns}", K::ns, "ns", M::whole, "the earliest and the mean of the ranks' last task ends")
        .key("ranks.r<R>.total_ns", K::ns, "ns", M::whole, "the rank's last task end")
        .key("ranks.r<R>.tasks", K::count, "tasks", M::whole, "its tasks")
        .key("ranks.r<R>.{cube_utilization,vector_utilization}", K::fraction, "fraction", M::whole, "its `units.{cube,vector}.utilization` (0 without such cores)")
        .key("ranks.r<R>.hbm_bytes", K::bytes, "B", M::whole, "its `memory.hbm.read_bytes` + `memory.hbm.write_bytes`")
        .key("ranks.r<R>.hbm_addressed_bytes", K::bytes, "B", M::whole, "its `memory.hbm.addressed_bytes`")
        .key("rank_ops", K::list, "list", M::whole, "per op over the ranks, by start: `{name, ranks, start_ns, end_ns, mean_ns}`: earliest start and latest end on any rank, and the mean per rank of its span (its first task's start to its last task's end there)")
        .field("rank_ops[].{name,ranks,start_ns,end_ns,mean_ns}", K::object, "", "each op, as above")
        .key("kernel.{instances,ops,waits,sync_alls}", K::count, "", M::sum, "kernel programs: program tasks started, kernel API calls, times a program suspended, SyncAll barriers released")
        .key("phases.<phase>.order", K::index, "", M::whole, "kernel programs' phases, in the order they were first stamped")
        .key("phases.<phase>.{mean_ns,max_ns,end_mean_ns,end_max_ns}", K::ns, "ns", M::whole, "over every program call on every core of every rank: per call the time from the previous stamp (or the call's start), mean and longest, and when the phase ended, mean and latest");
}

void mesh_keys(std::vector<StatSpec>& v) {
    Section(v, "mesh")
        .key("mesh.planes.<p>.bytes", K::bytes, "B", M::whole, "payload sent on plane `<p>`, over every rank")
        .key("mesh.planes.<p>.{tx_busy_fraction,rx_busy_fraction}", K::fraction, "fraction", M::whole, "the share of the run the plane's senders (receivers) were busy, averaged over ranks")
        .key("mesh.planes.<p>.tx_held_ns", K::ns, "ns", M::whole, "how long receivers held the plane's senders, summed over ranks")
        .key("mesh.links.r<R>.p<P>.{tx_bytes,rx_bytes}", K::bytes, "B", M::whole, "every link: the bytes rank `<R>` sent and received on plane `<P>`")
        .key("mesh.links.r<R>.p<P>.{tx_busy_ns,rx_busy_ns}", K::ns, "ns", M::whole, "the time that link sent and received")
        .key("mesh.tiers.{intra,inter}.{writes,chunks,held_chunks}", K::count, "", M::whole, "per tier: writes, chunks, and chunks a receiver held")
        .key("mesh.tiers.{intra,inter}.{bytes,wire_bytes,header_bytes}", K::bytes, "B", M::whole, "the payload as carried, on the wire (with headers), and the headers")
        .key("mesh.tiers.{intra,inter}.backpressure_ns", K::ns, "ns", M::whole, "how long receivers held the tier's senders, summed")
        .key("mesh.{bytes,wire_bytes,header_bytes,local_bytes}", K::bytes, "B", M::whole, "the same over both tiers, and the bytes of writes a rank made to itself")
        .key("mesh.header_overhead", K::fraction, "fraction", M::whole, "header bytes / wire bytes")
        .key("mesh.backpressure_ns", K::ns, "ns", M::whole, "over both tiers")
        .key("mesh.{writes,chunks,local_writes}", K::count, "", M::whole, "writes over the mesh, their chunks, and writes a rank made to itself")
        .key("mesh.busiest_link_fraction", K::fraction, "fraction", M::whole, "the busiest link's busy time (the later of its directions) / the run")
        .key("units.mesh.utilization", K::fraction, "fraction", M::whole, "the share of the run every sender plane spent sending")
        .key("memory_model.{stale_reads,stale_blocks}", K::count, "", M::whole, "reads of blocks that had not landed, and their blocks (docs/supernode.md, \"Functional memory\")")
        .key("memory_model.{reads_checked,blocks_written,watches,pages}", K::count, "", M::whole, "reads checked, blocks written, watches made, pages of blocks made")
        .key("memory_model.stale_read_samples", K::list, "list", M::whole, "the first 20 stale reads")
        .field("memory_model.stale_read_samples[].{rank,address,core,time_ns}", K::object, "", "each: the reader's rank, the block's address, the core, when");
}

void workload_keys(std::vector<StatSpec>& v) {
    Section(v, "compile")
        .key("compile.kernels", K::count, "kernels", M::whole, "kernels after fusion (incl. FormatConvert kernels and alias kernels, which have no task)")
        .key("compile.tasks", K::count, "tasks", M::whole, "tasks in the stream")
        .key("compile.events", K::count, "events", M::whole, "declared events")
        .key("compile.format_converts", K::count, "tasks", M::whole, "FormatConvert tasks")
        .key("compile.format_convert_bytes", K::bytes, "B", M::whole, "the bytes they read")
        .key("compile.sync_edges_before_reduction", K::count, "edges", M::whole, "task dependences before the transitive reduction")
        .key("compile.sync_waits", K::count, "waits", M::whole, "waits in the stream")
        .key("compile.gm_region_bytes", K::bytes, "B", M::whole, "sum of the bytes of every task's `reads` and `writes` (every row of a strided region): the GM traffic the compiler planned before L2 hits")
        .key("compile.hbm_footprint_bytes", K::bytes, "B", M::whole, "what a die's HBM must hold for the graph, the sum of the three below (checked against `chip.hbm.size_gb`: over it is exit 2, or a warning with `workload.capacity` `warn`)", "56338256")
        .key("compile.hbm_weights_bytes", K::bytes, "B", M::whole, "its constants (weights; KV caches held as constants), padded to their layouts", "51220304")
        .key("compile.hbm_inputs_bytes", K::bytes, "B", M::whole, "its graph inputs", "301056")
        .key("compile.hbm_activations_peak_bytes", K::bytes, "B", M::whole, "the most produced tensors alive at once in the node order (each from the node that writes it to the last that reads it; outputs to the end; a Reshape view keeps its source alive), counted before fusion, so the intermediates of fused chains that never reach HBM count too: an upper estimate of what a runtime reusing freed memory needs", "4816896")
        .key("compile.cube_cores_planned", K::count, "cores", M::whole, "Cube cores the stream was planned for: the chip's, or fewer when `workload.passes.explore_cube_cores` kept a plan for fewer")
        .key("compile.vector_cores_planned", K::count, "cores", M::whole, "Vector cores the stream was planned for: the chip's, or fewer when `workload.passes.explore_vector_cores` kept a plan for fewer")
        .key("compile.rank_programs", K::count, "programs", M::whole, "a graph or LLM step on several ranks: distinct compiled rank programs (1 when every rank runs the same shapes; the other `compile.*` keys are rank 0's)");
    Section(v, "collective")
        .key("collective.{op,algorithm}", K::text, "text", M::whole, "`workload.op` and `workload.algorithm`")
        .key("collective.ranks", K::count, "ranks", M::whole, "ranks taking part")
        .key("collective.{slices,copy_cores,reduce_cores}", K::count, "", M::whole, "how each chunk was cut and where it runs")
        .key("collective.steps", K::count, "steps", M::whole, "dependent steps: ring N−1 (allreduce 2(N−1)), mesh 1 (allreduce 2)")
        .key("collective.step_latency_ns", K::ns, "ns", M::whole, "the latency each step is charged: the slowest tier any message crosses")
        .key("collective.bytes", K::bytes, "B", M::whole, "`workload.bytes`")
        .key("collective.sent_bytes_per_rank", K::bytes, "B", M::whole, "payload the busiest rank writes to other ranks")
        .key("collective.textbook_bytes_per_rank", K::number, "B", M::whole, "the payload a rank sends in the textbook algorithm, before padding (a real): allreduce 2(N−1)/N × bytes, the others (N−1)/N × bytes")
        .key("collective.wire_bytes_per_rank", K::bytes, "B", M::whole, "its DataBlocks and headers on the wire")
        .key("collective.rank_bandwidth_gbps", K::rate, "GB/s", M::whole, "the rate they drain at: planes × the tiers' plane bandwidth")
        .key("collective.{bandwidth_ns,bound_ns}", K::ns, "ns", M::whole, "wire bytes / that rate, and the bound ([collectives.md](collectives.md))")
        .key("collective.efficiency", K::fraction, "fraction", M::whole, "bound_ns / total_ns (1 = at the bound)");
    Section(v, "llm")
        .key("llm.{step_ns,tpot_ns}", K::ns, "ns", M::whole,
             "the step: from the first task to the last die's end; decode: time per output token (the step)")
        .key("llm.tokens_per_s_per_die", K::rate, "tokens/s", M::whole,
             "decode: `batch` / step; prefill: `batch` x `prompt_len` / step")
        .key("llm.layers", K::count, "layers", M::whole, "decoder layers run")
        .key("llm.layer_ns", K::ns, "ns", M::whole,
             "mean per layer: each layer from the previous layer's end (on the die that ends it last) to its own")
        .key("llm.layer_ends_ns", K::list, "list", M::whole,
             "each layer's end in ns, on the die that ends it last, in layer order (the run summary's per-layer table)")
        .key(
            "llm.op_time_shares.<kind>", K::fraction, "fraction", M::whole,
            "each kind's (`matmul`, `attention`, `dispatch`, `combine`, `other`) summed op time on a die (while any of an op's tasks runs on a core) over all of it, averaged over dies")
        .key("llm.rank_imbalance", K::ratio, "ratio", M::whole, "slowest die's end / mean die end")
        .key(
            "llm.microbatch_overlap", K::fraction, "fraction", M::whole,
            "with two micro-batches: the time both run tasks on a die's cores over the smaller one's busy time (each the union of its tasks' runs), averaged over dies")
        .key("llm.{weight_bytes_per_die,kv_cache_bytes_per_die}", K::bytes, "B", M::whole, "what the die holds")
        .key("llm.params.{total,active}", K::count, "parameters", M::whole,
             "from the config ([llm.md](llm.md#statistics))");
}

}  // namespace

void system_keys(std::vector<StatSpec>& v) {
    rank_keys(v);
    mesh_keys(v);
    workload_keys(v);
}

}  // namespace npusim::stat_rows
