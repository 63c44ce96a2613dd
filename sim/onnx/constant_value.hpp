// Values known at import time: initializers, Constant nodes and what the
// folder computes from them (shape subgraphs). Numbers are held as doubles
// (exact for the integers shapes use); a large constant keeps only its shape.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace npusim::onnx_import {

// Larger constants are not decoded: nothing that computes a shape is this big.
constexpr std::int64_t kMaxFoldElements = std::int64_t(1) << 20;

struct ConstValue {
    std::vector<std::int64_t> shape;
    int elem_type = ::onnx::TensorProto::FLOAT;
    bool has_data = false;     // false: shape only (a weight, or too large)
    std::vector<double> data;  // row-major, elements(shape) entries when has_data

    std::int64_t elements() const;
    std::int64_t int_at(std::size_t i) const;  // data[i] as an integer (saturating)
    std::vector<std::int64_t> ints() const;
};

std::int64_t saturating_int(double d);

// Bytes of one element of an ONNX data type; 0 for strings and complex.
std::size_t element_bytes(int type);

// Decodes a TensorProto (inline fields, raw_data or external data next to
// the model in `dir`). Data is decoded only for at most `max_elements`
// elements of a numeric type; otherwise the value keeps its shape only.
ConstValue decode_tensor(const ::onnx::TensorProto& t, const std::string& dir,
                         std::int64_t max_elements = kMaxFoldElements);

// An INT64 TensorProto holding `v` (fed back to ONNX shape inference).
::onnx::TensorProto encode_tensor(const std::string& name, const ConstValue& v);

}  // namespace npusim::onnx_import
