// Decomposed ops as exporters write them, recognised and replaced by the
// compiler's op (docs/onnx.md "Patterns"): GELU in its Erf and tanh forms,
// LayerNorm from ReduceMean/Sub/Pow/Add/Sqrt/Div(/Mul/Add), RMSNorm from
// Pow/ReduceMean/Add/Sqrt/Div(/Mul), SiLU from x·Sigmoid(x), HardSwish
// from x·HardSigmoid(x). A fused node has domain "npusim" and takes the
// place (and output) of the pattern's last node.
#pragma once
#include <map>
#include <string>

#include <onnx/onnx_pb.h>

#include "onnx/constant_value.hpp"

namespace npusim::onnx_import {

// Rewrites `g` in place; returns how many patterns were fused.
std::size_t fuse_patterns(::onnx::GraphProto& g, const std::map<std::string, ConstValue>& consts);

}  // namespace npusim::onnx_import
