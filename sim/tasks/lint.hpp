// `npusim lint`: finds over-synchronisation in a task stream (docs/design.md §1.1):
// event edges between tasks that share no data and that no true (RAW, WAR,
// WAW) dependence needs. Plain C++ on the TaskStream; knows no SystemC.
// The rules and an example report are in docs/lint.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/task.hpp"

namespace npusim {

// The data a task touches as the lint sees it: params.reads / params.writes,
// or, where a list is absent, derived from src/addr/bytes (reads) and
// dst/out_addr/out_bytes (writes); matmul reads (m·k + k·n) elements and
// writes m·n·2 bytes. `everything`: a side could not be determined (no
// regions and no address to derive them from), so the task is treated as
// reading and writing all memory.
struct LintRegions {
    std::vector<Region> reads;
    std::vector<Region> writes;
    bool everything = false;
};

LintRegions lint_regions(const Task& t);
// Same memory and intersecting address ranges (empty regions touch nothing).
// hbm and l2 are one global address space and alias each other.
bool regions_overlap(const Region& a, const Region& b);
// a and b conflict when one writes what the other reads or writes (RAW, WAR,
// WAW); a task that touches everything conflicts with every other task.
bool regions_conflict(const LintRegions& a, const LintRegions& b);

// One event edge: task `from` signals `event`, task `to` waits on it
// (indices into TaskStream::tasks).
struct LintEdge {
    EventIndex event = 0;
    std::uint32_t from = 0;
    std::uint32_t to = 0;
};

struct LintEventSummary {
    EventIndex event = 0;
    std::uint64_t edges = 0;      // signallers x waiters
    std::uint64_t redundant = 0;  // of those, over-synchronisation
    // All edges redundant, and removing them all at once (not only one by
    // one) keeps every true dependence ordered.
    bool removable = false;
};

struct LintReport {
    std::uint64_t tasks = 0;
    std::uint64_t events = 0;
    std::uint64_t event_edges = 0;   // signaller -> waiter pairs
    std::uint64_t stream_edges = 0;  // consecutive tasks of one stream
    std::uint64_t true_dependences = 0;  // ordered conflicting task pairs
    std::vector<std::uint32_t> conservative;      // tasks treated as touching everything
    std::vector<LintEdge> over_sync;              // by event, then waiter line, then signaller line
    std::vector<LintEventSummary> event_summary;  // events with at least one redundant edge, by event
    std::vector<std::string> deadlocks;           // cycles, events that never fire; analysis skipped
    std::vector<std::string> notes;               // informational, do not fail the check

    bool clean() const { return over_sync.empty() && deadlocks.empty(); }
};

// Throws InputError when the stream is too large for the reachability bitsets.
LintReport lint_task_stream(const TaskStream& ts);

// The human report (stdout of `npusim lint`) and the --json document. With
// `summary`, findings that differ only in which tasks of the same two ops
// they join are one line with a count (`npusim lint --summary`).
std::string lint_report_text(const TaskStream& ts, const LintReport& r, bool summary = false);
std::string lint_report_json(const TaskStream& ts, const LintReport& r);

}  // namespace npusim
