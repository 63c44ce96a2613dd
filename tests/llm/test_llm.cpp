// LLM serving (docs/llm.md): Hugging Face configs -> shapes and parameter
// counts against the published totals, the per-die graph the builder
// makes, the deployments it refuses, and decode / prefill steps through the
// binary at reduced size.
//
// SystemC cannot restart in a process: every TEST_CASE here runs at most one
// simulation (ctest runs each case in its own process).
#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "config/run_config.hpp"
#include "llm/hf_config.hpp"
#include "llm/llm_graph.hpp"
#include "support/e2e.hpp"

using namespace npusim;
using namespace npusim::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
const std::string kSuper = kSrc + "/configs/chips/a3-supernode.json";
const std::string kA2 = kSrc + "/configs/chips/a2.json";
const std::string kDeepSeek = kSrc + "/models/llm/deepseek_v3.json";
const std::string kLlama = kSrc + "/models/llm/llama3_8b.json";
const std::string kMixtral = kSrc + "/models/llm/mixtral_8x7b.json";

llm::ModelShape model(const std::string& name) { return llm::read_hf_config(kSrc + "/models/llm/" + name + ".config.json"); }

// The graph a run file builds on a chip, with --set overrides.
json graph_of(const std::string& chip, const std::string& run, const std::vector<std::string>& sets, llm::LlmGraph* out = nullptr) {
    const RunConfig cfg = RunConfig::load(chip, run, sets);
    const llm::LlmGraph g = llm::build_llm_graph(llm::read_hf_config(cfg.workload().llm.model), cfg.workload().llm, cfg.chip());
    if (out) *out = g;
    return json::parse(g.text);
}

const json* find_node(const json& g, const std::string& name) {
    for (const json& n : g["nodes"])
        if (n["name"] == name) return &n;
    return nullptr;
}

