// Constant folding at import time: the values of nodes whose inputs are all
// known (initializers, Constant nodes, earlier folds) or that only read a
// shape (Shape, Size). This is how exporters' shape subgraphs
// (Shape → Gather → Unsqueeze → Concat → Reshape, ConstantOfShape, Expand)
// become the plain attributes of the compiler's graph.
#pragma once
#include <cstdint>
#include <vector>

#include <onnx/onnx_pb.h>

#include "onnx/constant_value.hpp"

namespace npusim::onnx_import {

// One input of a node: its value if known, else only its shape (nullptr when
// even that is unknown).
struct Operand {
    const ConstValue* value = nullptr;
    const std::vector<std::int64_t>* shape = nullptr;
};

// Computes the first output of `n` into `out` (data and shape). `inferred`
// is ONNX shape inference's shape of that output, or nullptr. False when
// the op is not one the folder evaluates or an input it needs is unknown.
bool fold_node(const ::onnx::NodeProto& n, const std::vector<Operand>& in, const std::vector<std::int64_t>* inferred,
               int opset, ConstValue& out);

// Attribute readers shared with the op mapping.
std::int64_t attr_int(const ::onnx::NodeProto& n, const char* name, std::int64_t fallback);
double attr_float(const ::onnx::NodeProto& n, const char* name, double fallback);
std::vector<std::int64_t> attr_ints(const ::onnx::NodeProto& n, const char* name, std::vector<std::int64_t> fallback);
const ::onnx::AttributeProto* find_attr(const ::onnx::NodeProto& n, const char* name);

}  // namespace npusim::onnx_import
