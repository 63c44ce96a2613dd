// Reading an ONNX file into a ModelProto, and refusing (InputError, exit 2)
// what is not a model npusim can import: not protobuf, truncated, no graph,
// an opset outside 1..17 (1..10 converted to 11), external data that is not next to the model, or
// a model the ONNX checker rejects.
#pragma once
#include <string>

#include <onnx/onnx_pb.h>

namespace npusim::onnx_import {

constexpr int kMinOpset = 11;
constexpr int kMaxOpset = 17;
// Opsets from this one up to kMinOpset - 1 are converted to kMinOpset.
constexpr int kMinConvertedOpset = 1;
// Model files are read whole (protobuf's own limit is 2 GiB).
constexpr std::size_t kMaxModelFileBytes = std::size_t(2000) << 20;

struct LoadedModel {
    ::onnx::ModelProto model;
    std::string file;  // for messages
    std::string dir;   // external data is resolved against this folder
    int opset = 0;     // of the default (ai.onnx) domain, after conversion
    int converted_from = 0;  // the file's opset when it was converted, else 0
    std::string file_ops;    // the file's op types before conversion ("Upsample x1"), for messages
};

LoadedModel load_model_file(const std::string& file);
// The same from bytes already in memory (the fuzz target); `dir` as above.
LoadedModel load_model_bytes(const std::string& bytes, const std::string& file, const std::string& dir);

// "Add x2, Conv x3": the op types of the model's nodes, for messages.
std::string op_types_of(const ::onnx::ModelProto& model);

}  // namespace npusim::onnx_import
