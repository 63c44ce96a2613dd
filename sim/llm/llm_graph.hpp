// One die's graph of an LLM serving step (docs/llm.md, "The graph"): built
// from the model's shape and the workload, in the graph format every rank
// runs (docs/graph-format.md), so a user can write it out, read it, edit it
// and run it as a graph. Plain C++.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chip/chip_params.hpp"
#include "config/workload_params.hpp"
#include "llm/hf_config.hpp"

namespace npusim::llm {

// What a node is for the step's breakdown (llm.op_time_shares).
enum class OpKind : std::uint8_t { matmul, attention, dispatch, combine, other };
const char* to_string(OpKind k);

struct NodeInfo {
    OpKind kind = OpKind::other;
    int layer = -1;       // -1: before the first layer (embedding) or after the last (head)
    int microbatch = 0;
};

struct LlmGraph {
    std::string text;                       // the graph file
    std::map<std::string, NodeInfo> nodes;  // by node name
    int layers = 0;                         // decoder layers it runs
    int microbatches = 1;
    double tokens_per_die = 0;              // output tokens (decode) or prompt tokens (prefill) per die per step
    double weight_bytes = 0, kv_bytes = 0;  // per die
    std::vector<std::string> warnings;      // runs as asked, but maybe not what was meant
};

// InputError naming the workload key (with did-you-mean where it helps) for
// a deployment the chip or the model cannot run: ep not dividing the dies
// or the experts, kv_len past max_position_embeddings, a core split larger
// than the die, micro-batches without a split, weights and KV cache over
// the die's HBM (both figures).
LlmGraph build_llm_graph(const ModelShape& m, const LlmWorkload& w, const ChipParams& chip);

}  // namespace npusim::llm
