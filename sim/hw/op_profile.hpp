// Per-op figures of a run (docs/design.md §4.4): for each op name of the
// stream, when its tasks ran, on how many cores, how long they were busy,
// the bytes they moved through the GM port, the FLOPs they did, and what
// bound them. Built after the run from the per-task record (TaskTiming).
#pragma once

#include "hw/sim_context.hpp"

namespace npusim {

class Stats;

// `ops`: a list sorted by busy time (longest first), each
// {name, start_ns, end_ns, tasks, cores, busy_ns, compute_ns, transfer_ns,
// event_wait_ns, bytes, flops, bound}; and `roofline`: the chip's roofs
// {cube_flops_per_s, vector_flops_per_s, hbm_bytes_per_s, l2_bytes_per_s}.
void report_ops(Stats& s, const SimContext& ctx);

// Floating-point operations of one task: 2·m·n·k for a matmul, one per
// element for a vector task, none for a copy or scalar task. `rows_share`:
// of a task whose rows are known at run time (KernelParams::rows_table),
// the share that holds data on its rank (valid_row_share), as the cores
// run it.
double task_flops(const Task& t, double rows_share = 1.0);

}  // namespace npusim
