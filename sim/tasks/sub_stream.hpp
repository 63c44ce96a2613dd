// A part of a task stream run on its own: some of its tasks, as if what
// they wait for from the rest had already happened (their inputs ready).
#pragma once
#include <cstdint>
#include <vector>

#include "tasks/task.hpp"

namespace npusim {

// The tasks `keep` (indices into s.tasks, ascending) in their order and on
// their streams. An event keeps the signals of kept tasks; those of the
// others count as given already, so an event they alone would fire is no
// longer waited for. Refuses (std::invalid_argument) a stream that spans
// ranks or runs kernel programs: a part of one is not a die's work.
TaskStream sub_stream(const TaskStream& s, const std::vector<std::uint32_t>& keep);

}  // namespace npusim