std::string build_error(const std::string& chip, const std::string& run, const std::vector<std::string>& sets) {
    try {
        graph_of(chip, run, sets);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("llm config: parameter counts of the bundled models are the published totals within 1%", "[llm][config]") {
    // DeepSeek-V3 main model (without the MTP module): 671 B in all, 36.6 B
    // activated per token counting the output head but not the embedding
    // table, as its model card counts them.
    const llm::ModelShape ds = model("deepseek_v3");
    CHECK(ds.family == llm::Family::mla_moe);
    CHECK(ds.layers == 61);
    CHECK(ds.first_dense == 3);
    CHECK(llm::count_params(ds).total() == Approx(671e9).epsilon(0.01));
    CHECK(llm::active_params(ds, false) == Approx(36.6e9).epsilon(0.01));
    // Llama-3.1-8B: 8.03 B.
    const llm::ModelShape llama = model("llama3_8b");
    CHECK(llama.family == llm::Family::gqa_dense);
    CHECK(llm::count_params(llama).total() == Approx(8.03e9).epsilon(0.01));
    // Mixtral-8x7B: 46.7 B in all, 12.9 B active counting the embedding, as Mistral counts them.
    const llm::ModelShape mix = model("mixtral_8x7b");
    CHECK(mix.family == llm::Family::gqa_moe);
    CHECK(llm::count_params(mix).total() == Approx(46.7e9).epsilon(0.01));
    CHECK(llm::active_params(mix, true) == Approx(12.9e9).epsilon(0.01));
    // The KV cache per token and layer: DeepSeek's latent (512 + 64), Llama's k and v of 8 heads of 128.
    CHECK(ds.kv_elements_per_token() == 576);
    CHECK(llama.kv_elements_per_token() == 2048);
}

TEST_CASE("llm config: an unsupported model_type or a missing field exits 2 naming it and the file", "[llm][config]") {
    TempDir tmp;
    json c = read_json(kSrc + "/models/llm/llama3_8b.config.json");
    c["model_type"] = "lama";
    const std::string bad_type = tmp.write("bad_type.json", c.dump());
    CHECK_THROWS_WITH(llm::read_hf_config(bad_type), Contains("bad_type.json") && Contains("model_type 'lama' is not supported") &&
                                                        Contains("did you mean 'llama'"));
    c = read_json(kSrc + "/models/llm/deepseek_v3.config.json");
    c.erase("kv_lora_rank");
    const std::string missing = tmp.write("missing.json", c.dump());
    CHECK_THROWS_WITH(llm::read_hf_config(missing), Contains("missing.json") && Contains("field 'kv_lora_rank' is missing"));
    // Through the binary: exit 2, one line.
    json run = read_json(kLlama);
    run["model"] = missing;
    const std::string run_file = tmp.write("run.json", run.dump());
    const Result r = run_npusim(tmp, {"run", "--chip", kA2, "--workload", run_file});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("kv_lora_rank"));
    // A field that would make another model than the one npusim builds is
    // an error too, not run as the usual model.
    c = read_json(kSrc + "/models/llm/llama3_8b.config.json");
    c["model_type"] = 3;
    CHECK_THROWS_WITH(llm::read_hf_config(tmp.write("type.json", c.dump())),
                      Contains("field 'model_type': expected a string"));
    c["model_type"] = "llama";
    c["hidden_act"] = "gelu";
    CHECK_THROWS_WITH(llm::read_hf_config(tmp.write("gelu.json", c.dump())),
                      Contains("hidden_act 'gelu' is not modelled"));
    c = read_json(kSrc + "/models/llm/deepseek_v3.config.json");
    c["moe_layer_freq"] = 2;
    CHECK_THROWS_WITH(llm::read_hf_config(tmp.write("freq.json", c.dump())),
                      Contains("moe_layer_freq 2 is not modelled"));
    // A sliding window matters only beyond it: 4 K cached tokens over a
    // 1 K window is refused, 512 within it runs as full attention.
    c = read_json(kSrc + "/models/llm/llama3_8b.config.json");
    c["sliding_window"] = 1024;
    run = read_json(kLlama);
    run["model"] = tmp.write("window.json", c.dump());
    const std::string windowed = tmp.write("windowed.json", run.dump());
    CHECK_THAT(build_error(kA2, windowed, {"workload.layers=1"}),
               Contains("workload.kv_len: 4097 tokens of context are beyond the config's sliding_window 1024"));
    CHECK(build_error(kA2, windowed, {"workload.layers=1", "workload.kv_len=512"}) == "");
    // A config that is not there: the key, the path as resolved, who set it.
    const Result none =
        run_npusim(tmp, {"run", "--chip", kA2, "--workload", kLlama, "--set", "workload.model=no_such.json"});
    CHECK(none.code == 2);
    CHECK_THAT(none.err,
               Contains("--set workload.model=no_such.json: workload.model: no model config at 'no_such.json'"));
}

TEST_CASE("llm graph: a DeepSeek-V3 run of only its dense layers says that no MoE layer runs", "[llm][graph]") {
    llm::LlmGraph three, four, llama;
    graph_of(kSuper, kDeepSeek, {"workload.layers=3"}, &three);
    REQUIRE(three.warnings.size() == 1);
    CHECK_THAT(three.warnings[0], Contains("first 3 layers") && Contains("no MoE layer runs") && Contains("layers 4"));
    graph_of(kSuper, kDeepSeek, {"workload.layers=4"}, &four);
    CHECK(four.warnings.empty());
    graph_of(kA2, kLlama, {"workload.layers=1"}, &llama);  // dense by design: nothing to say
    CHECK(llama.warnings.empty());
}

TEST_CASE("llm graph: the DeepSeek-V3 decode graph has MLA over the latent cache, dense then MoE layers and the LM head",
          "[llm][graph]") {
    llm::LlmGraph built;
    const json g = graph_of(kSuper, kDeepSeek, {"workload.layers=5"}, &built);
    CHECK(built.layers == 5);
    CHECK(built.microbatches == 2);
    // Micro-batch 0 of layer 4: MLA over [24 sequences, 1, 4096 tokens, 512 + 64].
    const json* mla = find_node(g, "m0.l4.mla");
    REQUIRE(mla);
    CHECK((*mla)["attrs"]["v_dim"] == 512);
    CHECK(g["tensors"]["m0.l4.kv_cache"]["shape"] == json::array({24, 1, 4096, 576}));
    // Layers 0-2 are dense (first_k_dense_replace 3), 3 and 4 MoE.
    CHECK(find_node(g, "m0.l2.mlp.gate_up"));
    CHECK_FALSE(find_node(g, "m0.l2.dispatch"));
    const json* d = find_node(g, "m1.l3.dispatch");
    REQUIRE(d);
    CHECK((*d)["attrs"]["experts"] == 256);
    CHECK((*d)["attrs"]["capacity"] == "max");
    CHECK((*d)["attrs"]["quantize"] == "int8");
    CHECK((*d)["cores"] == json::parse(R"({"cube":[16,24],"vector":[32,48]})"));
    CHECK((*find_node(g, "m1.l3.mla"))["cores"] == json::parse(R"({"cube":[0,16],"vector":[0,32]})"));
    // Each die holds one expert slot: 256 + 32 redundant over 288 dies.
    CHECK(g["tensors"]["l3.experts.gate_up.weight"]["shape"] == json::array({1, 7168, 4096}));
    CHECK(g["tensors"]["l3.experts.gate_up.weight"]["dtype"] == "int8");
    // One LM head over both micro-batches' 48 tokens.
    CHECK(find_node(g, "lm_head"));
    CHECK(g["tensors"]["lm_head.weight"]["shape"] == json::array({7168, 129280}));
    // Per die: KV cache of 5 layers, 48 sequences x 4096 x 576 bf16.
    CHECK(built.kv_bytes == Approx(5.0 * 48 * 4096 * 576 * 2));
}

TEST_CASE(
    "llm graph: prefill attention reads the heads where the projections wrote them (BSND) on a Cube that loads plain tensors",
    "[llm][graph]") {
    // a3's Cube converts plain operands on its loads and stores: no Transpose
    // of the heads before or after attention, for MLA and for GQA.
    for (const std::string& run : {kDeepSeek, kLlama}) {
        CAPTURE(run);
        std::vector<std::string> prefill = {"workload.phase=prefill", "workload.layers=1", "workload.prompt_len=256",
                                            "workload.batch=2", "chip.interconnect.ranks=32"};
        if (run == kDeepSeek) prefill.push_back("workload.ep=32");  // a dense model takes no ep
        // The Transposes and the attention's layout attribute of a graph.
        const auto count = [](const json& g, int& transposes, std::set<std::string>& layouts) {
            for (const json& n : g["nodes"]) {
                transposes += n["op"] == "Transpose";
                if (n["op"] == "Attention") layouts.insert(n["attrs"].value("layout", "BNSD"));
            }
        };
        int transposes = 0;
        std::set<std::string> layouts;
        const json g = graph_of(kSuper, run, prefill);
        count(g, transposes, layouts);
        CHECK(layouts == std::set<std::string>{"BSND"});
        CHECK(transposes == 0);
        // MLA's rope parts go to the attention apart: nothing is concatenated.
        if (run == kDeepSeek) {
            for (const json& n : g["nodes"])
                if (n["name"].get<std::string>().find(".l0.") != std::string::npos) CHECK(n["op"] != "Concat");
            CHECK((*find_node(g, "m0.l0.attn"))["inputs"].size() == 5);
        }
        // A Cube that loads only fractal matrices gets the heads transposed.
        std::vector<std::string> off = prefill;
        off.push_back("chip.cores.cube.mte2_nd2nz=false");
        llm::LlmGraph built;
        transposes = 0;
        layouts.clear();
        count(graph_of(kSuper, run, off, &built), transposes, layouts);
        CHECK(layouts == std::set<std::string>{"BNSD"});
        CHECK(transposes == 4 * built.microbatches);  // q, k, v and the output of each micro-batch's attention
    }
}

TEST_CASE("llm graph: deployments the chip or the model cannot run exit 2 with the key path", "[llm][graph]") {
    CHECK_THAT(build_error(kSuper, kDeepSeek, {"workload.ep=100"}), Contains("workload.ep: 100 does not divide the chip's 288 dies"));
    CHECK_THAT(build_error(kSuper, kDeepSeek, {"workload.ep=96", "workload.routing.redundant_experts=0"}),
               Contains("workload.ep: the 256 experts do not divide across 96 dies"));
    CHECK_THAT(build_error(kSuper, kDeepSeek,
                           {"workload.ep=0", "chip.interconnect.ranks=96", "workload.routing.redundant_experts=0"}),
               Contains("do not divide across 96 dies (workload.ep unset: every die;"));
    CHECK_THAT(build_error(kSuper, kDeepSeek, {"workload.ep=48", "workload.routing.redundant_experts=8"}),
               Contains("workload.ep: the 256 experts + 8 redundant copies (workload.routing.redundant_experts) do not divide "
                        "across 48 dies"));
    CHECK_THAT(build_error(kSuper, kDeepSeek, {"workload.kv_len=200000"}), Contains("workload.kv_len") && Contains("163840"));
    CHECK_THAT(build_error(kSuper, kDeepSeek, {"workload.streams.moe.cube=9"}),
               Contains("workload.streams: 25 cube + 48 vector cores") && Contains("24 cube"));
    CHECK_THAT(build_error(kSuper, kDeepSeek, {"workload.batch=47"}), Contains("workload.batch: 47 sequences do not split"));
    CHECK_THAT(build_error(kA2, kMixtral, {}), Contains("needs a chip with chip.interconnect.ranks > 1"));
    // 64 GB of HBM: 1024 sequences of 4 K tokens of every layer's latent do not fit.
    // The message gives both figures: what a die needs (weights + cache)
    // and what it holds; twice the sequences, twice the cache.
    const auto hbm_figures = [&](int batch) {
        const std::string e = build_error(kSuper, kDeepSeek, {"workload.batch=" + std::to_string(batch)});
        std::smatch m;
        const std::regex figures(
            R"(a die needs ([0-9.]+) GB \(weights ([0-9.]+) GB \+ KV cache ([0-9.]+) GB\) but holds ([0-9.]+) GB)");
        INFO(e);
        REQUIRE(std::regex_search(e, m, figures));
        CHECK_THAT(e, Contains("chip.hbm.size_gb"));
        return std::array<double, 4>{std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), std::stod(m[4])};
    };
    const auto b1024 = hbm_figures(1024), b2048 = hbm_figures(2048);
    CHECK(b1024[0] == Approx(b1024[1] + b1024[2]).margin(0.1));
    CHECK(b1024[0] > b1024[3]);
    CHECK(b1024[3] == 64.0);
    CHECK(b2048[1] == b1024[1]);
    CHECK(b2048[2] == Approx(2 * b1024[2]).margin(0.1));
    CHECK_THAT(build_error(kSuper, kDeepSeek, {"workload.batch=0"}),
               Contains("workload.batch") && Contains(">= 1, got 0"));
    // A key the phase does not read is an error, not ignored: a prompt
    // length on a decode run, a cache length on the prefill run file. A
    // decode run file switched to prefill by --set keeps its kv_len unread.
    CHECK_THAT(
        build_error(kSuper, kDeepSeek, {"workload.prompt_len=1024"}),
        Contains("--set workload.prompt_len=1024: workload.prompt_len: read only when workload.phase is prefill"));
    CHECK_THAT(build_error(kSuper, kSrc + "/models/llm/deepseek_v3_prefill.json", {"workload.kv_len=1024"}),
               Contains("workload.kv_len: read only when workload.phase is decode, but it is \"prefill\""));
    CHECK(build_error(kSuper, kDeepSeek, {"workload.phase=prefill", "workload.layers=1", "workload.batch=2"}) == "");
    // microbatches 2 without a core split; a typo in the split.
    TempDir tmp;
    json run = read_json(kDeepSeek);
    run.erase("streams");
    run["model"] = kSrc + "/models/llm/deepseek_v3.config.json";
    const std::string no_split = tmp.write("no_split.json", run.dump());
    CHECK_THAT(build_error(kSuper, no_split, {}), Contains("workload.microbatches: 2 needs workload.streams"));
    const Result r = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kDeepSeek, "--set", "workload.streams.atention.cube=8"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("did you mean 'attention'"));
    // A split of one stream only; a split beside one micro-batch (read only
    // with two), unless a later --set chose one micro-batch.
    CHECK_THAT(build_error(kSuper, no_split, {R"(workload.streams={"moe": {"cube": 8, "vector": 16}})"}),
               Contains("workload.streams: give both streams, attention and moe"));
    json one_mb = read_json(kDeepSeek);
    one_mb["model"] = kSrc + "/models/llm/deepseek_v3.config.json";
    one_mb["microbatches"] = 1;
    CHECK_THAT(build_error(kSuper, tmp.write("one_mb.json", one_mb.dump()), {}),
               Contains("workload.streams: read only when workload.microbatches is 2, but it is 1"));
    CHECK(build_error(kSuper, kDeepSeek, {"workload.microbatches=1", "workload.layers=1"}) == "");
    // Keys only a MoE model reads, on a dense one; the error names the --set
    // that gave the key, not the run file.
    const Result dense = run_npusim(tmp, {"run", "--chip", kSuper, "--workload", kLlama, "--set", "workload.ep=3"});
    CHECK(dense.code == 2);
    CHECK_THAT(dense.err,
               Contains("--set workload.ep=3: workload.ep:") && Contains("is a dense model (no routed experts)"));
    CHECK_THAT(build_error(kSuper, kLlama, {"workload.routing.redundant_experts=4"}),
               Contains("workload.routing.redundant_experts:") && Contains("dense model"));
    CHECK_THAT(build_error(kSuper, kMixtral, {"workload.shared_expert_ranks=1", "chip.interconnect.ranks=8"}),
               Contains("workload.shared_expert_ranks:") && Contains("has no shared experts"));
}

