// Einsum equations: "ij,jk->ik", with "..." for broadcast dims (aligned
// right) and the implicit form (no "->": the letters that appear once, in
// alphabetical order). Used by the importer's shape completion (libonnx
// 1.12 infers only the output's rank) and by the Einsum mapping.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace npusim::onnx_import {

struct EinsumTerms {
    std::vector<std::string> in;  // one letter per dim of each operand ("..." expanded)
    std::string out;
};

// Parses `eq` for operands of the given ranks; returns "" or why not
// ("a repeated index (diagonal)", "rank", ...).
std::string parse_einsum(const std::string& eq, const std::vector<std::size_t>& ranks, EinsumTerms& t);

// The output shape; false when the operands disagree on a letter's size
// (other than broadcast 1s).
bool einsum_output_shape(const EinsumTerms& t, const std::vector<std::vector<std::int64_t>>& shapes,
                         std::vector<std::int64_t>& out);

}  // namespace npusim::onnx_import
