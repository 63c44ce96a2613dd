// The estimated time of a Cube kernel cut into given block counts, as
// choose_cube (tile_cube_choice.cpp) rates its candidates: whole waves of
// tiles over the Cube cores, the scalar cores' serial dispatch, and the L2
// hits of operand blocks several tiles read.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>

#include "compiler/tiler_impl.hpp"

namespace npusim::compiler {

inline i64 block_count(const CubeBlocks& b) { return b.m * b.n * b.k; }

class CubeRater {
public:
    // `group`: kernels alike beside it (their tiles fill the same waves);
    // `warm`: the share of its input bytes an earlier kernel left in L2.
    CubeRater(const ChipParams& chip, CubeWorkFn work, const CubeProblem& p, i64 group, double warm);
    int cubes() const { return cubes_; }
    i64 group() const { return group_; }
    std::tuple<i64, i64, i64> tile_extent(const CubeBlocks& b) const;
    CubeWork tile_work(const CubeBlocks& b) const;
    double shared_share(const CubeWork& w, i64 tiles) const;
    void wave_blocks(const CubeBlocks& b, CubeWork& w) const;
    double tile_cycles(const CubeBlocks& b, i64 tiles, bool full);
    double estimate(const CubeBlocks& b, bool full);
    // No estimate of those block counts is lower (its tile at its floor).
    double estimate_floor(const CubeBlocks& b) const;

private:
    double waves_of(i64 tiles, double tile_cycles) const;

    const ChipParams& chip_;
    CubeWorkFn work_;
    CubeProblem p_;
    int cubes_;
    i64 group_;
    bool fits_l2_ = false;
    std::uint64_t unique_bytes_ = 0;
    // One tile's cycles per distinct shape (many block counts round to
    // the same tile): bounds compile time.
    std::map<std::tuple<i64, i64, i64, i64, i64, bool, std::uint64_t, std::uint64_t>, double> memo_;
};

}  // namespace npusim::compiler
