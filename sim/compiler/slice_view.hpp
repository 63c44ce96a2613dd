// A Slice that cuts one axis of a plain tensor keeps equal runs of its
// input's bytes; when every consumer is element-wise it need not copy
// them: its consumers read the runs where they are (a strided view, as a
// framework's narrow/view gives it), and the Slice itself has no task.
#pragma once
#include <cstdint>
#include <optional>

#include "compiler/graph.hpp"

namespace npusim::compiler {

// `rows` runs of `run` bytes, `pitch` bytes apart, from byte `first` of
// the input.
struct SliceRuns {
    std::uint64_t first = 0, run = 0, rows = 0, pitch = 0;
};

// The runs a Slice of plain `in` keeps when it cuts one axis with step 1;
// none for other Slices and other nodes.
std::optional<SliceRuns> slice_kept_runs(const Node& n, const Tensor& in);

// Whether Slice n is read in place: it keeps runs (above), its output is
// no graph output, and every consumer is an element-wise node on n's cores.
bool is_slice_view(const Graph& g, const Node& n);

}  // namespace npusim::compiler
