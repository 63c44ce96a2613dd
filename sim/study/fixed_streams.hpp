// Fixed-mode runs of a response study (study.hpp "modes"): the stream each
// base combination compiles to, compiled once before the points run and run
// as it is on every changed chip. A core-count change runs it without its
// core pins (the dispatcher then places each task on the lowest free core),
// and so does its base.
#pragma once
#include <string>
#include <vector>

#include "study/points.hpp"
#include "study/study.hpp"

namespace npusim::study {

// DIR/streams/<s + 12 hex digits>.jsonl (or _unpinned.jsonl) of a point's
// base combination: named by the combination's values, its files' contents
// and the simulator's version, so a resumed sweep finds the streams it
// compiled and never reuses one compiled from something else.
std::string fixed_stream_path(const std::string& out_dir, const Study& s, const Point& p);

// Compiles the stream of every combination the fixed points among `points`
// need (children of `self`, at most `jobs` at a time) unless the file is
// there, and writes its unpinned copy. A combination that does not compile
// throws InputError naming it and the compiler's message
// (DIR/streams/<name>.log).
void compile_fixed_streams(const Study& s, const std::vector<Point>& points, const std::string& out_dir,
                           const std::string& self, unsigned jobs);

}  // namespace npusim::study
