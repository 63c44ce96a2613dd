// Kind "llm" (docs/llm.md): the model's config -> one die's graph -> one
// compile shared by every die -> one system run, and the serving figures
// (llm.*) from it.
#pragma once
#include <string>

#include "cli/system_run.hpp"
#include "compiler/spmd.hpp"
#include "config/run_config.hpp"
#include "llm/hf_config.hpp"
#include "llm/llm_graph.hpp"

namespace npusim::cli {

struct LlmBuild {
    llm::ModelShape model;
    llm::LlmGraph graph;
};

// Reads workload.model and builds the graph; InputError for what the model
// or the chip cannot run.
LlmBuild build_llm(const RunConfig& cfg);
// Every die's tasks: the graph compiled once per distinct rank program.
compiler::SpmdCompile compile_llm(const RunConfig& cfg, const LlmBuild& b);
// `npusim run` of kind llm.
int run_llm(const RunConfig& cfg, SystemRunOptions opt);

}  // namespace npusim::cli
