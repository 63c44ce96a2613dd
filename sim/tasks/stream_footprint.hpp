// How much global memory a task stream addresses: the union of the GM
// ranges its tasks read and write (regions, and the base addresses of
// copies and vector tasks over their bytes). Every run reports it
// (memory.hbm.addressed_bytes, docs/statistics.md); a compiled graph's own
// estimate from its tensors is compile.hbm_footprint_bytes. Tasks that name
// no addresses are not counted.
#pragma once
#include <cstdint>

#include "tasks/task.hpp"

namespace npusim {

std::uint64_t gm_addressed_bytes(const TaskStream& stream);

}  // namespace npusim