TEST_CASE("llm compile: a graph of few Cube kernels on a core split compiles (no plan on fewer cores than the split)",
          "[llm][e2e]") {
    // One Mixtral layer: few enough Cube kernels that the compiler also
    // plans for fewer Cube cores, but the streams pin cores 16..23.
    TempDir tmp;
    const Result r = run_npusim(
        tmp, {"compile", "--chip", kSuper, "--workload", kMixtral, "--set", "chip.interconnect.ranks=8", "--set",
              "workload.layers=1", "--set", "workload.microbatches=2", "--set",
              R"(workload.streams={"attention": {"cube": 16, "vector": 32}, "moe": {"cube": 8, "vector": 16}})",
              "--emit-tasks", tmp.path("t.jsonl")});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("1 distinct rank program"));
}

TEST_CASE("llm decode: a reduced DeepSeek-V3 step on 16 dies reports the serving figures", "[slow][llm][e2e]") {
    TempDir tmp;
    const json s = run_for_stats(tmp, kSuper, kDeepSeek,
                                 {"chip.interconnect.ranks=16", "workload.layers=4", "workload.batch=8", "workload.kv_len=1024",
                                  "workload.routing.redundant_experts=0"});
    const json& l = s["llm"];
    CHECK(l["layers"] == 4);
    CHECK(l["step_ns"].get<double>() == Approx(s["total_ns"].get<double>()));
    // Each layer's end, in order, within the step; their gaps average to layer_ns.
    REQUIRE(l["layer_ends_ns"].size() == 4);
    for (std::size_t i = 1; i < 4; ++i)
        CHECK(l["layer_ends_ns"][i].get<double>() > l["layer_ends_ns"][i - 1].get<double>());
    CHECK(l["layer_ends_ns"][3].get<double>() <= l["step_ns"].get<double>());
    CHECK(l["layer_ends_ns"][3].get<double>() / 4 == Approx(l["layer_ns"].get<double>()).epsilon(0.001));
    CHECK(l["tpot_ns"].get<double>() == Approx(l["step_ns"].get<double>()));
    CHECK(l["tokens_per_s_per_die"].get<double>() == Approx(8 / (l["step_ns"].get<double>() * 1e-9)));
    double shares = 0;
    for (const char* k : {"matmul", "attention", "dispatch", "combine", "other"}) {
        CHECK(l["op_time_shares"][k].get<double>() >= 0);
        shares += l["op_time_shares"][k].get<double>();
    }
    CHECK(shares == Approx(1.0));
    CHECK(l["op_time_shares"]["dispatch"].get<double>() > 0);
    CHECK(l["op_time_shares"]["attention"].get<double>() > 0);
    // An op counts while its tasks run, not while its tiles wait for their
    // inputs (a norm's tiles behind the GEMM before it, the concat of the
    // two micro-batches behind the later one). The other ops (norms,
    // residual adds, quantising, gating, that concat) move under 1% of the
    // bytes the MatMuls stream, so even at a task's fixed costs they stay
    // far below them.
    CHECK(l["op_time_shares"]["other"].get<double>() < 0.1 * l["op_time_shares"]["matmul"].get<double>());
    CHECK(l["rank_imbalance"].get<double>() >= 1.0);
    CHECK(l["microbatch_overlap"].get<double>() > 0);
    CHECK(s["compile"]["rank_programs"] == 1);  // one compiled program for every die
    CHECK(s["memory_model"]["stale_reads"] == 0);
    // Most tasks read whole producer ops (the attention a whole cache, a GEMM
    // a whole activation): one counting event each, not a wait per producer
    // tile (dozens each). A transpose's tile waits for the tiles its rows
    // come from. 3.7 waits per task.
    CHECK(s["compile"]["sync_waits"].get<double>() < 5 * s["compile"]["tasks"].get<double>());
    // The experts' kernels, whose rows are known only at run time, run the
    // plans they were compiled with on every die, however few rows it got.
    CHECK(s["units"]["cube"]["replanned_tasks"] == 0);
    CHECK(s["units"]["vector"]["replanned_tasks"] == 0);
}

