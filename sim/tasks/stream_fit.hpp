// Warnings for a task stream that runs on a chip it does not fill: its
// tasks of one core type are all pinned to k of the chip's N cores of that
// type, fewer than its tasks and the cores could run at once. Unpinned tasks
// are not counted against it: a stream orders only their issue, and each
// goes to whichever core of its type is idle, so they reach every core. A
// stream compiled for ax300 (4 Cube cores) and run on a2 (24) is the usual
// case; the run is valid, just not what the chip could do.
#pragma once
#include <string>
#include <vector>

#include "chip/chip_params.hpp"
#include "tasks/task.hpp"

namespace npusim {

std::vector<std::string> stream_fit_warnings(const TaskStream& ts, const ChipParams& chip);

}  // namespace npusim
