// Self-contained HTML reports (`npusim run --report OUT.html`, `npusim sweep
// --report`): one file that opens offline. The numbers are embedded as JSON
// and drawn by inline JavaScript as SVG; no external scripts, styles or fonts.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::report {

struct Slice {
    double start_us = 0, dur_us = 0;
    std::string name;
};

struct TrackActivity {
    std::string name;      // "cube0.m"
    std::string process;   // "die 0 (ax300)"
    double busy_us = 0;    // union of the track's slices
    std::vector<Slice> slices;  // sorted; merged when there were too many
};

// The `count` tracks of a trace (written by TraceWriter) with the most busy
// time. A track with more than `max_slices` slices has neighbouring slices
// merged, so the page stays small. Throws InputError if the file is unreadable.
std::vector<TrackActivity> busiest_tracks(const std::string& trace_file, std::size_t count,
                                          std::size_t max_slices = 2500);

// Up to `count` tracks for a report's timeline: the critical path first,
// then the busiest track of each kind of unit in turn (cube, vector,
// scalar, host threads, ...), so no kind crowds the others out (a split die
// has more Cube tracks than fit). Order within a kind: busiest first.
std::vector<TrackActivity> report_tracks(const std::string& trace_file, std::size_t count);

// A run: summary (with the --set overrides), per-unit utilisation, host
// figures, critical path, per-op table and roofline, and (when `trace_file`
// is not empty) a timeline coloured by op.
void write_run_report(const std::string& out_file, const nlohmann::json& stats, const std::string& trace_file,
                      const std::string& workload_label, const std::vector<std::string>& sets = {});

// A sweep folder (study.json, results.jsonl, points/*/stats.json): summary,
// one chart per metric, the results table and per-unit utilisation per point.
void write_sweep_report(const std::string& out_file, const std::string& sweep_dir);

// The page: `data` is embedded and drawn by the page's script.
std::string render_page(const std::string& title, const nlohmann::json& data);

}  // namespace npusim::report
