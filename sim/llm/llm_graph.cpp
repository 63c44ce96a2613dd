#include "llm/llm_graph.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"

namespace npusim::llm {

namespace {

using ojson = nlohmann::ordered_json;
using Shape = std::vector<std::int64_t>;

// Builds the graph node by node. Names: "l<L>.<what>" per layer, with
// "m<i>." in front for micro-batch i of two; weights are shared by both.
class Builder {
public:
    Builder(const ModelShape& m, const LlmWorkload& w, const ChipParams& chip) : m_(m), w_(w), chip_(chip) {}

    LlmGraph build();

private:
    // --- the graph file ------------------------------------------------------
    std::string tensor(const std::string& name, const Shape& shape, const char* dtype, const char* role) {
        if (!tensors_.contains(name)) tensors_[name] = ojson{{"shape", shape}, {"dtype", dtype}, {role, true}};
        return name;
    }
    std::string input(const std::string& name, const Shape& shape, const char* dtype = "bf16") {
        return tensor(pre_ + name, shape, dtype, "input");
    }
    std::string weight(const std::string& name, const Shape& shape, const char* dtype) {
        double e = 1;
        for (const auto d : shape) e *= static_cast<double>(d);
        if (!tensors_.contains(name)) out_.weight_bytes += e * (std::string(dtype) == "int8" ? 1 : std::string(dtype) == "fp32" ? 4 : 2);
        return tensor(name, shape, dtype, "const");
    }
    std::string node(const char* op, const std::string& name, std::vector<std::string> inputs, ojson attrs = ojson::object(),
                     OpKind kind = OpKind::other, bool moe_side = false) {
        const std::string out = pre_ + name;
        ojson n = {{"name", out}, {"op", op}, {"inputs", std::move(inputs)}, {"outputs", {out}}};
        if (!attrs.empty()) n["attrs"] = std::move(attrs);
        // The core split holds in MoE layers, where the two streams overlap;
        // dense layers, the embedding and the head take every core.
        const ojson& cores = moe_side ? moe_cores_ : attention_cores_;
        if (!cores.is_null() && layer_ >= 0 && m_.moe_layer(layer_)) n["cores"] = cores;
        nodes_.push_back(std::move(n));
        out_.nodes[out] = NodeInfo{kind, layer_, mb_};
        return out;
    }
    std::string lname(const std::string& what) const { return layer_ >= 0 ? fmt::format("l{}.{}", layer_, what) : what; }

