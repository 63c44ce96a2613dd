// The workload section of the run document as plain structs, filled from the
// schema table (config/schema.cpp) the way ChipParams is. The fields carry no
// initialisers on purpose: every default lives in the schema, so a field here
// holds what the resolved document says and nothing else.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace npusim {

// Kind "graph": what the built-in compiler is asked to do (docs/compiler.md).
enum class SyncGranularity : std::uint8_t { op, tile };
enum class InputLayout : std::uint8_t { NCHW, NC1HWC0 };
// At a Cube -> heavy-Vector boundary: decide by cost, or force either way.
enum class FusionBoundary : std::uint8_t { automatic, fuse, split };
// The framework host model (docs/host.md).
enum class HostMode : std::uint8_t { off, sync, async, pipeline, hetero };

struct CompilerPasses {
    bool fold_bn{}, fuse_activation{}, fuse_vector{}, hoist_layout{}, explore_cube_cores{}, search_cube_plans{},
        explore_vector_cores{};
};

// One entry of workload.tiling: it names only what it forces, 0 = free.
struct ForcedTiling {
    int m_blocks = 0;  // rows (conv: output-row blocks per image; matmul: M blocks)
    int n_blocks = 0;  // output channels / columns blocks
    int tiles = 0;     // vector ops: number of tiles
    int k_blocks = 0;  // matmul: split-K parts (atomic-add into a GM result)
    bool searched = false;  // set by the compiler's plan search, not the user
};

struct GraphWorkload {
    int batch{};
    bool batch_given = false;  // workload.batch was set, not defaulted: it overrides a graph's dims.batch
    SyncGranularity sync{};
    InputLayout input_layout{};
    CompilerPasses passes;
    FusionBoundary fusion_boundary{};
    std::map<std::string, std::int64_t> dims;           // symbolic dimension -> value
    std::map<std::string, ForcedTiling> tiling;         // by graph node name
    HostMode host_mode{};
    std::uint32_t submit_batch{};                       // 0 = a kernel's descriptors in one submission
    std::vector<std::string> cpu_ops;                   // node names for the CPU (hetero)
    bool dynamic_shapes{};
    // Graphs that span ranks: the communication ops' defaults and the routing.
    bool comm_optimized{};   // workload.variant
    bool flag_in_block{};
    bool capacity_error{};   // workload.capacity: error (true) or warn
    struct Routing {
        bool zipf{};
        double skew{};
        std::uint64_t seed{};
        int redundant_experts{};
    } routing;
};

// Kind "collective": one collective over every rank of the chip (docs/collectives.md).
struct CollectiveWorkload {
    enum class Op : std::uint8_t { allreduce, allgather, reduce_scatter, alltoall };
    enum class Algorithm : std::uint8_t { ring, mesh };
    enum class Dtype : std::uint8_t { fp16, bf16, fp32, int8 };
    Op op{};
    Algorithm algorithm{};
    std::uint64_t bytes{};  // per rank: allreduce/alltoall input, allgather output, reduce_scatter input
    Dtype dtype{};
};

// Kind "llm": a serving step of a Hugging Face model on every die (docs/llm.md).
struct LlmWorkload {
    enum class Phase : std::uint8_t { decode, prefill };
    enum class Quant : std::uint8_t { w8a8, bf16 };
    std::string name;   // the run's name (the built graph's)
    std::string model;  // the model's config.json (resolved: relative to the run file)
    Phase phase{};
    int batch{};        // sequences per die
    int kv_len{};       // decode: tokens already in each sequence's cache
    int prompt_len{};   // prefill: tokens per prompt
    int layers{};       // the first N layers; 0 = all
    int ep{};           // expert-parallel width in dies; 0 = every die
    int attention_tp{};
    Quant quant{};
    int microbatches{};
    // workload.streams: the core split of two micro-batch streams; 0 = not given.
    struct Cores {
        int cube{}, vector{};
    } attention_cores, moe_cores;
    int shared_expert_ranks{};
    bool comm_optimized{};  // workload.variant
    bool capacity_error{};  // workload.capacity: error (true) or warn
    GraphWorkload::Routing routing;
};

struct WorkloadParams {
    std::string kind;  // "tasks", "graph", "collective", "llm"; "" without a workload
    std::string file;  // tasks: the stream; graph: the model graph; llm: the run file
    GraphWorkload graph;
    CollectiveWorkload collective;
    LlmWorkload llm;
};

// The validated, default-filled workload section -> WorkloadParams, through
// each key's schema binding. InputError with the key path for entries of the
// free-form objects (workload.dims, workload.tiling) that are not well formed,
// prefixed with source(key path) when given (the file or --set that wrote it).
WorkloadParams read_workload_params(const nlohmann::json& section,
                                    const std::function<std::string(const std::string&)>& source = {});

// A workload of `kind` with every key at its schema default (required keys
// left empty): what callers that build parameters by hand start from.
const WorkloadParams& default_workload_params(const std::string& kind);

}  // namespace npusim