TEST_CASE("llm compile: the graph --emit-graph writes runs as a graph workload to the llm run's own step",
          "[slow][llm][e2e]") {
    // 256 experts + 32 redundant copies over 16 dies: the graph carries the
    // routing the llm run compiled it with.
    TempDir tmp;
    const std::vector<std::string> sets = {"chip.interconnect.ranks=16", "workload.layers=4", "workload.batch=8",
                                           "workload.kv_len=1024"};
    std::vector<std::string> args = {"compile",      "--chip",           kSuper, "--workload", kDeepSeek,
                                     "--emit-graph", tmp.path("g.json"), "-q"};
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    REQUIRE(run_npusim(tmp, args).code == 0);
    const json llm = run_for_stats(tmp, kSuper, kDeepSeek, sets);
    const json graph = run_for_stats(tmp, kSuper, tmp.path("g.json"), {"chip.interconnect.ranks=16"});
    CHECK(graph["total_ns"].get<double>() == llm["total_ns"].get<double>());
}

TEST_CASE("llm what-if: a decode step responds to HBM, KV length and batch, and its Dispatch and Combine to link bandwidth",
          "[slow][llm][e2e][whatif]") {
    TempDir tmp;
    const std::vector<std::string> base = {"chip.interconnect.ranks=16", "workload.layers=4", "workload.batch=8",
                                           "workload.kv_len=1024", "workload.routing.redundant_experts=0"};
    auto with = [&](std::vector<std::string> sets) {
        sets.insert(sets.begin(), base.begin(), base.end());
        return run_for_stats(tmp, kSuper, kDeepSeek, sets)["llm"];
    };
    const json b = with({});
    const double step = b["step_ns"].get<double>();
    // Decode at 8 sequences reads every weight and the cache once a step:
    // half the HBM bandwidth makes it much slower (not quite 2x: the
    // Dispatch, Combine and launch costs stay).
    const double hbm = with({"chip.hbm.bandwidth_gbps=800"})["step_ns"].get<double>() / step;
    // Twice the cache: attention reads twice the latent cache, the weights
    // stay: slower, by less than the HBM halving.
    const double kv = with({"workload.kv_len=2048"})["step_ns"].get<double>() / step;
    // A quarter of the link planes' bandwidth: the MoE layer's Dispatch and
    // Combine take longer. Only a little (+1.3%): at 8 sequences a die
    // sends 0.46 MB a Dispatch, 2.3 us at 196 GB/s, and their op time is
    // mostly the AIV cores' own work and waiting for the other dies; the
    // step hardly moves (the dense layers' weights and the LM head set it).
    const auto comm_ns = [](const json& l) {
        return (l["op_time_shares"]["dispatch"].get<double>() + l["op_time_shares"]["combine"].get<double>()) *
               l["step_ns"].get<double>();
    };
    const double link = comm_ns(with({"chip.interconnect.intra_node.plane_bandwidth_gbps=7",
                                      "chip.interconnect.inter_node.plane_bandwidth_gbps=7"})) /
                        comm_ns(b);
    // Twice the batch: the weights are read once for twice the tokens, so
    // tokens/s per die grows, by less than 2x.
    const json b2 = with({"workload.batch=16"});
    const double tps = b2["tokens_per_s_per_die"].get<double>() / b["tokens_per_s_per_die"].get<double>();
    CAPTURE(step, hbm, kv, link, tps);
    CHECK(hbm > 1.3);
    CHECK(hbm < 2.05);
    CHECK(kv > 1.005);
    CHECK(kv < hbm);
    CHECK(link > 1.0);
    CHECK(link < 4.0);
    CHECK(tps > 1.2);
    CHECK(tps < 2.0);
}

