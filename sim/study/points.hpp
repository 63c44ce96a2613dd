// The points of a study: every combination of the axis values ("grid", first
// axis slowest) or the i-th values of every axis together ("zip"). Each point
// has a stable id derived from its axis values alone, so results stay
// attached to the point when axes gain values or the order of points changes.
#pragma once
#include <string>
#include <vector>

#include "study/study.hpp"

namespace npusim::study {

// A response study's points (study.hpp): for every base point (chip x
// workload x axes) and mode, the base run and one run per change value.
// Their `values` hold, besides the axes, "chip" and "workload" (entry names),
// "change" (the changed path, "" for the base run), "value" (as written),
// "applied" (the value set), "mode" and, in fixed mode, "stream" ("pinned",
// or "unpinned" for a core-count change and its base: a compiled stream pins
// each task to a core index the changed chip may not have).
struct Point {
    std::size_t index = 0;  // position in the expansion (0-based)
    std::string id;         // "p" + 12 hex digits of a hash of `values`
    ojson values = ojson::object();  // axis path -> value, in axis order

    std::size_t chip = 0, workload = 0;  // entries of Study::chips / workloads
    std::size_t base = 0;                // index of its base point (itself for a base run)
    std::size_t base_key = 0;            // which chip x workload x axes combination (fixed streams are per key)
    Mode mode = Mode::recompiled;
    bool unpinned = false;
    std::string change;                  // "" for a base run
    ojson applied;                       // the change's value as set

    // The --set arguments of this point: the study's "set", the entries'
    // own, the axes, then the change; a fixed run keeps only chip keys (the
    // workload's applied when its stream was compiled).
    std::vector<std::string> set_args(const Study& s) const;
    // The --set arguments its base combination's stream is compiled with.
    std::vector<std::string> compile_set_args(const Study& s) const;
    bool is_base() const { return change.empty(); }
    // "buffers.ub_kb=128 hbm.bandwidth_gbps=800": each axis by the shortest
    // suffix of two or more segments no other axis ends with.
    std::string label() const;
};

std::vector<Point> expand_points(const Study& s);

// Same values (in any key order) -> same id, on any machine.
std::string point_id(const ojson& values);

}  // namespace npusim::study
