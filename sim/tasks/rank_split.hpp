// A cross-rank stream cut into one stream per rank (docs/task-streams.md,
// "Cross-rank streams"): each rank's die runs its own tasks, and ranks meet
// only through memory (copies with a dst_rank, memory waits).
#pragma once
#include <vector>

#include "tasks/task.hpp"

namespace npusim {

// `ranks` streams (a rank without tasks gets an empty one): each holds the
// rank's tasks in file order with their ids, its streams and events
// renumbered from 0. Check the stream with check_cross_rank first (events
// must not cross ranks).
std::vector<TaskStream> split_by_rank(const TaskStream& ts, int ranks);

}  // namespace npusim
