#include "llm/hf_config.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/did_you_mean.hpp"
#include "common/errors.hpp"
#include "common/json_file.hpp"

namespace npusim::llm {

namespace {

using json = nlohmann::json;

const std::vector<std::pair<std::string, Family>>& model_types() {
    static const std::vector<std::pair<std::string, Family>> t = {
        {"deepseek_v3", Family::mla_moe}, {"deepseek_v2", Family::mla_moe}, {"llama", Family::gqa_dense},
        {"mistral", Family::gqa_dense},   {"qwen2", Family::gqa_dense},     {"mixtral", Family::gqa_moe},
    };
    return t;
}

// A field of the config: required ones throw naming the file and the model
// type; a JSON null (as configs write an unused option) counts as absent.
class Fields {
public:
    Fields(const json& j, std::string file, std::string type) : j_(j), file_(std::move(file)), type_(std::move(type)) {}

    std::int64_t need(const char* key) const {
        const auto it = j_.find(key);
        if (it == j_.end() || it->is_null())
            throw InputError(fmt::format("{}: field '{}' is missing: npusim needs it to build a {} model", file_, key, type_));
        return positive(*it, key);
    }
    std::int64_t get(const char* key, std::int64_t fallback) const {
        const auto it = j_.find(key);
        if (it == j_.end() || it->is_null()) return fallback;
        return positive(*it, key, true);
    }
    bool flag(const char* key, bool fallback) const {
        const auto it = j_.find(key);
        if (it == j_.end() || it->is_null()) return fallback;
        if (!it->is_boolean()) throw InputError(fmt::format("{}: field '{}': expected true or false, got {}", file_, key, it->dump()));
        return it->get<bool>();
    }

private:
    std::int64_t positive(const json& v, const char* key, bool zero_ok = false) const {
        if (!v.is_number_integer() || v.get<std::int64_t>() < (zero_ok ? 0 : 1) || v.get<std::int64_t>() > (1LL << 40))
            throw InputError(fmt::format("{}: field '{}': expected a {} integer, got {}", file_, key,
                                         zero_ok ? "non-negative" : "positive", v.dump()));
        return v.get<std::int64_t>();
    }
    const json& j_;
    std::string file_, type_;
};

// Fields that would change the model where npusim builds only one form: a
// value other than that form is an error, not a different model run as
// the usual one. The sliding window is kept for the deployment check (it
// matters only beyond the window).
void check_modelled(const json& j, ModelShape& m) {
    const auto text = [&](const char* key) -> std::string {
        const auto it = j.find(key);
        return it == j.end() || it->is_null() ? "" : it->is_string() ? it->get<std::string>() : it->dump();
    };
    const std::string act = text("hidden_act");
    if (!act.empty() && act != "silu")
        throw InputError(fmt::format(
            "{}: hidden_act '{}' is not modelled: npusim builds SiLU-gated MLPs (hidden_act \"silu\")", m.file, act));
    const std::string freq = text("moe_layer_freq");
    if (m.family == Family::mla_moe && !freq.empty() && freq != "1")
        throw InputError(
            fmt::format("{}: moe_layer_freq {} is not modelled: npusim makes every layer after the first "
                        "first_k_dense_replace a MoE layer (moe_layer_freq 1)",
                        m.file, freq));
    const auto sw = j.find("sliding_window");
    const auto use = j.find("use_sliding_window");
    const bool used = use == j.end() || !use->is_boolean() || use->get<bool>();
    if (sw != j.end() && !sw->is_null() && used) {
        if (!sw->is_number_integer() || sw->get<std::int64_t>() < 1)
            throw InputError(fmt::format("{}: field 'sliding_window': expected a positive integer or null, got {}",
                                         m.file, sw->dump()));
        m.sliding_window = sw->get<std::int64_t>();
    }
}

}  // namespace

ModelShape read_hf_config(const std::string& file) {
    JsonFileSpec spec;
    spec.what = "model config";
    const json j = read_json_file<json>(file, spec);
    const auto mt = j.find("model_type");
    if (mt == j.end() || mt->is_null())
        throw InputError(fmt::format("{}: field 'model_type' is missing: npusim needs it to know the architecture", file));
    if (!mt->is_string())
        throw InputError(
            fmt::format("{}: field 'model_type': expected a string such as \"llama\", got {}", file, mt->dump()));
    ModelShape m;
    m.file = file;
    m.model_type = mt->get<std::string>();
    std::vector<std::string> names;
    bool known = false;
    for (const auto& [name, family] : model_types()) {
        names.push_back(name);
        if (name == m.model_type) m.family = family, known = true;
    }
    if (!known)
        throw InputError(fmt::format("{}: model_type '{}' is not supported (supported: {}){}", file, m.model_type,
                                     fmt::join(names, ", "), did_you_mean(m.model_type, names)));
    const Fields f(j, file, m.model_type);
    m.hidden = f.need("hidden_size");
    m.layers = f.need("num_hidden_layers");
    m.heads = f.need("num_attention_heads");
    m.kv_heads = f.get("num_key_value_heads", m.heads);
    m.intermediate = f.need("intermediate_size");
    m.vocab = f.need("vocab_size");
    m.max_positions = f.need("max_position_embeddings");
    m.tied_embeddings = f.flag("tie_word_embeddings", false);
    if (m.family == Family::mla_moe) {
        m.q_lora_rank = f.get("q_lora_rank", 0);
        m.kv_lora_rank = f.need("kv_lora_rank");
        m.qk_nope_dim = f.need("qk_nope_head_dim");
        m.qk_rope_dim = f.need("qk_rope_head_dim");
        m.v_head_dim = f.need("v_head_dim");
        m.head_dim = m.qk_nope_dim + m.qk_rope_dim;
        m.experts = f.need("n_routed_experts");
        m.experts_per_token = f.need("num_experts_per_tok");
        m.moe_intermediate = f.need("moe_intermediate_size");
        m.shared_experts = f.get("n_shared_experts", 0);
        m.first_dense = f.get("first_k_dense_replace", 0);
        m.groups = f.get("n_group", 1);
        m.topk_groups = f.get("topk_group", m.groups);
    } else {
        m.head_dim = f.get("head_dim", m.hidden / m.heads);
        if (m.head_dim == 0) m.head_dim = m.hidden / m.heads;
        if (m.heads % m.kv_heads != 0)
            throw InputError(fmt::format("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", file, m.heads,
                                         m.kv_heads));
        if (m.family == Family::gqa_moe) {
            m.experts = f.need("num_local_experts");
            m.experts_per_token = f.need("num_experts_per_tok");
            m.moe_intermediate = m.intermediate;
        }
    }
    check_modelled(j, m);
    if (m.moe()) {
        if (m.experts_per_token > m.experts)
            throw InputError(fmt::format("{}: num_experts_per_tok {} is more than the {} experts", file, m.experts_per_token,
                                         m.experts));
        if (m.first_dense > m.layers)
            throw InputError(fmt::format("{}: first_k_dense_replace {} is more than the {} layers", file, m.first_dense, m.layers));
        if (m.groups < 1 || m.experts % m.groups != 0 || m.topk_groups > m.groups)
            throw InputError(fmt::format("{}: n_group {} must divide the {} experts and be at least topk_group {}", file, m.groups,
                                         m.experts, m.topk_groups));
    }
    return m;
}

double attention_params(const ModelShape& m) {
    const auto H = static_cast<double>(m.hidden), heads = static_cast<double>(m.heads);
    if (m.family == Family::mla_moe) {
        const double qk = static_cast<double>(m.qk_nope_dim + m.qk_rope_dim);
        const double q = m.q_lora_rank > 0 ? H * m.q_lora_rank + m.q_lora_rank + static_cast<double>(m.q_lora_rank) * heads * qk
                                           : H * heads * qk;
        const double kv_a = H * static_cast<double>(m.kv_lora_rank + m.qk_rope_dim) + m.kv_lora_rank;
        const double kv_b = static_cast<double>(m.kv_lora_rank) * heads * static_cast<double>(m.qk_nope_dim + m.v_head_dim);
        const double o = heads * static_cast<double>(m.v_head_dim) * H;
        return q + kv_a + kv_b + o;
    }
    const double hd = static_cast<double>(m.head_dim);
    return H * heads * hd + 2 * H * static_cast<double>(m.kv_heads) * hd + heads * hd * H;
}

double expert_params(const ModelShape& m) { return 3.0 * static_cast<double>(m.hidden) * static_cast<double>(m.moe_intermediate); }
double dense_ffn_params(const ModelShape& m) { return 3.0 * static_cast<double>(m.hidden) * static_cast<double>(m.intermediate); }

ParamCount count_params(const ModelShape& m) {
    ParamCount p;
    const auto H = static_cast<double>(m.hidden), L = static_cast<double>(m.layers);
    const double moe_layers = m.moe() ? static_cast<double>(m.layers - m.first_dense) : 0.0;
    p.embedding = static_cast<double>(m.vocab) * H;
    p.lm_head = m.tied_embeddings ? 0.0 : p.embedding;
    p.attention = L * attention_params(m);
    p.dense_ffn = (L - moe_layers) * dense_ffn_params(m);
    p.routed_experts = moe_layers * static_cast<double>(m.experts) * expert_params(m);
    p.shared_experts = moe_layers * static_cast<double>(m.shared_experts) * expert_params(m);
    p.routers = moe_layers * H * static_cast<double>(m.experts);
    p.norms = L * 2 * H + H;
    return p;
}

double active_params(const ModelShape& m, bool with_embedding) {
    const ParamCount p = count_params(m);
    const double moe_layers = m.moe() ? static_cast<double>(m.layers - m.first_dense) : 0.0;
    const double routed = moe_layers * static_cast<double>(m.experts_per_token) * expert_params(m);
    // The LM head reads its whole matrix for any token (tied: the embedding's).
    const double head = m.tied_embeddings ? p.embedding : p.lm_head;
    return p.attention + p.dense_ffn + routed + p.shared_experts + p.routers + p.norms + head +
           (with_embedding && !m.tied_embeddings ? p.embedding : 0.0);
}

}  // namespace npusim::llm
