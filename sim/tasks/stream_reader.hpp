// Reads and writes task-descriptor streams (JSON Lines, docs/design.md §4.3).
#pragma once
#include <iosfwd>
#include <memory>
#include <string>

#include "tasks/task.hpp"

namespace npusim {

// Throws InputError naming FILE:LINE, the task, the key path and what was expected.
TaskStream read_task_stream(const std::string& file);
TaskStream parse_task_stream(std::istream& in, const std::string& file_label);

// One line per event declaration (count > 1) and per task, in a form
// read_task_stream accepts back unchanged.
void write_task_stream(const TaskStream& ts, std::ostream& out);
// The same lines piecewise: the event declarations, then one task's line.
std::string event_declaration_lines(const TaskStream& ts);
std::string task_line(const TaskStream& ts, const Task& t);

// parse_task_stream one line at a time (lines numbered from 1), so a
// writer can hand its lines over without holding the whole text.
class TaskStreamParser {
public:
    // own_output: the lines come from task_line() (the compiler's round
    // trip), so the JSON syntax checks meant for user files are skipped.
    explicit TaskStreamParser(const std::string& file_label, std::size_t expected_tasks = 0, bool own_output = false);
    ~TaskStreamParser();
    void line(const std::string& text);
    TaskStream finish();  // throws InputError when no task was read

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace npusim
