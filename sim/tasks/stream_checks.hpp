// Checks a task stream against the chip it is about to run on: core types
// present, pinned cores in range, memory spaces reachable, resident
// footprints that fit their buffers. Throws InputError naming the task.
#pragma once
#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {

void check_stream_fits_chip(const TaskStream& ts, const ChipParams& chip);

}  // namespace npusim