TEST_CASE("llm decode: a GQA model reads its whole KV cache from HBM each step", "[llm][e2e]") {
    // Attention's p·v reads the probabilities from L2 and V from the cache
    // in HBM: twice the cache adds every new K and V byte to HBM's reads.
    TempDir tmp;
    auto with = [&](int kv) {
        return run_for_stats(tmp, kA2, kLlama,
                             {"workload.layers=1", "workload.batch=8", fmt::format("workload.kv_len={}", kv)});
    };
    const json s1 = with(4096), s2 = with(8192);
    const double read1 = s1["memory"]["hbm"]["read_bytes"].get<double>();
    const double read2 = s2["memory"]["hbm"]["read_bytes"].get<double>();
    // 8 sequences x 4096 more tokens x K and V of 8 heads x 128 bf16 values.
    const double added_cache = 8.0 * 4096 * 2 * 8 * 128 * 2;
    CHECK((read2 - read1) / added_cache == Approx(1.0).epsilon(0.01));
}

TEST_CASE("llm prefill: a dense GQA model's prompt on one die follows its FLOPs", "[slow][llm][e2e]") {
    TempDir tmp;
    const std::vector<std::string> base = {"workload.phase=prefill", "workload.layers=2", "workload.batch=1"};
    auto with = [&](const std::string& p) {
        std::vector<std::string> v = base;
        v.push_back(p);
        return run_for_stats(tmp, kA2, kLlama, v);
    };
    const json s512 = with("workload.prompt_len=512"), s2048 = with("workload.prompt_len=2048");
    CHECK(s512["llm"]["tokens_per_s_per_die"].get<double>() > 0);
    CHECK_FALSE(s512["llm"].contains("tpot_ns"));
    // 4x the tokens: a layer's linear FLOPs grow 4x and causal attention's
    // 16x, its weights are read once either way: the layers take more than
    // 3x as long (the LM head samples one token per prompt either way).
    const double r = s2048["llm"]["layer_ns"].get<double>() / s512["llm"]["layer_ns"].get<double>();
    CHECK(r > 3.0);
    CHECK(r < 8.0);
    const double step = s2048["llm"]["step_ns"].get<double>() / s512["llm"]["step_ns"].get<double>();
    CHECK(step < r);
}

