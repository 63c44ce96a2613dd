// The two layouts an Attention reads its q, k and v in and writes its
// output in: BNSD ([..., heads, S, D], the default: each head's rows
// together) and BSND ([..., S, heads, D], as the projections write them:
// one head's rows heads·D apart), so a model need not transpose its heads
// before and after attention, as fused attention kernels do not.
#pragma once
#include <cstdint>

#include "compiler/graph.hpp"

namespace npusim::compiler {

// attrs.layout of an Attention: true for "BSND", false for "BNSD" or none.
// Anything else is an InputError naming the node, with did-you-mean.
bool seq_major(const Node& n);

// An operand as the matrices attention works on: `heads` matrices of
// `seq` rows and `d` columns; `per_row` heads share one sequence row (BSND),
// 1 for BNSD.
struct AttentionDims {
    std::int64_t heads = 1, seq = 1, d = 1, per_row = 1;
};
AttentionDims attention_dims(const Shape& s, bool seq_major);

}  // namespace npusim::compiler
