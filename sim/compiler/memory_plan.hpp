// Where every tensor lives in HBM, and which address ranges a logical block
// of a tensor covers in its layout. Blocks are (outer batch, rows, columns):
// for 4-D tensors (N, H, C) with W whole; for matrices (leading dims, M, N).
// NC1HWC0 and FRACTAL_NZ pad channels / columns to C0 = 16 (32 for int8).
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/graph.hpp"
#include "tasks/task.hpp"

namespace npusim::compiler {

struct Block {
    std::int64_t b0 = 0, b1 = 1;  // outer batch
    std::int64_t r0 = 0, r1 = 1;  // rows (H, or M)
    std::int64_t c0 = 0, c1 = 1;  // columns (C, or N)
};

// The logical (batch, rows, cols) extent of a tensor; with `matrix`, of
// the matrices it holds (MemoryPlan::matrix_regions' view).
Block full_block(const Tensor& t, bool matrix = false);

class MemoryPlan {
public:
    // Lays out every tensor 512 B-aligned; Reshape outputs on plain layouts
    // alias their input (no copy).
    explicit MemoryPlan(const Graph& g);

    std::uint64_t addr(int t) const { return addr_[static_cast<std::size_t>(t)]; }
    std::uint64_t bytes(int t) const { return bytes_[static_cast<std::size_t>(t)]; }  // padded
    std::uint64_t total() const { return next_; }

    // Address ranges of block b of tensor t (adjacent ranges merged). A 4-D
    // tensor's block is (N, H rows, C columns) in its image layout.
    void regions(int t, const Block& b, std::vector<Region>& out) const;
    // The same for a matrix operand: b indexes the product of the leading
    // dims, rows and columns are the last two. A row-major 4-D tensor (NCHW
    // or ND, e.g. attention heads [B, heads, S, D]) is then the matrices it
    // holds, not channels: each head's block names that head's bytes only.
    void matrix_regions(int t, const Block& b, std::vector<Region>& out) const;
    // Block b of a sequence-major (BSND) attention operand [..., S, N, D] as
    // its matrices: matrix i is head i % N of outer index i / N, its rows S,
    // its columns D; one strided region per matrix (rows N·D apart).
    void seq_major_regions(int t, const Block& b, std::vector<Region>& out) const;
    // Bytes [lo, hi) of the tensor's storage (not of a Slice read in place
    // whose rows are a pitch apart: logic_error).
    Region physical(int t, std::uint64_t lo, std::uint64_t hi) const;
    // Bytes from one row of the last axis to the next: the last axis's
    // bytes, or for a Slice of the last axis read in place (and Reshapes
    // of it) its input's.
    std::uint64_t row_pitch(int t) const;
    // Counts `n` regions of tensor t made elsewhere (a copy's input runs)
    // against the compiled graph's limit (InputError above it).
    void count_regions(const Tensor& t, std::uint64_t n) const;

private:
    void regions(int t, const Block& b, bool matrix, std::vector<Region>& out) const;
    // Counts a block's regions against the compiled graph's limit.
    void count_regions(const Tensor& t, const Block& b) const;

    const Graph& g_;
    std::vector<std::uint64_t> addr_, bytes_;
    // Per tensor, 0, or for a Slice read in place (and Reshapes of it) its
    // rows' pitch (a cut of the last axis) or ~0 (of another: no rows).
    std::vector<std::uint64_t> pitch_;
    mutable std::uint64_t regions_made_ = 0;  // by regions(), bounded by kMaxRegions in memory_plan.cpp
    std::uint64_t next_ = 0;
};

std::uint64_t padded_bytes(const Tensor& t);
std::int64_t c0_of(const Tensor& t);

}  // namespace npusim::compiler