namespace {

// One op on a2, as a graph: its time and bytes from the op table.
json op_stats(const TempDir& tmp, const std::string& name, const json& tensors, const json& node) {
    json g = {{"kind", "graph"}, {"name", name}, {"tensors", tensors}, {"nodes", json::array({node})}, {"outputs", {node["outputs"][0]}}};
    const std::string file = tmp.write(name + ".json", g.dump());
    return run_for_stats(tmp, kA2, file);
}

double op_ns(const json& s, const std::string& op) {
    for (const json& o : s["ops"])
        if (o["name"] == op) return (o["end_ns"].get<double>() - o["start_ns"].get<double>());
    FAIL("no op " << op);
    return 0;
}

}  // namespace

TEST_CASE("llm ops: MLAttention reads the latent cache once per step and its time follows the cache", "[llm][ops]") {
    TempDir tmp;
    // 16 sequences, 128 heads packed as query rows, 576-wide latent rows.
    const auto stats = [&](int len) {
        const json t = {{"q", {{"shape", {16, 1, 128, 576}}, {"dtype", "bf16"}, {"input", true}}},
                        {"cache", {{"shape", {16, 1, len, 576}}, {"dtype", "bf16"}, {"input", true}}}};
        const json n = {{"name", "mla"}, {"op", "MLAttention"}, {"inputs", {"q", "cache"}}, {"outputs", {"o"}}, {"attrs", {{"v_dim", 512}}}};
        return op_stats(tmp, "mla" + std::to_string(len), t, n);
    };
    const json s2k = stats(2048), s8k = stats(8192);
    // Memory bound: 4x the cache, about 4x the time (less the fixed part).
    const double r = op_ns(s8k, "mla") / op_ns(s2k, "mla");
    CHECK(r > 3.0);
    CHECK(r < 4.4);
    // The cache comes from HBM once: q·kᵀ reads it, p·v reads its first 512
    // columns again (from L2), so at least the cache's bytes, at most twice.
    const double cache = 16.0 * 8192 * 576 * 2;
    const double hbm = s8k["memory"]["hbm"]["read_bytes"].get<double>();
    CHECK(hbm > cache);
    CHECK(hbm < 1.3 * cache);
}

