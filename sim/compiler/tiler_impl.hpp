// The tiler's working state, shared by the files that cut each kind of
// kernel: tiler.cpp (the walk over kernels), tile_cube.cpp and
// tile_cube_choice.cpp with cube_rater.cpp (Cube GEMM / convolution),
// tile_attention.cpp, tile_vector.cpp and tile_vector_kernels.cpp (Vector),
// tile_regions.cpp. Internal to the compiler.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chip/timing.hpp"
#include "compiler/cost_model.hpp"
#include "compiler/tiler.hpp"
#include "compiler/tile_regions.hpp"

namespace npusim::compiler {

// Tasks one graph may compile to: bounds the compiler's memory and time (a
// 2 TiB tensor would otherwise become millions of tiles); a large CNN at
// batch 256 is tens of thousands, a whole LLM prefill step's rank graph
// over a million.
constexpr std::size_t kMaxCompiledTasks = 4000000;

// A Cube tile's work for its rows, columns and K part.
using CubeWorkFn = std::function<CubeWork(i64 rows, i64 cols, i64 k_part)>;
// Input rows [r0, r1) that output rows [h0, h1) of a convolution read.
using ConvInRows = std::function<std::pair<i64, i64>(i64 h0, i64 h1)>;

// An m x n x k matmul tile that reads A (m x k) and B (k x n) of `elt`-byte
// elements from GM and writes its fp16 result.
CubeWork gemm_work(i64 m, i64 n, i64 k, int elt, DType dtype);

struct CubeBlocks {
    i64 m = 1, n = 1, k = 1;  // row, column and K blocks
};
class CubeRater;

// The dimensions choose_cube picks block counts for.
struct CubeProblem {
    i64 outer = 1, rows = 0, cols = 0, K = 0;
    const char* rows_name = "";
    const char* cols_name = "";
    i64 row_unit = 16;
    bool split_k = false;
    Space dst = Space::hbm;
    // Whether no tiling has less Cube work than the problem taken whole
    // (its rows, columns and K each cut into whole ranges): not for groups
    // that tiles hold in part or skip (grouped conv, per-expert rows).
    bool whole_floor = true;
    // Whether another kernel reads its output (it waits for the last
    // tiles); the last wave of an output no kernel reads ends the kernel.
    bool consumed = true;
};

// Per axis of a tensor, the index range [first, first + count).
struct IndexBox {
    std::vector<std::uint64_t> first, count;
};

// Bytes from one index of each axis of a plain-layout tensor to the next.
std::vector<std::uint64_t> byte_strides(const Tensor& t);

class Tiler {
public:
    Tiler(const Graph& g, const KernelPlan& plan, const MemoryPlan& mem, const ChipParams& chip,
          const CompileOptions& opt);
    std::vector<TileTask> run(std::vector<TilingChoice>& choices);

private:
    // tiler.cpp: the walk over kernels and what every kind asks of it.
    void tile_kernel(int ki, TilingChoice& choice);
    void finish_kernel(std::size_t ki, TilingChoice& choice);
    const Tensor& T(int t) const { return g_.tensors[static_cast<std::size_t>(t)]; }
    void use_core_group(const Kernel& k);
    const Node& node(const Kernel& k) const { return g_.nodes[static_cast<std::size_t>(k.nodes[0])]; }
    const ForcedTiling* forced(const Kernel& k) const;
    Space cube_dst(int k) const;
    void comm(int ki, TilingChoice& choice);
    [[noreturn]] void too_many_tasks(const std::string& kernel, std::uint64_t tasks) const;
    double warm_input_share(const Kernel& k) const;
    i64 kernels_alike(const Kernel& k) const;
    // Whether a kernel that runs tasks reads tensor t (through views too).
    bool read_by_a_kernel(int t) const;
    int producer_kernel(int t) const;

