// Schema rows of the host runtime (workload.host_mode other than off;
// docs/host.md, "Statistics"). A host drives one die: nothing here is merged.
#include "stats/stat_rows.hpp"

namespace npusim::stat_rows {

void host_keys(std::vector<StatSpec>& v) {
    Section(v, "host")
        .key("host.mode", K::text, "text", M::whole, "`workload.host_mode`")
        .key("host.dynamic_shapes", K::flag, "", M::whole, "`workload.dynamic_shapes`, 0 or 1")
        .key("host.submit_batch", K::count, "launches", M::whole, "`workload.submit_batch`")
        .key("host.end_to_end_ns", K::ns, "ns", M::whole, "time from 0 until the host has finished its last step and the device its last task: max(`host.host_end_ns`, `host.device_end_ns`)")
        .key("host.end_to_end_cycles", K::cycles, "cycles", M::whole, "the same in core cycles")
        .key("host.{host_end_ns,device_end_ns}", K::ns, "ns", M::whole, "when the host finished its last step, and the device its last task")
        .key("host.first_launch_ns", K::ns, "ns", M::whole, "when the first launch call finished")
        .key("host.device_busy_ns", K::ns, "ns", M::whole, "length of the union of all task intervals [start, end) on all cube and vector cores")
        .key("host.device_idle_fraction", K::fraction, "fraction", M::whole, "1 − `device_busy_ns` / `end_to_end_ns`: the share of the run in which no core was busy, including the time before the first launch")
        .key("host.{ops,views,cpu_ops,launches}", K::count, "", M::whole, "host ops, views among them, ops run on CPU threads, kernel launches")
        .key("host.{submissions,descriptors}", K::count, "", M::whole, "descriptor submissions and the descriptors they carried")
        .key("host.submitted_bytes", K::bytes, "B", M::whole, "what the submissions carried")
        .key("host.{value_dependent_ops,drains}", K::count, "", M::whole, "value-dependent ops, drains")
        .key("host.drain_ns", K::ns, "ns", M::whole, "time spent draining")
        .key("host.{compute_dependent_ops,waits}", K::count, "", M::whole, "compute-dependent ops, waits")
        .key("host.wait_ns", K::ns, "ns", M::whole, "time spent waiting")
        .key("host.copies", K::count, "copies", M::whole, "device ↔ host copies (values, shapes, CPU operands)")
        .key("host.copied_bytes", K::bytes, "B", M::whole, "what they copied")
        .key("host.peak_device_memory_bytes", K::bytes, "B", M::whole, "resident + pool peak")
        .key("host.memory.{resident_bytes,pool_peak_bytes,pool_reserved_bytes,live_at_end_bytes,pool_segments_bytes}", K::bytes, "B", M::whole, "the pool: resident tensors, its peak in use, what it reserved, what was still allocated at the end, its segments' bytes")
        .key("host.memory.{allocations,frees,pool_grows}", K::count, "", M::whole, "the pool's allocations and frees, and driver allocations of pool segments")
        .key("host.threads.count", K::count, "threads", M::whole, "host threads")
        .key("host.threads.<thread>.busy_ns", K::ns, "ns", M::whole, "busy time of the host thread (waits are not busy)")
        .key("host.threads.<thread>.utilization", K::fraction, "fraction", M::whole, "busy / end-to-end")
        .key("host.threads.<thread>.stages.<stage>_ns", K::ns, "ns", M::whole, "busy time of that thread per stage")
        .key("host.stages.<stage>.busy_ns", K::ns, "ns", M::whole, "busy time per stage over all threads: `prepare`, `infer`, `resize`, `alloc`, `launch`, `submit`, `free`, `sync`, `copy`, `cpu`")
        .key("host.cpu.{busy_ns,device_overlap_ns}", K::ns, "ns", M::whole, "hetero only: CPU-op compute time, and the part of it during which some core was busy")
        .key("host.breakdown.<group>_ns", K::ns, "ns", M::whole, "host-thread time by stage group, waits included: `frontend`, `infer`, `resize`, `launch`, `queue`, `drain`, `wait`, `cpu` ([host.md](host.md#where-host-time-goes))")
        .key("host.worker_wait", K::text, "text", M::whole, "the wait policy (`chip.host.worker_wait`)")
        .key("host.wakeups", K::count, "pops", M::whole, "pops that woke an idle thread")
        .key("host.queue_full_waits", K::count, "pushes", M::whole, "back-pressure: pushes that found a full queue")
        .key("host.queue_full_ns", K::ns, "ns", M::whole, "the time they waited")
        .key("host.cores.count", K::count, "cores", M::whole, "host cores")
        .key("host.cores.peak_demand", K::count, "threads", M::whole, "the most on-core steps and spinners at once")
        .key("host.cores.oversubscribed_ns", K::ns, "ns", M::whole, "time with more of them than cores");
}

}  // namespace npusim::stat_rows
