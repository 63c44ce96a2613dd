// Checks a task stream against the chip it is about to run on: core types
// present, pinned cores in range, memory spaces reachable, resident
// footprints that fit their buffers. Throws InputError naming the task.
#pragma once
#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {

void check_stream_fits_chip(const TaskStream& ts, const ChipParams& chip);
// The cross-rank fields (a task's rank, a copy's dst_rank/dst_addr, memory
// waits) against the chip's ranks; events may not cross ranks. Called by
// check_stream_fits_chip for a stream with cross-rank fields.
void check_cross_rank(const TaskStream& ts, const ChipParams& chip);


}  // namespace npusim
