// A decoder-only LLM as its Hugging Face `config.json` describes it
// (docs/llm.md, "Model configs"): the shapes npusim builds a serving step
// from, and the parameter counts that follow from them. Plain C++.
#pragma once
#include <cstdint>
#include <string>

namespace npusim::llm {

// How the attention and the FFN are built.
enum class Family : std::uint8_t {
    mla_moe,    // deepseek_v3 / deepseek_v2: MLA attention, dense then MoE layers with shared experts
    gqa_dense,  // llama, mistral, qwen2: grouped-query attention, a SiLU-gated MLP
    gqa_moe,    // mixtral: grouped-query attention, routed experts only
};

struct ModelShape {
    std::string file, model_type;
    Family family = Family::gqa_dense;
    std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
    std::int64_t intermediate = 0;  // dense FFN
    std::int64_t vocab = 0, max_positions = 0;
    bool tied_embeddings = false;
    // MLA (deepseek): q through a LoRA rank (0: one q projection), the
    // compressed KV latent and its rope part, per-head dims.
    std::int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_dim = 0, qk_rope_dim = 0, v_head_dim = 0;
    // MoE: routed experts (0: dense), per token, their FFN width, shared
    // experts (each of moe_intermediate), the first dense layers, the
    // router's expert groups.
    std::int64_t experts = 0, experts_per_token = 0, moe_intermediate = 0, shared_experts = 0;
    std::int64_t first_dense = 0, groups = 1, topk_groups = 1;
    // Attention over at most this many recent tokens (0: all); npusim runs
    // full attention, so only contexts within the window (llm_graph checks).
    std::int64_t sliding_window = 0;

    bool moe() const { return experts > 0; }
    bool moe_layer(std::int64_t layer) const { return moe() && layer >= first_dense; }
    // Cached bytes per token per layer at `elt` bytes an element (MLA: the
    // latent and its rope part; GQA: k and v of every kv head).
    std::int64_t kv_elements_per_token() const {
        return family == Family::mla_moe ? kv_lora_rank + qk_rope_dim : 2 * kv_heads * head_dim;
    }
};

// Reads the config; InputError naming the file and the missing or unusable
// field for an unsupported model_type or a field npusim needs and cannot find.
ModelShape read_hf_config(const std::string& file);

// Parameters, by part.
struct ParamCount {
    double embedding = 0, lm_head = 0, attention = 0, dense_ffn = 0, routed_experts = 0, shared_experts = 0,
           routers = 0, norms = 0;
    double total() const { return embedding + lm_head + attention + dense_ffn + routed_experts + shared_experts + routers + norms; }
};
ParamCount count_params(const ModelShape& m);
// Parameters a token uses: everything but the routed experts it does not
// pick and the embedding table (a lookup reads one row of it); publishers
// differ on the embedding, so with_embedding adds it back.
double active_params(const ModelShape& m, bool with_embedding);

// Per layer, by part (what a die stores and reads for it).
double attention_params(const ModelShape& m);
double expert_params(const ModelShape& m);  // one routed or shared expert
double dense_ffn_params(const ModelShape& m);

}  // namespace npusim::llm
