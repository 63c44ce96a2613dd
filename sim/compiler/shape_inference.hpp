// Output shape and dtype of a graph node from its input tensors and
// attributes (docs/graph-format.md lists every op's rule). The graph reader
// uses it to fill in and check intermediate shapes; compiler passes may use
// it again after rewriting.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph.hpp"

namespace npusim::compiler {

// The shape of n's (single) output, computed from the shapes of its input
// tensors in g and its attributes. On failure returns {} and sets `error`
// to what is wrong, without the file/node prefix (the caller adds it);
// on success `error` is cleared. FormatConvert keeps its input's shape.
Shape infer_shape(const Graph& g, const Node& n, std::string& error);

// The dtype of n's output: that of its first input, except Quantize (its
// attr "dtype", default int8) and Dequantize (attr "dtype", default fp16).
// Mixed input dtypes where the op needs them equal are an error.
DType infer_dtype(const Graph& g, const Node& n, std::string& error);

// One axis a Slice node names: [begin, end) by step, bounds resolved
// (negative from the end) and clamped to the axis.
struct SliceAxis {
    int axis = 0;
    std::int64_t begin = 0, end = 0, step = 1;
};
// A Slice node's axes on input shape `in`, in attribute order; on bad
// attributes (an axis out of range or named twice, a step below 1, an empty
// range) returns {} and sets `error` (else clears it).
std::vector<SliceAxis> slice_axes(const Node& n, const Shape& in, std::string& error);

// numpy-style broadcast of two shapes; false when they are incompatible.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out);

}  // namespace npusim::compiler
