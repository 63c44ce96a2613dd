// A synthetic task stream for speed and memory measurements: groups of one
// small matmul feeding two vector tasks through an event, spread over one
// stream per core so every core stays busy.
#pragma once
#include <cstdint>

#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {

TaskStream synthetic_stream(std::uint64_t tasks, const ChipParams& chip);

}  // namespace npusim