TEST_CASE("llm ops: an int8 MatMul with per-column scales is dequantised to bf16 and its decode time follows the weight bytes",
          "[llm][ops]") {
    TempDir tmp;
    const auto stats = [&](int n) {
        const json t = {{"x", {{"shape", {32, 7168}}, {"dtype", "int8"}, {"input", true}}},
                        {"w", {{"shape", {7168, n}}, {"dtype", "int8"}, {"const", true}}},
                        {"s", {{"shape", {n}}, {"dtype", "fp32"}, {"const", true}}}};
        const json node = {{"name", "mm"}, {"op", "MatMul"}, {"inputs", {"x", "w", "s"}}, {"outputs", {"y"}}};
        return op_stats(tmp, "mm" + std::to_string(n), t, node);
    };
    const json a = stats(8192), b = stats(32768);
    const double r = op_ns(b, "mm") / op_ns(a, "mm");
    CHECK(r > 3.0);
    CHECK(r < 4.4);
    // 32 tokens x 7168 x 32768 int8: far below the Cube's ridge point, so the weight stream binds.
    for (const json& o : b["ops"])
        if (o["name"] == "mm") CHECK(o["bound"] == "memory");
    // The output is bf16: 32 x 32768 x 2 B written.
    CHECK(b["memory"]["hbm"]["write_bytes"].get<double>() + b["memory"]["l2"]["write_bytes"].get<double>() >= 32.0 * 32768 * 2);
}

