// Warnings for a task stream that runs on a chip it does not fill: its
// tasks of one core type can occupy at most k of the chip's N cores of that
// type (k distinct pinned cores plus one per stream of unpinned tasks, since
// a stream runs its tasks in order), fewer than its tasks and the cores could
// run at once. A
// stream written or compiled for ax300 (4 Cube cores) and run on a2 (24) is
// the usual case; the run is valid, just not what the chip could do.
#pragma once
#include <string>
#include <vector>

#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {

std::vector<std::string> stream_fit_warnings(const TaskStream& ts, const ChipParams& chip);

}  // namespace npusim
