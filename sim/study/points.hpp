// The points of a study: every combination of the axis values ("grid", first
// axis slowest) or the i-th values of every axis together ("zip"). Each point
// has a stable id derived from its axis values alone, so results stay
// attached to the point when axes gain values or the order of points changes.
#pragma once
#include <string>
#include <vector>

#include "study/study.hpp"

namespace npusim::study {

struct Point {
    std::size_t index = 0;  // position in the expansion (0-based)
    std::string id;         // "p" + 12 hex digits of a hash of `values`
    ojson values = ojson::object();  // axis path -> value, in axis order

    // The --set arguments of this point: the study's "set", then the axes.
    std::vector<std::string> set_args(const Study& s) const;
    // "buffers.ub_kb=128 hbm.bandwidth_gbps=800": each axis by the shortest
    // suffix of two or more segments no other axis ends with.
    std::string label() const;
};

std::vector<Point> expand_points(const Study& s);

// Same values (in any key order) -> same id, on any machine.
std::string point_id(const ojson& values);

}  // namespace npusim::study