    // --- building blocks -----------------------------------------------------
    std::string norm(const std::string& x, std::int64_t width, const std::string& what, bool moe_side = false) {
        const std::string g = weight(lname(what + ".gamma"), {width}, "bf16");
        return node("RMSNorm", lname(what), {x, g}, ojson::object(), OpKind::other, moe_side);
    }
    // x [rows, in] -> [rows, out]: int8 x int8 with per-column scales (w8a8;
    // the activation quantised per token first), else bf16.
    std::string linear(const std::string& x, std::int64_t in, std::int64_t out, const std::string& what, bool moe_side = false) {
        if (!w8a8_) return node("MatMul", lname(what), {x, weight(lname(what + ".weight"), {in, out}, "bf16")}, ojson::object(),
                                OpKind::matmul, moe_side);
        const std::string xq = quantized(x, moe_side);
        return node("MatMul", lname(what), {xq, weight(lname(what + ".weight"), {in, out}, "int8"), weight(lname(what + ".scale"), {out}, "fp32")},
                    ojson::object(), OpKind::matmul, moe_side);
    }
    std::string quantized(const std::string& x, bool moe_side) {
        const auto it = quantized_.find(x);
        if (it != quantized_.end()) return it->second;
        const std::string name = x.substr(pre_.size()) + ".q";
        return quantized_[x] = node("Quantize", name, {x}, ojson::object(), OpKind::other, moe_side);
    }
    std::string slice(const std::string& x, std::int64_t lo, std::int64_t hi, int axis, const std::string& what, bool moe_side = false) {
        return node("Slice", lname(what), {x}, ojson{{"starts", {lo}}, {"ends", {hi}}, {"axes", {axis}}}, OpKind::other, moe_side);
    }
    std::string reshape(const std::string& x, const Shape& s, const std::string& what) {
        return node("Reshape", lname(what), {x}, ojson{{"shape", s}});
    }
    std::string transpose(const std::string& x, const Shape& perm, const std::string& what) {
        return node("Transpose", lname(what), {x}, ojson{{"perm", perm}});
    }
    std::string rope(const std::string& x, std::int64_t dim, const std::string& what) {
        return node("RoPE", lname(what), {x, weight("rope.table", {1, dim}, "bf16")});
    }
    // A Cube that loads and stores plain tensors reads attention's heads in place (BSND).
    bool plain_cube() const { return chip_.cube.mte2_nd2nz && chip_.cube.fixpipe_nz2nd; }
    // Causal attention over q, k, v [seqs, P, heads, d] as the projections
    // write them, flattened to `flat`. A Cube that loads and stores plain
    // tensors reads each head's rows in place (BSND), as fused attention
    // kernels do; else the heads are transposed to the front and back.
    std::string prefill_attention(const std::string& q, const std::string& k, const std::string& v, double scale,
                                  const Shape& flat) {
        ojson attrs{{"k_transposed", 0}, {"causal", 1}, {"scale", scale}};
        if (plain_cube()) {
            attrs["layout"] = "BSND";
            return reshape(node("Attention", lname("attn"), {q, k, v}, attrs, OpKind::attention), flat, "attn_flat");
        }
        const Shape perm = {0, 2, 1, 3};
        const std::string a = node("Attention", lname("attn"),
                                   {transpose(q, perm, "q_t"), transpose(k, perm, "k_t"), transpose(v, perm, "v_t")},
                                   attrs, OpKind::attention);
        return reshape(transpose(a, perm, "attn_t"), flat, "attn_flat");
    }
    // SiLU(gate) * up over [rows, 2F] -> [rows, F].
    std::string swiglu(const std::string& gu, std::int64_t f, const std::string& what, bool moe_side) {
        const std::string g = slice(gu, 0, f, 1, what + ".gate", moe_side), u = slice(gu, f, 2 * f, 1, what + ".up", moe_side);
        const std::string s = node("SiLU", lname(what + ".silu"), {g}, ojson::object(), OpKind::other, moe_side);
        return node("Mul", lname(what + ".act"), {s, u}, ojson::object(), OpKind::other, moe_side);
    }
    std::string mlp(const std::string& x, std::int64_t f, const std::string& what, bool moe_side) {
        const std::string gu = linear(x, m_.hidden, 2 * f, what + ".gate_up", moe_side);
        return linear(swiglu(gu, f, what, moe_side), f, m_.hidden, what + ".down", moe_side);
    }

    std::string attention(const std::string& x);
    std::string mla(const std::string& x);
    std::string gqa(const std::string& x);
    std::string moe(const std::string& x);
    void decoder_layer(std::string& h);
    void check_deployment();
    ojson tp_group() const;

