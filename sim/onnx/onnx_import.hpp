// ONNX import (docs/onnx.md): an ONNX model file -> the compiler's graph
// document (docs/graph-format.md), as JSON text. Shapes come from ONNX shape
// inference with the inputs' symbolic dims bound; constant subgraphs are
// folded; every op that cannot be mapped is reported in one InputError.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace npusim::onnx_import {

struct ImportSummary {
    int opset = 0;
    std::size_t onnx_nodes = 0;   // in the model
    std::size_t folded = 0;       // computed at import (constant and shape subgraphs)
    std::size_t fused = 0;        // decomposed ops recognised (GELU, LayerNorm, ...)
    std::size_t graph_nodes = 0;  // in the graph document
    std::size_t consts = 0;       // const tensors declared
    std::map<std::string, std::int64_t> dims;  // the values the symbolic dims were bound to
};

// `dims`: "batch" binds the leading dim of every input whose leading dim is
// symbolic; any other name binds the symbolic dim of that name. A name the
// model does not have is an InputError with a did-you-mean (except batch =
// 1); so is a symbolic dim left without a value.
std::string import_model(const std::string& file, const std::map<std::string, std::int64_t>& dims,
                         ImportSummary* summary = nullptr);
// The same from bytes in memory; external data is looked for in `dir`.
std::string import_model_bytes(const std::string& bytes, const std::string& file, const std::string& dir,
                               const std::map<std::string, std::int64_t>& dims, ImportSummary* summary = nullptr);

// True for a file name ending in ".onnx" (any case).
bool is_onnx_file_name(const std::string& file);

// The ONNX op types mapped to compiler ops, and those only folded at import.
const std::vector<std::string>& mapped_onnx_ops();
const std::vector<std::string>& folded_onnx_ops();
// docs/onnx.md: what is imported and how (Markdown; `npusim import --list-ops`).
std::string onnx_reference();

}  // namespace npusim::onnx_import
