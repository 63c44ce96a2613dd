// Output shapes libonnx's shape inference leaves open where npusim knows
// them: Einsum (libonnx 1.12 infers only its rank) and the com.microsoft
// ops exporters emit for fused transformer pieces (no schema in libonnx:
// no inference at all). The importer adds them as value_info between rounds
// of inference, so the shapes flow on to the nodes after.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace npusim::onnx_import {

// The known shape and element type of a tensor name, or false.
using ShapeLookup = std::function<bool(const std::string&, std::vector<std::int64_t>&, int&)>;

// Adds value_info for every output this module can complete and the graph
// does not know yet; returns how many it added.
int complete_shapes(::onnx::GraphProto& g, const ShapeLookup& known);

// Writes every implicit Einsum equation ("ij,jk") in its explicit form
// ("ij,jk->ik"): libonnx 1.12 infers an implicit one with capital letters
// as a scalar.
void make_einsum_explicit(::onnx::GraphProto& g);

// The com.microsoft op types whose output 0 has input 0's shape and type.
const std::vector<std::string>& shape_preserving_contrib_ops();

}  // namespace npusim::onnx_import