    // tile_regions.cpp: the GM regions tiles name.
    void mask_rows(const Kernel& k, std::size_t first);
    void add_consts(const Kernel& k, std::size_t from, std::vector<Region>& reads) const;

    // tile_cube.cpp: Cube kernels cut into tiles.
    void conv(int ki, TilingChoice& choice);
    void matmul(int ki, TilingChoice& choice);
    void grouped_matmul(int ki, TilingChoice& choice);
    TileTask cube_task(int ki, std::string label) const;
    CubeBlocking planned_blocking(const KernelParams& p, const CubeWork& w);
    Space out_space(Space dst, std::uint64_t out_bytes) const;
    void finish_cube(TileTask& t, Space dst, CubeWork w, Space src = Space::hbm);

    // tile_cube_choice.cpp: a Cube kernel's block counts.
    CubeBlocks choose_cube(const Kernel& k, const CubeProblem& p, const CubeWorkFn& work_in, TilingChoice& choice);
    CubeBlocks forced_cube_blocks(const Kernel& k, const CubeProblem& p, const ForcedTiling& f,
                                  TilingChoice& choice) const;
    CubeBlocks searched_cube_blocks(const Kernel& k, const CubeProblem& p, CubeRater& rate, TilingChoice& choice);
    struct CubeCut;
    void dry_result(const TilingChoice& choice, i64 tiles);
    std::optional<CubeCut> cube_cut(int ki);

    // tile_attention.cpp: fused attention.
    struct AttentionShape;
    AttentionShape attention_shape(const Kernel& k) const;
    void attention(int ki, TilingChoice& choice);
    void operand_regions(const AttentionShape& a, int t, const Block& b, std::vector<Region>& out) const;
    i64 attention_query_block(const Kernel& k, const AttentionShape& a, TilingChoice& choice) const;
    void attention_qk(int ki, const AttentionShape& a, const std::vector<std::pair<i64, i64>>& blocks,
                      std::vector<int>& qk_task);
    void attention_softmax(int ki, const AttentionShape& a, const std::vector<std::pair<i64, i64>>& blocks,
                           const std::vector<int>& qk_task, std::vector<int>& softmax_task);
    void attention_pv(int ki, const AttentionShape& a, const std::vector<std::pair<i64, i64>>& blocks,
                      const std::vector<int>& softmax_task);

    // tile_vector.cpp: how many Vector tiles, and each tile's finish.
    i64 vector_tiles(const Kernel& k, std::uint64_t bytes);
    double vector_tile_cycles(const Kernel& k, std::uint64_t bytes, i64 n) const;
    i64 dispatch_bounded_tiles(const Kernel& k, std::uint64_t bytes, i64 tiles) const;
    i64 producer_waves(const Kernel& k, std::uint64_t bytes, i64 tiles);
    TileTask vector_task(int ki, std::string label, npusim::Kernel type = npusim::Kernel::vector) const;
    void plan_vector_tasks(const Kernel& k, std::size_t first);
    void finish_vector(TileTask& t, double cycles_per_out_repeat);