TEST_CASE("llm ops: RoPE and MoEGate are Vector work whose time follows their bytes", "[llm][ops]") {
    TempDir tmp;
    const auto rope = [&](int tokens) {
        const json t = {{"x", {{"shape", {tokens, 128, 64}}, {"dtype", "bf16"}, {"input", true}}},
                        {"tab", {{"shape", {1, 64}}, {"dtype", "bf16"}, {"const", true}}}};
        return op_stats(tmp, "rope" + std::to_string(tokens), t,
                        json{{"name", "rope"}, {"op", "RoPE"}, {"inputs", {"x", "tab"}}, {"outputs", {"y"}}});
    };
    const double r = op_ns(rope(4096), "rope") / op_ns(rope(1024), "rope");
    CHECK(r > 3.0);
    CHECK(r < 4.4);
    const auto gate = [&](int tokens) {
        const json t = {{"scores", {{"shape", {tokens, 256}}, {"dtype", "fp32"}, {"input", true}}}};
        return op_stats(tmp, "gate" + std::to_string(tokens), t,
                        json{{"name", "gate"}, {"op", "MoEGate"}, {"inputs", {"scores"}}, {"outputs", {"ids"}},
                             {"attrs", {{"top_k", 8}, {"groups", 8}, {"topk_groups", 4}}}});
    };
    const json g16k = gate(16384), g4k = gate(4096);
    const double rg = op_ns(g16k, "gate") / op_ns(g4k, "gate");
    CHECK(rg > 3.0);
    CHECK(rg < 4.4);
    // Bad attributes: top_k beyond the kept groups' experts, a groups count that does not divide.
    const json t = {{"scores", {{"shape", {8, 256}}, {"dtype", "fp32"}, {"input", true}}}};
    json g = {{"kind", "graph"}, {"name", "bad"}, {"tensors", t},
              {"nodes", json::array({json{{"name", "gate"}, {"op", "MoEGate"}, {"inputs", {"scores"}}, {"outputs", {"ids"}},
                                          {"attrs", {{"top_k", 200}, {"groups", 8}, {"topk_groups", 4}}}}})},
              {"outputs", {"ids"}}};
    const Result bad = run_npusim(tmp, {"run", "--chip", kA2, "--workload", tmp.write("bad.json", g.dump())});
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Contains("attrs.top_k: must be in [1, 128]"));
}
