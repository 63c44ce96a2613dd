// Kernel-by-kernel gating of a compiled task stream (docs/design.md §1.2): every
// task of a host op waits on the launch event of its submission batch
// ("launch:<op>#<b>", signalled by the host when the batch's descriptors
// are written), and signals the op's completion event ("end:<op>", counting
// its tasks), which the host watches. Tasks of CPU-subgraph ops (hetero)
// leave the stream: the host signals their events when the CPU op is done.
// A plain stream transformation; the compiler is not involved.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "host/host_plan.hpp"
#include "tasks/task.hpp"

namespace npusim::host {

constexpr EventIndex kNoEvent = UINT32_MAX;

struct GatedStream {
    TaskStream stream;
    // Per op: its submission batches (launch event, descriptors), in order.
    std::vector<std::vector<std::pair<EventIndex, std::uint32_t>>> batches;
    // Per op: the task indices (in `stream`) of each batch, for trace flows.
    std::vector<std::vector<std::vector<std::uint32_t>>> batch_tasks;
    std::vector<EventIndex> end_event;  // per op; kNoEvent without device tasks
    // Per CPU op: the events its removed tasks waited for (signalled by
    // others), and the events they signalled with how many signals.
    std::vector<std::vector<EventIndex>> cpu_waits;
    std::vector<std::vector<std::pair<EventIndex, std::uint32_t>>> cpu_signals;
};

// submit_batch: descriptors per submission; 0 = one submission per launch.
GatedStream gate_stream(const TaskStream& in, const HostPlan& plan, std::uint32_t submit_batch);

}  // namespace npusim::host