    // tile_vector_kernels.cpp: Vector kernels cut into tiles.
    void vector_conv(int ki, TilingChoice& choice, const ConvInRows& in_rows);
    std::uint64_t row_bytes(const Node& n, const Tensor& in) const;
    void elementwise(int ki, TilingChoice& choice);
    // Input `in` of element-wise kernel k behind its output bytes [lo, hi):
    // names the regions in `reads`, returns the bytes streamed.
    std::uint64_t input_reads(const Kernel& k, int in, std::uint64_t lo, std::uint64_t hi,
                              std::vector<Region>& reads) const;
    // Bytes [lo, hi) of a Slice read in place (compiler/slice_view.hpp).
    void view_reads(const Node& slice, std::uint64_t lo, std::uint64_t hi, std::vector<Region>& reads) const;
    // All of tensor `in` (through a view's runs).
    void whole_input(int in, std::vector<Region>& reads) const;
    // The Slice node read in place that produces tensor t, or nullptr.
    const Node* view_slice(int t) const;
    // The runs of its input a copy kernel's output rows read: output row o
    // (of `run` bytes) is the input bytes from first + sum of o's digits
    // times their strides, o written in the mixed radix `dims` (slowest
    // first). A Slice that cuts one axis (one digit) or a Transpose that
    // keeps the last axis (one digit per other axis); false for others.
    struct InputRuns {
        std::uint64_t first = 0, run = 0;
        std::vector<std::uint64_t> dims, strides;
        std::uint64_t rows() const;
    };
    bool input_runs(const Node& n, const Tensor& in, InputRuns& s) const;
    bool slice_runs(const Node& n, const Tensor& in, InputRuns& s) const;
    bool transpose_runs(const Node& n, const Tensor& in, InputRuns& s) const;
    // The input bytes behind output bytes [lo, hi): a partial first run,
    // whole runs an equal stride apart as one strided region, a partial
    // last run.
    void run_reads(int in, const InputRuns& s, std::uint64_t lo, std::uint64_t hi, std::vector<Region>& out) const;
    // tile_copy_box.cpp: a copy whose output bytes [lo, hi) come from
    // scattered input elements (a Transpose that moves the last axis, a
    // constant or edge Pad, on plain layouts) reads the input boxes behind
    // them (the bytes as at most two boxes of output indices per axis, each
    // taken through the op's index map); names them in `out` (false for
    // other nodes).
    bool box_reads(const Node& n, int in, std::uint64_t lo, std::uint64_t hi, std::vector<Region>& out) const;
    // The input box behind output box `o`: the op's index map of its ranges.
    bool input_box(const Node& n, const Tensor& in, const IndexBox& o, IndexBox& box) const;
    // An input box as strided regions, one per combination of its outer
    // axes (beyond 64, the span from its first byte to its last).
    void box_regions(int in, const std::vector<std::uint64_t>& dim, const std::vector<std::uint64_t>& stride,
                     const IndexBox& box, std::vector<Region>& out) const;
    void fused_vector(int ki, TilingChoice& choice);
    void rowwise(int ki, TilingChoice& choice);
    void concat(int ki, TilingChoice& choice);
    int concat_input(int ki, int in, i64 axis, i64 offset, double want);

    const Graph& g_;
    const KernelPlan& plan_;
    const MemoryPlan& mem_;
    const ChipParams& full_chip_;
    ChipParams chip_;  // the kernel's view: its core group's cores only
    const CompileOptions& opt_;
    std::vector<int> first_tile_;
    std::vector<int> tile_count_;
    std::vector<int> k_parts_;         // a Cube kernel's split-K parts per output block
    const std::vector<int> capacity_;  // capacity_dispatches: row table k is the k-th one's
    const std::vector<bool> views_;    // per node: a Slice read in place
    std::vector<TileTask> tasks_;
    struct {
        bool valid = false;
        timing::MatmulShape s;
        CubeBlocking b;
    } blocking_key_;  // the last shape planned_blocking planned (this kernel), and its plan
    struct CubeWhere {
        int active = 0;                                      // cores the kernel's tiles keep streaming
        double shared = 0;                                   // share of a tile's loads other tiles fetched first
        std::uint64_t wave_a_blocks = 0, wave_b_blocks = 0;  // distinct blocks of its wave (CubeWork)
    };
    std::optional<CubeWhere> cube_where_;  // set by choose_cube for the kernel being tiled
    // How a Cube kernel will be cut, asked before it is tiled (a producer
    // pipelining into it): its tile count and one tile's estimate.
    struct CubeCut {
        i64 tiles = 0;
        double tile_cycles = 0;
    };
    std::optional<CubeCut>* dry_cut_ = nullptr;  // cube_cut in progress: choose only, emit nothing
};

}  // namespace npusim::compiler
