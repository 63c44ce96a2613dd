// Reads and writes task-descriptor streams (JSON Lines, docs/design.md §4.3).
#pragma once
#include <iosfwd>
#include <string>

#include "tasks/task.hpp"

namespace npusim {

// Throws InputError naming FILE:LINE, the task, the key path and what was expected.
TaskStream read_task_stream(const std::string& file);
TaskStream parse_task_stream(std::istream& in, const std::string& file_label);

// One line per event declaration (count > 1) and per task, in a form
// read_task_stream accepts back unchanged.
void write_task_stream(const TaskStream& ts, std::ostream& out);

}  // namespace npusim
