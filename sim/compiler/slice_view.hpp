// A Slice that cuts one axis of a plain tensor keeps equal runs of its
// input's bytes; when its consumers can read them where they are (below)
// it need not copy them: they read the strided view a framework's narrow
// or view gives a kernel, and the Slice itself has no task.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/graph.hpp"

namespace npusim::compiler {

// `rows` runs of `run` bytes, `pitch` bytes apart, from byte `first` of
// the input; `last_axis`: the cut is on the last axis (a run is a row of
// the output's last axis, so the output is a plain tensor whose rows are
// `pitch` apart).
struct SliceRuns {
    std::uint64_t first = 0, run = 0, rows = 0, pitch = 0;
    bool last_axis = false;
};

// The runs a Slice of plain `in` keeps when it cuts one axis with step 1;
// none for other Slices and other nodes.
std::optional<SliceRuns> slice_kept_runs(const Node& n, const Tensor& in);

// Whether Slice n is read in place: it keeps runs (above), its output is
// no graph output, and every consumer on n's cores reads it where it is:
// an element-wise node (its tiles read the runs behind their elements),
// or, for a cut of the last axis, an attention (it reads its operands'
// rows through the memory plan, which knows their pitch) directly or
// through Reshapes that keep the last axis.
bool is_slice_view(const Graph& g, const Node& n);
// is_slice_view of every node, by node index.
std::vector<bool> slice_views(const Graph& g);

}  // namespace npusim::compiler