    const ModelShape& m_;
    const LlmWorkload& w_;
    const ChipParams& chip_;
    LlmGraph out_;
    ojson tensors_ = ojson::object(), nodes_ = ojson::array();
    std::vector<std::string> outputs_;
    std::map<std::string, std::string> quantized_;
    ojson attention_cores_, moe_cores_;  // null: every core
    std::string pre_;
    int layer_ = -1, mb_ = 0;
    bool w8a8_ = true, decode_ = true;
    int ranks_ = 1, ep_ = 1, tp_ = 1, mbs_ = 1;
    std::int64_t seqs_ = 1;  // sequences of this micro-batch on this die
    std::int64_t T_ = 1;     // their tokens
    std::int64_t len_ = 1;   // decode: cached tokens; prefill: the prompt
};

ojson Builder::tp_group() const {
    ojson g = ojson::array();
    for (int r = 0; r < tp_; ++r) g.push_back(r);
    return g;
}

std::string Builder::attention(const std::string& x) {
    // With attention TP the group's dies each take their share of the heads
    // for every group member's tokens.
    std::string in = x;
    if (tp_ > 1) in = node("AllGather", lname("attn.gather"), {x}, ojson{{"algorithm", "ring"}, {"group", tp_group()}});
    const std::string o = m_.family == Family::mla_moe ? mla(in) : gqa(in);
    if (tp_ == 1) return o;
    return node("ReduceScatter", lname("attn.reduce"), {o}, ojson{{"algorithm", "ring"}, {"group", tp_group()}});
}

// Multi-head latent attention: decode in the absorbed form (q through W_UK
// into the latent space, attention over the compressed cache, W_UV after),
// prefill in the expanded form (k and v through kv_b, causal attention).
std::string Builder::mla(const std::string& x) {
    const std::int64_t H = m_.hidden, heads = m_.heads / tp_, nope = m_.qk_nope_dim, rope_d = m_.qk_rope_dim,
                       qk = nope + rope_d, lora = m_.kv_lora_rank, vd = m_.v_head_dim, seqs = seqs_ * tp_, Ta = T_ * tp_;
    std::string q;
    if (m_.q_lora_rank > 0) {
        const std::string qa = linear(x, H, m_.q_lora_rank, "q_a");
        q = linear(norm(qa, m_.q_lora_rank, "q_a_norm"), m_.q_lora_rank, heads * qk, "q_b");
    } else {
        q = linear(x, H, heads * qk, "q");
    }
    const std::string q3 = reshape(q, {Ta, heads, qk}, "q_heads");
    const std::string q_nope = slice(q3, 0, nope, 2, "q_nope"), q_pe = rope(slice(q3, nope, qk, 2, "q_pe"), rope_d, "q_rope");
    const std::string kva = linear(x, H, lora + rope_d, "kv_a");
    const std::string latent = norm(slice(kva, 0, lora, 1, "kv_latent"), lora, "kv_a_norm");
    const std::string k_pe = rope(slice(kva, lora, lora + rope_d, 1, "k_pe"), rope_d, "k_rope");
    const double scale = 1.0 / std::sqrt(static_cast<double>(qk));
    std::string o;
    if (decode_) {
        outputs_.push_back(latent);  // this step's cache rows
        outputs_.push_back(k_pe);
        const std::string q_abs = node("BatchMatMul", lname("q_absorb"),
                                       {transpose(q_nope, {1, 0, 2}, "q_nope_t"), weight(lname("w_uk"), {heads, nope, lora}, "bf16")},
                                       ojson::object(), OpKind::matmul);
        const std::string q_full = node("Concat", lname("q_latent"), {transpose(q_abs, {1, 0, 2}, "q_absorb_t"), q_pe}, ojson{{"axis", 2}});
        const std::string cache = input(lname("kv_cache"), {seqs, 1, len_, lora + rope_d});
        out_.kv_bytes += static_cast<double>(seqs * len_ * (lora + rope_d) * 2);
        const std::string a = node("MLAttention", lname("mla"), {reshape(q_full, {seqs, 1, heads, lora + rope_d}, "q_pack"), cache},
                                   ojson{{"v_dim", lora}, {"scale", scale}}, OpKind::attention);
        const std::string at = transpose(reshape(a, {Ta, heads, lora}, "mla_heads"), {1, 0, 2}, "mla_t");
        const std::string oh = node("BatchMatMul", lname("v_absorb"), {at, weight(lname("w_uv"), {heads, lora, vd}, "bf16")},
                                    ojson::object(), OpKind::matmul);
        o = reshape(transpose(oh, {1, 0, 2}, "v_absorb_t"), {Ta, heads * vd}, "attn_flat");
    } else {
        const std::int64_t P = len_;
        out_.kv_bytes += static_cast<double>(seqs * P * (lora + rope_d) * 2);
        const std::string kvb = linear(latent, lora, heads * (nope + vd), "kv_b");
        const std::string kvb4 = reshape(kvb, {seqs, P, heads, nope + vd}, "kv_heads");
        const std::string k_nope = slice(kvb4, 0, nope, 3, "k_nope"), v = slice(kvb4, nope, nope + vd, 3, "v");
        const std::string k_pe4 = reshape(k_pe, {seqs, P, 1, rope_d}, "k_pe4");
        if (plain_cube()) {
            // The rope parts apart, one rope key for every head (as MLA
            // prefill kernels take them): nothing is concatenated.
            ojson attrs{{"k_transposed", 0}, {"causal", 1}, {"scale", scale}, {"layout", "BSND"}};
            const std::string a = node("Attention", lname("attn"),
                                       {reshape(q_nope, {seqs, P, heads, nope}, "q_nope4"), k_nope, v,
                                        reshape(q_pe, {seqs, P, heads, rope_d}, "q_rope4"), k_pe4},
                                       attrs, OpKind::attention);
            o = reshape(a, {Ta, heads * vd}, "attn_flat");
        } else {
            const std::string k_pe_h =
                node("Add", lname("k_pe_heads"), {k_pe4, weight(lname("k_pe_zero"), {1, 1, heads, rope_d}, "bf16")});
            const std::string k = node("Concat", lname("k"), {k_nope, k_pe_h}, ojson{{"axis", 3}});
            const std::string qf = node("Concat", lname("q_full"), {q_nope, q_pe}, ojson{{"axis", 2}});
            o = prefill_attention(reshape(qf, {seqs, P, heads, qk}, "q4"), k, v, scale, {Ta, heads * vd});
        }
    }
    return linear(o, heads * vd, H, "o_proj");
}

// Grouped-query attention (Llama, Mistral, Qwen2, Mixtral): one q k v
// projection; decode packs each kv head's query heads into the rows of one
// attention over the cache (as decode kernels do), prefill is causal.
std::string Builder::gqa(const std::string& x) {
    const std::int64_t H = m_.hidden, hq = m_.heads / tp_, kvh = std::max<std::int64_t>(1, m_.kv_heads / tp_), hd = m_.head_dim,
                       seqs = seqs_ * tp_, Ta = T_ * tp_;
    const std::string qkv = linear(x, H, (hq + 2 * kvh) * hd, "qkv");
    const std::string q = rope(reshape(slice(qkv, 0, hq * hd, 1, "q"), {Ta, hq, hd}, "q_heads"), hd, "q_rope");
    const std::string k = rope(reshape(slice(qkv, hq * hd, (hq + kvh) * hd, 1, "k"), {Ta, kvh, hd}, "k_heads"), hd, "k_rope");
    const std::string v = slice(qkv, (hq + kvh) * hd, (hq + 2 * kvh) * hd, 1, "v");
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    std::string o;
    if (decode_) {
        outputs_.push_back(k);  // this step's cache rows
        outputs_.push_back(v);
        const std::string kc = input(lname("k_cache"), {seqs, kvh, len_, hd}), vc = input(lname("v_cache"), {seqs, kvh, len_, hd});
        out_.kv_bytes += static_cast<double>(2 * seqs * kvh * len_ * hd * 2);
        const std::string a = node("Attention", lname("attn"), {reshape(q, {seqs, kvh, hq / kvh, hd}, "q_pack"), kc, vc},
                                   ojson{{"k_transposed", 0}, {"scale", scale}}, OpKind::attention);
        o = reshape(a, {Ta, hq * hd}, "attn_flat");
    } else {
        const std::int64_t P = len_;
        out_.kv_bytes += static_cast<double>(2 * seqs * kvh * P * hd * 2);
        o = prefill_attention(reshape(q, {seqs, P, hq, hd}, "q4"), reshape(k, {seqs, P, kvh, hd}, "k4"),
                              reshape(v, {seqs, P, kvh, hd}, "v4"), scale, {Ta, hq * hd});
    }
    return linear(o, hq * hd, H, "o_proj");
}

// The MoE block: router, group-limited top-k, Dispatch (int8 with w8a8) into
// a capacity buffer, the local experts' gate/up, SiLU * up and down, Combine
// (bf16); the shared experts on the die's own tokens beside it.
std::string Builder::moe(const std::string& x) {
    const std::int64_t H = m_.hidden, E = m_.experts, F = m_.moe_intermediate;
    const int epr = static_cast<int>((E + w_.routing.redundant_experts) / ep_);
    const std::string router = node("MatMul", lname("router"), {x, weight(lname("router.weight"), {H, E}, "bf16")}, ojson::object(),
                                    OpKind::matmul, true);
    std::vector<std::string> gate_in = {router};
    if (m_.family == Family::mla_moe) gate_in.push_back(weight(lname("router.bias"), {E}, "fp32"));
    const std::string gate = node("MoEGate", lname("gate"), gate_in,
                                  ojson{{"top_k", m_.experts_per_token}, {"groups", m_.groups}, {"topk_groups", m_.topk_groups}},
                                  OpKind::other, true);
    ojson d = {{"experts", E}, {"capacity", "max"}, {"seed", static_cast<std::int64_t>(w_.routing.seed) + layer_},
               {"quantize", w8a8_ ? "int8" : "none"}};
    if (ep_ < ranks_) {
        ojson g = ojson::array();
        for (int r = 0; r < ep_; ++r) g.push_back(r);
        d["group"] = g;
    }
    // The shared experts' input goes into int8 before the Dispatch and their
    // GEMMs right after it: they run while the tokens travel.
    if (w8a8_ && m_.shared_experts > 0) quantized(x, true);
    const std::string recv = node("Dispatch", lname("dispatch"), {x, gate}, d, OpKind::dispatch, true);
    const std::string shared = m_.shared_experts > 0 ? mlp(x, F * m_.shared_experts, "shared", true) : std::string();
    const char* wt = w8a8_ ? "int8" : "bf16";
    const std::string gu = node("GroupedMatMul", lname("experts.gate_up"), {recv, weight(lname("experts.gate_up.weight"), {epr, H, 2 * F}, wt)},
                                ojson::object(), OpKind::matmul, true);
    std::string act = swiglu(gu, F, "experts", true);
    if (w8a8_) act = node("Quantize", lname("experts.act_q"), {act}, ojson::object(), OpKind::other, true);
    const std::string down = node("GroupedMatMul", lname("experts.down"), {act, weight(lname("experts.down.weight"), {epr, F, H}, wt)},
                                  ojson::object(), OpKind::matmul, true);
    std::string y = node("Combine", lname("combine"), {down, gate}, ojson::object(), OpKind::combine, true);
    if (!shared.empty()) y = node("Add", lname("moe_out"), {y, shared}, ojson::object(), OpKind::other, true);
    return y;
}

void Builder::decoder_layer(std::string& h) {
    const std::int64_t H = m_.hidden;
    // With a core split the MoE stream takes the block from its norm to the
    // residual after it: the attention stream never waits on the other
    // micro-batch's MoE.
    const bool moe = m_.moe_layer(layer_);
    const std::string a = attention(norm(h, H, "input_norm"));
    const std::string h2 = node("Add", lname("attn_residual"), {h, a});
    const std::string x = norm(h2, H, "post_attention_norm", moe);
    const std::string f = moe ? this->moe(x) : mlp(x, m_.intermediate, "mlp", false);
    h = node("Add", lname("ffn_residual"), {h2, f}, ojson::object(), OpKind::other, moe);
}

void Builder::check_deployment() {
    const int ranks = ranks_;
    if (m_.moe() && ranks < 2)
        throw InputError(fmt::format("{}: a MoE model spreads its experts over dies with Dispatch and Combine: it needs a chip "
                                     "with chip.interconnect.ranks > 1 (e.g. configs/chips/a3-supernode.json)", m_.file));
    // Keys only a MoE model reads, given to a dense one.
    if (!m_.moe() && (w_.ep > 0 || w_.routing.redundant_experts > 0 || w_.routing.zipf))
        throw InputError(fmt::format("workload.{}: {} is a dense model (no routed experts): remove it",
                                     w_.ep > 0         ? "ep"
                                     : w_.routing.zipf ? "routing.distribution"
                                                       : "routing.redundant_experts",
                                     m_.file));
    if (w_.ep > ranks || (w_.ep > 0 && ranks % w_.ep != 0))
        throw InputError(fmt::format("workload.ep: {} does not divide the chip's {} dies (chip.interconnect.ranks)", w_.ep, ranks));
    if (m_.moe() && (m_.experts + w_.routing.redundant_experts) % ep_ != 0)
        throw InputError(fmt::format(
            "workload.ep: the {} experts{} do not divide across {} dies{}", m_.experts,
            w_.routing.redundant_experts ? fmt::format(" + {} redundant copies (workload.routing.redundant_experts)",
                                                       w_.routing.redundant_experts)
                                         : std::string(),
            ep_, w_.ep > 0 ? "" : " (workload.ep unset: every die; set it to a width that divides them)"));
    if (ranks % tp_ != 0 || m_.heads % tp_ != 0)
        throw InputError(fmt::format("workload.attention_tp: {} must divide the chip's {} dies and the model's {} heads", tp_, ranks, m_.heads));
    if (w_.layers > m_.layers)
        throw InputError(fmt::format("workload.layers: {} is more than the model's {} layers (num_hidden_layers in {})", w_.layers,
                                     m_.layers, m_.file));
    if (decode_ && w_.kv_len + 1 > m_.max_positions)
        throw InputError(fmt::format("workload.kv_len: {} cached tokens + 1 is beyond the model's max_position_embeddings {} ({})",
                                     w_.kv_len, m_.max_positions, m_.file));
    const std::int64_t context = decode_ ? w_.kv_len + 1 : w_.prompt_len;
    if (m_.sliding_window > 0 && context > m_.sliding_window)
        throw InputError(
            fmt::format("workload.{}: {} tokens of context are beyond the config's sliding_window {} ({}); "
                        "npusim models full attention only, within the window",
                        decode_ ? "kv_len" : "prompt_len", context, m_.sliding_window, m_.file));
    if (!decode_ && w_.prompt_len > m_.max_positions)
        throw InputError(fmt::format("workload.prompt_len: {} is beyond the model's max_position_embeddings {} ({})", w_.prompt_len,
                                     m_.max_positions, m_.file));
    // The core split is read with two micro-batches only (the config loader
    // refuses it beside one unless a later input set microbatches 1).
    const bool split = mbs_ == 2 && w_.attention_cores.cube > 0;
    if (mbs_ == 2 && (w_.attention_cores.cube > 0) != (w_.moe_cores.cube > 0))
        throw InputError("workload.streams: give both streams, attention and moe");
    if (mbs_ == 2 && !split)
        throw InputError("workload.microbatches: 2 needs workload.streams, the core split of the two streams, e.g. "
                         "{\"attention\": {\"cube\": 16, \"vector\": 32}, \"moe\": {\"cube\": 8, \"vector\": 16}}");
    if (mbs_ == 2 && w_.batch % 2 != 0)
        throw InputError(fmt::format("workload.batch: {} sequences do not split into 2 micro-batches", w_.batch));
    if (split && (w_.attention_cores.cube + w_.moe_cores.cube > chip_.cube.count ||
                  w_.attention_cores.vector + w_.moe_cores.vector > chip_.vector.count))
        throw InputError(fmt::format("workload.streams: {} cube + {} vector cores, but a die of chip '{}' has {} cube and {} vector "
                                     "cores (chip.cores.cube.count, chip.cores.vector.count)",
                                     w_.attention_cores.cube + w_.moe_cores.cube, w_.attention_cores.vector + w_.moe_cores.vector,
                                     chip_.name, chip_.cube.count, chip_.vector.count));
    if (w_.shared_expert_ranks > 0 && m_.shared_experts == 0)
        throw InputError(fmt::format("workload.shared_expert_ranks: {} has no shared experts: remove it", m_.file));
    if (w_.shared_expert_ranks > 0)
        throw InputError("workload.shared_expert_ranks: dies that host only shared-expert replicas are not modelled yet; with 0 "
                         "every die runs the shared expert on its own tokens");
}

LlmGraph Builder::build() {
    ranks_ = std::max(1, chip_.interconnect.ranks);
    ep_ = w_.ep > 0 ? w_.ep : ranks_;
    tp_ = w_.attention_tp;
    mbs_ = w_.microbatches;
    w8a8_ = w_.quant == LlmWorkload::Quant::w8a8;
    decode_ = w_.phase == LlmWorkload::Phase::decode;
    check_deployment();
    const int layers = w_.layers > 0 ? w_.layers : static_cast<int>(m_.layers);
    if (m_.moe() && layers <= m_.first_dense)
        out_.warnings.push_back(fmt::format(
            "workload.layers {}: the first {} layers of {} are dense (first_k_dense_replace), so no MoE layer runs "
            "(no Dispatch, experts or Combine); give layers {} or more to run one",
            layers, m_.first_dense, m_.file, m_.first_dense + 1));
    if (mbs_ == 2 && w_.attention_cores.cube > 0) {
        const auto& a = w_.attention_cores;
        const auto& m = w_.moe_cores;
        attention_cores_ = ojson{{"cube", {0, a.cube}}, {"vector", {0, a.vector}}};
        moe_cores_ = ojson{{"cube", {a.cube, a.cube + m.cube}}, {"vector", {a.vector, a.vector + m.vector}}};
    }
    seqs_ = w_.batch / mbs_;
    len_ = decode_ ? w_.kv_len : w_.prompt_len;
    T_ = decode_ ? seqs_ : seqs_ * len_;
    // Embedding per micro-batch, then layer by layer (both micro-batches'
    // nodes of a layer together), then the final norm, the LM head and the
    // sampling.
    std::vector<std::string> h(static_cast<std::size_t>(mbs_));
    const auto each = [&](const auto& f) {
        for (mb_ = 0; mb_ < mbs_; ++mb_) {
            pre_ = mbs_ > 1 ? fmt::format("m{}.", mb_) : std::string();
            quantized_.clear();
            f(h[static_cast<std::size_t>(mb_)]);
        }
    };
    layer_ = -1;
    each([&](std::string& x) {
        const std::string ids = input("token_ids", {T_}, "fp32");
        x = node("Gather", "embed", {weight("embed.weight", {m_.vocab, m_.hidden}, "bf16"), ids});
    });
    for (layer_ = 0; layer_ < layers; ++layer_) each([&](std::string& x) { decoder_layer(x); });
    layer_ = -1;
    std::vector<std::string> last;
    each([&](std::string& x) {
        std::string t = norm(x, m_.hidden, "final_norm");
        if (!decode_) {  // the LM head samples after each prompt's last token
            t = slice(reshape(t, {seqs_, len_, m_.hidden}, "final_seq"), len_ - 1, len_, 1, "final_last");
            t = reshape(t, {seqs_, m_.hidden}, "final_tokens");
        }
        last.push_back(t);
    });
    // One LM head over both micro-batches' tokens (it reads the whole
    // vocabulary matrix once); tied embeddings: the embedding, transposed.
    pre_.clear();
    mb_ = 0;
    const std::string tokens = last.size() > 1 ? node("Concat", "final_tokens", last, ojson{{"axis", 0}}) : last.front();
    const std::string logits =
        m_.tied_embeddings
            ? node("MatMul", "lm_head", {tokens, weight("embed.weight", {m_.vocab, m_.hidden}, "bf16")}, ojson{{"transpose_b", 1}}, OpKind::matmul)
            : node("MatMul", "lm_head", {tokens, weight("lm_head.weight", {m_.hidden, m_.vocab}, "bf16")}, ojson::object(), OpKind::matmul);
    outputs_.push_back(node("ArgMax", "sample", {logits}, ojson{{"axis", -1}}));
    const double hbm = chip_.hbm.size_gb * 1e9;
    // (With workload.capacity warn the compiler's footprint check warns instead.)
    if (out_.weight_bytes + out_.kv_bytes > hbm && w_.capacity_error)
        throw InputError(
            fmt::format("workload: a die needs {:.1f} GB (weights {:.1f} GB + KV cache {:.1f} GB) but holds {:.1f} GB "
                        "(chip.hbm.size_gb); use {}a smaller batch or {}, {}"
                        "--set workload.capacity=warn to run it anyway",
                        (out_.weight_bytes + out_.kv_bytes) / 1e9, out_.weight_bytes / 1e9, out_.kv_bytes / 1e9,
                        chip_.hbm.size_gb, m_.moe() ? "more dies (ep), " : "", decode_ ? "kv_len" : "prompt_len",
                        w_.quant == LlmWorkload::Quant::bf16 ? "quant w8a8, or " : "or "));
    ojson doc = ojson::object();
    doc["kind"] = "graph";
    doc["name"] = !w_.name.empty() ? w_.name
                                   : fmt::format("{} {} ({} layers, batch {} per die{})", m_.model_type, decode_ ? "decode" : "prefill",
                                                 layers, w_.batch, mbs_ > 1 ? ", 2 micro-batches" : "");
    doc["notes"] = fmt::format("Built by npusim from {} (docs/llm.md): one die's graph; every die of the chip runs it.", m_.file);
    // The workload keys an llm run compiles its graph with (cli/llm_run.cpp),
    // so the written graph runs as the llm run does.
    doc["workload"] = {{"variant", w_.comm_optimized ? "optimized" : "baseline"},
                       {"capacity", w_.capacity_error ? "error" : "warn"},
                       {"routing",
                        {{"distribution", w_.routing.zipf ? "zipf" : "uniform"},
                         {"skew", w_.routing.skew},
                         {"seed", w_.routing.seed},
                         {"redundant_experts", w_.routing.redundant_experts}}}};
    doc["tensors"] = tensors_;
    doc["nodes"] = nodes_;
    doc["outputs"] = outputs_;
    out_.text = doc.dump(1);
    out_.layers = layers;
    out_.microbatches = mbs_;
    out_.tokens_per_die = static_cast<double>(decode_ ? w_.batch : w_.batch * w_.prompt_len);
    return out_;
}

}  // namespace

}  // namespace npusim::llm

namespace npusim::llm {

const char* to_string(OpKind k) {
    switch (k) {
        case OpKind::matmul: return "matmul";
        case OpKind::attention: return "attention";
        case OpKind::dispatch: return "dispatch";
        case OpKind::combine: return "combine";
        case OpKind::other: return "other";
    }
    return "other";
}

LlmGraph build_llm_graph(const ModelShape& m, const LlmWorkload& w, const ChipParams& chip) { return Builder(m, w, chip).build(); }

}  // namespace npusim::llm
