// What the files that map ONNX op types share (onnx/op_mapping.cpp,
// onnx/elementwise_mappings.cpp, onnx/tensor_mappings.cpp): small shape
// helpers, the common one-node mappings, and each file's table of op type ->
// mapping. Internal to the onnx layer.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "onnx/fold.hpp"
#include "onnx/op_mapping.hpp"

namespace npusim::onnx_import {

std::int64_t product(const Shape& s, std::size_t from, std::size_t to);
ojson ints_json(const Shape& s);
int norm_axis(std::int64_t a, std::size_t rank);

// Reshape `x` to `shape` (skipped when it already has it); returns the tensor.
std::string reshaped(const MapContext& c, const std::string& x, const Shape& from, const Shape& to,
                     const std::string& suffix);
// One graph node `op` of the node's input(s), to its output.
std::string unary(MapContext& c, const char* op);
std::string binary(MapContext& c, const char* op);
// The rows the Softmax family (Softmax, LogSoftmax, Hardmax) works along:
// from opset 13 one axis (default -1); before, every dim from `axis`
// (default 1) on, as one row of a 2-D view (then `tensor` is that view).
// False when the axis is out of range.
struct SoftmaxRows {
    std::string tensor;
    Shape shape;
    int axis = -1;  // in `shape`, from 0
};
bool softmax_rows(const MapContext& c, SoftmaxRows& r);

// Input i in the simulated dtype of input `like`: itself, or a Cast of it.
std::string same_dtype(const MapContext& c, std::size_t i, std::size_t like);

using MapFn = std::function<std::string(MapContext&)>;
struct Mapping {
    MapFn fn;
    const char* becomes;  // for docs/onnx.md
};
using MappingTable = std::map<std::string, Mapping>;

// Element-wise ops beyond the core set: math stand-ins, comparisons,
// logic, casts, quantised MatMul/Conv (onnx/elementwise_mappings.cpp).
const MappingTable& elementwise_mappings();
// Data movement and structure: Split, Einsum, Expand, Tile, Trilu, CumSum,
// the gathers, depth/space, losses (onnx/tensor_mappings.cpp).
const MappingTable& tensor_mappings();
// com.microsoft ops, keyed "com.microsoft:OpType" (onnx/contrib_mappings.cpp).
const MappingTable& contrib_mappings();

}  // namespace npusim::onnx_import
